package apikey_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestPatchRefusesNullAndWrongTypeByField: no PATCH field is nullable in the
// document, so null (not read as absent) and a value of the wrong type are
// each a 400 naming the field.
func TestPatchRefusesNullAndWrongTypeByField(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	k := w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "CI", "scopes": []string{"devices:read"}})
	for _, c := range []struct {
		field string
		value any
	}{
		{"name", nil}, {"name", 3},
		{"scopes", nil}, {"scopes", "devices:read"},
		{"rateLimit", nil}, {"rateLimit", "10"},
	} {
		res := w.Call(t, http.MethodPatch, keysURL+"/"+k.ID, fixture.AAdmin, map[string]any{c.field: c.value})
		fixture.Invalid(t, res, c.field)
	}
	got := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+k.ID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if got["name"] != "CI" || got["rateLimit"] != 1000.0 {
		t.Fatalf("key changed by refused patches: %v", got)
	}
}
