package script_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestPatchRefusesNullAndWrongTypeByField: name, language and content are not
// nullable in the document, so null is a 400 naming the field (it used to be
// read as absent), as is a value of the wrong type on any field.
func TestPatchRefusesNullAndWrongTypeByField(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "scripts")
	sc := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Clear temp",
		"description": "removes temp files", "language": "powershell", "content": "Remove-Item $env:TEMP\\* -Recurse"}), http.StatusCreated).JSON(t)
	path := base + "/" + sc["id"].(string)
	for _, c := range []struct {
		field string
		value any
	}{
		{"name", nil}, {"name", 3},
		{"language", nil}, {"language", true},
		{"content", nil}, {"content", []string{"x"}},
		{"description", 7},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{c.field: c.value}), c.field)
	}
	got := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if got["name"] != "Clear temp" || got["language"] != "powershell" || got["description"] != "removes temp files" {
		t.Fatalf("script changed by refused patches: %v", got)
	}
}
