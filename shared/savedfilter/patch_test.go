package savedfilter_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestPatchRefusesNullAndWrongTypeByField: name and conditions are not
// nullable in the document, so null is a 400 naming the field, as is a value
// of the wrong type; description is nullable (null clears it, a number is
// refused).
func TestPatchRefusesNullAndWrongTypeByField(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	created := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Windows fleet",
		"description": "all windows", "conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)
	path := base + "/" + created["id"].(string)
	for _, c := range []struct {
		field string
		value any
	}{
		{"name", nil}, {"name", 3},
		{"conditions", nil}, {"conditions", "osType = windows"},
		{"description", 7}, {"description", []string{"x"}},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{c.field: c.value}), c.field)
	}
	got := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if got["name"] != "Windows fleet" || got["description"] != "all windows" {
		t.Fatalf("filter changed by refused patches: %v", got)
	}
	cleared := fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"description": nil}), http.StatusOK).JSON(t)
	if cleared["description"] != nil || cleared["name"] != "Windows fleet" {
		t.Fatalf("description null: %v", cleared)
	}
}
