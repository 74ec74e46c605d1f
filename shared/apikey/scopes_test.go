package apikey_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// Issue 35: a typo scope is a 400 naming the field, the scope and the valid
// choices, not the ceiling's "Cannot grant scopes you do not hold".
func TestUnknownScopeIsNamedWithTheChoices(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	for _, url := range []string{keysURL, spURL} {
		res := w.Call(t, http.MethodPost, url, fixture.AAdmin,
			map[string]any{"orgId": w.A.ID, "name": "typo", "scopes": []string{"devices:read", "device:read"}})
		body := fixture.ExpectError(t, res, http.StatusBadRequest, "validation_failed", "scopes.1")
		msgs := body["details"].(map[string]any)["fieldErrors"].(map[string]any)["scopes.1"].([]any)
		msg, _ := msgs[0].(string)
		if !strings.HasPrefix(msg, `unknown scope "device:read"; valid scopes: *, devices:read, devices:write, `) {
			t.Fatalf("%s: message %q", url, msg)
		}
		res = w.Call(t, http.MethodPost, url, fixture.AAdmin,
			map[string]any{"orgId": w.A.ID, "name": "typo", "scopes": []string{"widgets:*"}})
		fixture.ExpectError(t, res, http.StatusBadRequest, "validation_failed", "scopes.0")
	}
	// A resource wildcard of the catalogue is a scope.
	w.APIKey(t, fixture.PXAdmin, map[string]any{"orgId": w.A.ID, "name": "all devices", "scopes": []string{"devices:*"}})
}

// Issue 35: a key's 403 names the scope it lacks.
func TestKeyRefusalNamesTheMissingScope(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	k := w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "scripts only", "scopes": []string{"scripts:read"}})
	body := fixture.Expect(t, w.WithKey(t, k.Key, ""), http.StatusForbidden).JSON(t)
	d, _ := body["details"].(map[string]any)
	if body["error"] != "API key does not have required permissions" || d["required"] != "devices:read" {
		t.Fatalf("body %v, want details.required devices:read", body)
	}
}
