package sso_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// A PATCH field of the wrong type, or null where the field cannot be cleared,
// is a 400 naming the field (a list element and a mapping claim by their
// dotted paths), each problem of one body reported together; nothing changes.
func TestPatchWrongTypesAndNullsNameTheField(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, nil)
	path := base + "/" + pr.ID
	before := fixture.Scan(t, w.env)
	for _, c := range []struct {
		body map[string]any
		want map[string]string // field: message
	}{
		{map[string]any{"name": nil}, map[string]string{"name": "must not be null"}},
		{map[string]any{"issuer": nil}, map[string]string{"issuer": "must not be null"}},
		{map[string]any{"clientId": nil}, map[string]string{"clientId": "must not be null"}},
		{map[string]any{"scopes": nil}, map[string]string{"scopes": "must not be null"}},
		{map[string]any{"attributeMapping": nil}, map[string]string{"attributeMapping": "must not be null"}},
		{map[string]any{"autoProvision": nil}, map[string]string{"autoProvision": "must not be null"}},
		{map[string]any{"allowedDomains": nil}, map[string]string{"allowedDomains": "must not be null"}},
		{map[string]any{"enforceSSO": nil}, map[string]string{"enforceSSO": "must not be null"}},
		{map[string]any{"name": 7}, map[string]string{"name": "must be a string"}},
		{map[string]any{"issuer": true}, map[string]string{"issuer": "must be a string"}},
		{map[string]any{"clientId": []string{"c"}}, map[string]string{"clientId": "must be a string"}},
		{map[string]any{"clientSecret": 5}, map[string]string{"clientSecret": "must be a string or null"}},
		{map[string]any{"defaultRoleId": map[string]any{}}, map[string]string{"defaultRoleId": "must be a string or null"}},
		{map[string]any{"scopes": "openid"}, map[string]string{"scopes": "must be an array"}},
		{map[string]any{"scopes": []any{"openid", 5}}, map[string]string{"scopes.1": "must be a string"}},
		{map[string]any{"allowedDomains": 5}, map[string]string{"allowedDomains": "must be a comma-separated string or an array of strings"}},
		{map[string]any{"allowedDomains": []any{"example.com", false}}, map[string]string{"allowedDomains.1": "must be a string"}},
		{map[string]any{"attributeMapping": "email"}, map[string]string{"attributeMapping": "must be an object"}},
		{map[string]any{"autoProvision": "yes"}, map[string]string{"autoProvision": "must be a boolean"}},
		{map[string]any{"enforceSSO": 1}, map[string]string{"enforceSSO": "must be a boolean"}},
		{map[string]any{"name": nil, "enforceSSO": "on", "scopes": []any{1}, "clientSecret": false},
			map[string]string{"name": "must not be null", "enforceSSO": "must be a boolean", "scopes.0": "must be a string",
				"clientSecret": "must be a string or null"}},
	} {
		body := fixture.ExpectError(t, w.call(t, http.MethodPatch, path, aAdmin, c.body), http.StatusBadRequest, "validation_failed")
		details, _ := body["details"].(map[string]any)
		fe, _ := details["fieldErrors"].(map[string]any)
		for field, msg := range c.want {
			got, _ := fe[field].([]any)
			if !slices.Contains(got, any(msg)) {
				t.Errorf("%v: %s: %v, want %q (all: %v)", c.body, field, fe[field], msg, fe)
			}
		}
	}
	// A field inside attributeMapping is checked by its dotted path.
	fixture.Invalid(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"attributeMapping": map[string]any{"email": 5}}),
		"attributeMapping.email")
	fixture.Invalid(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"attributeMapping": map[string]any{"emial": "x"}}),
		"attributeMapping.emial")
	if after := fixture.Scan(t, w.env); after != before {
		t.Fatal("a refused PATCH changed the table")
	}
	// The nullable fields take null.
	fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"clientSecret": nil, "defaultRoleId": nil}), http.StatusOK)
}
