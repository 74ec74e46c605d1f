package pam_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestAPIKeysNeverDecide: a key reads with its scope, but never approves,
// revokes or writes rules (keys never satisfy MFA), whatever its scopes.
func TestAPIKeysNeverDecide(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "key")
	id, _ := submit(t, w, d, "CORP\\carol")
	var k struct{ Key string }
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "automation",
		"scopes": []string{"devices:read", "devices:execute", "devices:write"}}), http.StatusCreated).Decode(t, &k)
	call := func(method, path string, body any) fixture.Response {
		return fixture.Do(t, w.API, fixture.Request{Method: method, Path: path, APIKey: k.Key, Body: body})
	}
	fixture.Expect(t, call(http.MethodGet, base+"/elevation-requests", nil), http.StatusOK)
	fixture.ExpectError(t, call(http.MethodPost, base+"/elevation-requests/"+id+"/respond", map[string]any{"decision": "approve"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, call(http.MethodPost, base+"/rules", map[string]any{"name": "k", "verdict": "auto_approve", "matchUser": "CORP\\carol"}), http.StatusForbidden, "MFA_REQUIRED")
	if stored(t, w, w.A.ID, id).Status != "pending" {
		t.Fatal("a key decided")
	}
	// A read-only key is refused the preview (devices:write) by its scope.
	var ro struct{ Key string }
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "ro",
		"scopes": []string{"devices:read"}}), http.StatusCreated).Decode(t, &ro)
	res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base + "/rules/preview", APIKey: ro.Key, Body: map[string]any{"matchUser": "u"}})
	fixture.ExpectError(t, res, http.StatusForbidden, "forbidden")
}
