package script_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const base = "/api/v1/scripts"

func TestScriptLifecycleAndTenancy(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "scripts", "api-keys")
	sc := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Clear temp",
		"description": "removes temp files", "language": "powershell", "content": "Remove-Item $env:TEMP\\* -Recurse"}), http.StatusCreated).JSON(t)
	id := sc["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AViewer, nil), http.StatusOK)
	p := fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{"description": nil, "language": "cmd"}), http.StatusOK).JSON(t)
	if p["description"] != nil || p["language"] != "cmd" {
		t.Fatalf("patched %v", p)
	}
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/"+id, caller, nil))
		if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, caller, nil)); len(ids) != 0 {
			t.Fatalf("%s lists %v", caller, ids)
		}
	}
	// The technician runs scripts but does not write them; restricted admins do not change the library.
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.ATech, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.ARestricted, nil), http.StatusForbidden, "forbidden")
	// An API key with scripts:read lists; with devices:read only, it is refused.
	for scope, status := range map[string]int{"scripts:read": http.StatusOK, "devices:read": http.StatusForbidden} {
		k := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": scope, "scopes": []string{scope}}), http.StatusCreated).JSON(t)
		fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base, APIKey: k["key"].(string)}), status)
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.AAdmin, nil), http.StatusOK)
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil))
}

func TestScriptBadInput(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "scripts")
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "x", "language": "bash", "content": "ls"}), http.StatusCreated).JSON(t)["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, base, map[string]any{"language": "bash", "content": "ls"}, "name"},
		{http.MethodPost, base, map[string]any{"name": "x", "language": "ruby", "content": "ls"}, "language"},
		{http.MethodPost, base, map[string]any{"name": "x", "language": "bash"}, "content"},
		{http.MethodPost, base, map[string]any{"name": "x", "language": "bash", "content": strings.Repeat("a", 256*1024+1)}, "content"},
		{http.MethodPost, base, map[string]any{"name": "x", "language": "bash", "content": "ls", "description": strings.Repeat("d", 2001)}, "description"},
		{http.MethodPost, base, map[string]any{"name": "x", "language": "bash", "content": "ls", "runAs": "root"}, "runAs"},
		{http.MethodPatch, base + "/" + id, map[string]any{"content": ""}, "content"},
		{http.MethodPatch, base + "/" + id, map[string]any{"language": 3}, "language"},
		{http.MethodPatch, base + "/" + id, map[string]any{"description": 3, "language": "ruby"}, "description"},
		{http.MethodGet, base + "?orgId=zz", nil, "orgId"},
	} {
		fixture.Invalid(t, w.Call(t, c.method, c.path, fixture.AAdmin, c.body), c.field)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")
	// A partner caller names the organization; one out of its reach is 404.
	body := map[string]any{"name": "x", "language": "bash", "content": "ls"}
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, body), "orgId")
	body["orgId"] = "not-a-uuid"
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, body), "orgId")
	body["orgId"] = w.A.ID
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.PYAdmin, body))
}
