package savedfilter_test

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const base = "/api/v1/filters"

func newWorld(t *testing.T) *fixture.World {
	t.Helper()
	return fixture.NewWorld(t, "filters", "api-keys")
}

// seed puts devices directly (test setup, BatchWriteItem 25 at a time, so the
// benchmark's 10,000 devices take seconds): n of orgID in siteID ("" for
// none), hostnames prefix-i.
func seed(t testing.TB, env *testenv.Env, orgID, partnerID, siteID, prefix string, n int, status string) []string {
	t.Helper()
	var ids []string
	rows := env.Seeder(t)
	for i := range n {
		id := fmt.Sprintf("%08x-%04x-4000-8000-%012x", hash(prefix), i%0x10000, i)
		var site *string
		if siteID != "" {
			site = &siteID
		}
		seen := "2026-11-01T08:59:00.000Z"
		d := device.Device{Keys: device.Keys(orgID, id), ID: id, OrgID: orgID, PartnerID: partnerID, SiteID: site,
			GroupIDs: []string{}, Hostname: fmt.Sprintf("%s-%d", prefix, i), OSType: "windows", OSVersion: "11",
			Architecture: "x64", AgentVersion: "1.0.0", Status: status, DeviceRole: "workstation", EnrolledAt: "2026-10-01T09:00:00.000Z",
			LastSeenAt: &seen, Tags: []string{"prod"}, CustomFields: map[string]string{}, UpdatedAt: "2026-11-01T09:00:00.000Z"}
		item, err := store.Marshal(d)
		if err != nil {
			t.Fatal(err)
		}
		rows.Put(item)
		ids = append(ids, id)
	}
	rows.Flush()
	return ids
}

func hash(s string) uint32 {
	var h uint32 = 2166136261
	for _, c := range []byte(s) {
		h = (h ^ uint32(c)) * 16777619
	}
	return h
}

func group(conds ...map[string]any) map[string]any {
	cs := make([]any, len(conds))
	for i, c := range conds {
		cs[i] = c
	}
	return map[string]any{"operator": "AND", "conditions": cs}
}

func cond(field, op string, value any) map[string]any {
	c := map[string]any{"field": field, "operator": op}
	if value != nil {
		c["value"] = value
	}
	return c
}

func TestSavedFilterLifecycle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Windows fleet",
		"description": "all windows", "conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated)
	f := res.JSON(t)
	id, _ := f["id"].(string)
	if f["orgId"] != w.A.ID || f["description"] != "all windows" {
		t.Fatalf("created %v", f)
	}
	got := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?search=WINDOWS", fixture.AViewer, nil))
	if len(got) != 1 || got[0] != id {
		t.Fatalf("search: %v", got)
	}
	if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?search=linux", fixture.AAdmin, nil)); len(ids) != 0 {
		t.Fatalf("search linux: %v", ids)
	}
	p := fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{"description": nil}), http.StatusOK).JSON(t)
	if p["description"] != nil {
		t.Fatalf("description not cleared: %v", p)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")
	del := fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if del["id"] != id || del["name"] != "Windows fleet" {
		t.Fatalf("delete answered %v", del)
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil))
}

func TestInvalidFilterNamesEachPath(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	res := w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "bad", "conditions": map[string]any{
		"operator": "AND", "conditions": []any{cond("nope", "equals", "x"), cond("hostname", "between", "x"),
			map[string]any{"operator": "OR", "conditions": []any{}}}}})
	body := fixture.ExpectError(t, res, http.StatusBadRequest, "validation_failed")
	if body["error"] != "Invalid filter" {
		t.Fatalf("error %v", body["error"])
	}
	fe, _ := body["details"].(map[string]any)["fieldErrors"].(map[string]any)
	if len(fe) < 3 {
		t.Fatalf("field errors %v: want one per bad path", fe)
	}
	for path := range fe {
		if !strings.HasPrefix(path, "conditions.") {
			t.Fatalf("path %q", path)
		}
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/preview", fixture.AAdmin, map[string]any{
		"conditions": group(cond("hostname", "matches", "("))}), http.StatusBadRequest, "validation_failed")
}

func TestPreviewTenancy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A1.ID, "a1", 3, "online")
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A2.ID, "a2", 2, "offline")
	seed(t, w.Env, w.B.ID, w.PX.ID, "", "b", 4, "online")
	seed(t, w.Env, w.C.ID, w.PY.ID, w.C1.ID, "c", 5, "online")
	all := map[string]any{"conditions": group(cond("osType", "equals", "windows")), "limit": 100}
	counts := map[string]int{
		fixture.AAdmin:      5,
		fixture.ARestricted: 3, // only site a1
		fixture.BAdmin:      4,
		fixture.PXAdmin:     9, // A and B
		fixture.PXSelectedB: 4,
		fixture.PYAdmin:     5,
		fixture.SysAdmin:    14,
	}
	for caller, want := range counts {
		res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/preview", caller, all), http.StatusOK)
		var p struct {
			Data struct {
				TotalCount int
				Devices    []struct{ ID, Hostname string }
			}
		}
		res.Decode(t, &p)
		if p.Data.TotalCount != want || len(p.Data.Devices) != want {
			t.Errorf("%s: totalCount %d (%d devices), want %d", caller, p.Data.TotalCount, len(p.Data.Devices), want)
		}
	}
	// limit trims the list, not the count; offline devices filtered by status.
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/preview", fixture.AAdmin, map[string]any{
		"conditions": group(cond("status", "equals", "offline")), "limit": 1}), http.StatusOK).JSON(t)
	data := res["data"].(map[string]any)
	if data["totalCount"] != 2.0 || len(data["devices"].([]any)) != 1 {
		t.Fatalf("offline preview %v", data)
	}
	// A saved filter of A previews for A only, and is 404 to other tenants.
	f := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "all",
		"conditions": group(cond("hostname", "startsWith", "A"))}), http.StatusCreated).JSON(t)
	id := f["id"].(string)
	sp := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/preview?limit=2", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if d := sp["data"].(map[string]any); d["totalCount"] != 5.0 || len(d["devices"].([]any)) != 2 {
		t.Fatalf("saved preview %v", d)
	}
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin} {
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+id+"/preview", caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+id, caller, map[string]any{"name": "x"}))
	}
	// Partner callers name the organization (they reach two).
	r := w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"name": "p", "conditions": group(cond("osType", "equals", "windows"))})
	if fixture.Expect(t, r, http.StatusBadRequest); r.JSON(t)["error"] != "orgId is required for partner scope" {
		t.Fatalf("partner without orgId: %s", r.Body)
	}
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.PYAdmin, map[string]any{"orgId": w.A.ID, "name": "p", "conditions": group(cond("osType", "equals", "windows"))}))
	// Restricted callers preview but do not change organization-wide filters.
	fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.ARestricted, nil), http.StatusForbidden, "forbidden")
}

func TestAPIKeysReadAndPreviewButDoNotWrite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A1.ID, "k", 2, "online")
	res := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "ci", "scopes": []string{"devices:read"}}), http.StatusCreated)
	key, _ := res.JSON(t)["key"].(string)
	p := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base + "/preview", APIKey: key,
		Body: map[string]any{"conditions": group(cond("tags", "hasAny", []string{"prod"}))}}), http.StatusOK)
	if p.JSON(t)["data"].(map[string]any)["totalCount"] != 2.0 {
		t.Fatalf("key preview %s", p.Body)
	}
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base, APIKey: key}), http.StatusOK)
	// Writes accept keys only in principle: a key never satisfies MFA, so even
	// a devices:write key is refused, and nothing is saved.
	wkey := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "writer",
		"scopes": []string{"devices:read", "devices:write"}}), http.StatusCreated).JSON(t)["key"].(string)
	for _, k := range []string{key, wkey} {
		res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base, APIKey: k,
			Body: map[string]any{"name": "x", "conditions": group(cond("osType", "equals", "windows"))}})
		fixture.ExpectError(t, res, http.StatusForbidden, "MFA_REQUIRED")
	}
	if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.AAdmin, nil)); len(ids) != 0 {
		t.Fatalf("a key saved filters %v", ids)
	}
	// A key without devices:read is refused the reads.
	other := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "scripts",
		"scopes": []string{"scripts:read"}}), http.StatusCreated).JSON(t)["key"].(string)
	res = fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base + "/preview", APIKey: other,
		Body: map[string]any{"conditions": group(cond("tags", "hasAny", []string{"prod"}))}})
	if body := fixture.ExpectError(t, res, http.StatusForbidden, "forbidden"); body["error"] != "API key does not have required permissions" {
		t.Fatalf("scope refusal %v", body)
	}
}

func TestBadInputNamesTheFieldAndChangesNothing(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	f := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "keep",
		"conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)
	id := f["id"].(string)
	before := fixture.Scan(t, w.Env)
	ok := group(cond("osType", "equals", "windows"))
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, base, map[string]any{"conditions": ok}, "name"},
		{http.MethodPost, base, map[string]any{"name": strings.Repeat("n", 201), "conditions": ok}, "name"},
		{http.MethodPost, base, map[string]any{"name": "x"}, "conditions"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": ok, "description": strings.Repeat("d", 1001)}, "description"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": ok, "shared": true}, "shared"},
		{http.MethodPost, base, map[string]any{"name": 3, "conditions": ok}, "name"},
		{http.MethodPatch, base + "/" + id, map[string]any{"description": 5}, "description"},
		{http.MethodPatch, base + "/" + id, map[string]any{"conditions": map[string]any{"operator": "XOR", "conditions": []any{cond("osType", "equals", "windows")}}}, "conditions.operator"},
		{http.MethodPatch, base + "/bad-id", map[string]any{"name": "x"}, "id"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "limit": 0}, "limit"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "limit": 101}, "limit"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "limit": "ten"}, "limit"},
		{http.MethodPost, base + "/" + id + "/preview?limit=0", nil, "limit"},
		{http.MethodPost, base + "/" + id + "/preview?limit=x", nil, "limit"},
		// Every route, wrong types, unknown and duplicate fields, bad ids.
		{http.MethodGet, base + "?search=" + strings.Repeat("s", 201), nil, "search"},
		{http.MethodGet, base + "/not-a-uuid", nil, "id"},
		{http.MethodDelete, base + "/not-a-uuid", nil, "id"},
		{http.MethodPost, base + "/not-a-uuid/preview", nil, "id"},
		{http.MethodPost, base, map[string]any{"name": "   ", "conditions": ok}, "name"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": "osType = windows"}, "conditions"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": []any{ok}}, "conditions"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": map[string]any{"operator": "AND", "conditions": []any{}}}, "conditions.conditions"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": ok, "description": 7}, "description"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": ok, "orgId": 7}, "orgId"},
		{http.MethodPost, base, map[string]any{"name": "x", "conditions": ok, "Name": "y"}, "Name"},
		{http.MethodPost, base, `{"name": "x", "name": "y", "conditions": {"operator": "AND", "conditions": [{"field": "osType", "operator": "equals", "value": "windows"}]}}`, "name"},
		{http.MethodPost, base, `{"name": "x"`, "body"},
		{http.MethodPost, base, `[]`, "body"},
		{http.MethodPatch, base + "/" + id, map[string]any{"name": nil}, "name"},
		{http.MethodPatch, base + "/" + id, map[string]any{"name": ""}, "name"},
		{http.MethodPatch, base + "/" + id, map[string]any{"name": []string{"x"}}, "name"},
		{http.MethodPatch, base + "/" + id, map[string]any{"description": strings.Repeat("d", 1001)}, "description"},
		{http.MethodPatch, base + "/" + id, map[string]any{"conditions": nil}, "conditions"},
		{http.MethodPatch, base + "/" + id, map[string]any{"conditions": 5}, "conditions"},
		{http.MethodPatch, base + "/" + id, map[string]any{"orgId": "7b0b5b6e-5a3a-4c1e-8f00-000000000000"}, "orgId"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "limit": 10.5}, "limit"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "orgId": "x"}, "orgId"},
		{http.MethodPost, base + "/preview", map[string]any{"limit": 5}, "conditions"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": ok, "limit": 1e9}, "limit"},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": map[string]any{"operator": "AND", "conditions": []any{map[string]any{"field": "osType", "operator": "equals", "value": "windows", "extra": 1}}}}, "conditions.0.extra"},
		{http.MethodPost, base + "/" + id + "/preview?limit=101", nil, "limit"},
		{http.MethodPost, base + "/" + id + "/preview?limit=-1", nil, "limit"},
		{http.MethodPost, base + "/" + id + "/preview", map[string]any{"limit": 5}, "limit"},
	} {
		fixture.Invalid(t, w.Call(t, c.method, c.path, fixture.AAdmin, c.body), c.field)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")
	if got := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).JSON(t); got["name"] != "keep" || got["description"] != nil {
		t.Fatalf("bad input changed the filter: %v", got)
	}
	after := fixture.Scan(t, w.Env)
	if strip(after) != strip(before) {
		t.Fatal("bad input changed the table")
	}
}

// strip drops audit records (previews are audited) and rate-limit rows.
func strip(dump string) string {
	var keep []string
	for _, l := range strings.Split(dump, "\n") {
		if !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestCallBudgets(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A1.ID, "bud", 3, "online")
	body := map[string]any{"conditions": group(cond("osType", "equals", "windows"))}
	exactly := func(name string, res fixture.Response, n int) {
		t.Helper()
		if res.Status >= 300 || res.DBCalls != n {
			t.Fatalf("%s: status %d, %d DynamoDB calls, want %d", name, res.Status, res.DBCalls, n)
		}
	}
	// Authentication 1 (system roles), the organization's devices 1, the audit record 1.
	exactly("preview (org)", w.Call(t, http.MethodPost, base+"/preview", fixture.AAdmin, body), 3)
	// + the partner's organization list and a Query per organization (A, B).
	exactly("preview (partner, 2 orgs)", w.Call(t, http.MethodPost, base+"/preview", fixture.PXAdmin, body), 5)
	// A software condition reads the software chunks too.
	exactly("preview with software (org)", w.Call(t, http.MethodPost, base+"/preview", fixture.AAdmin, map[string]any{
		"conditions": group(cond("software.installed", "contains", "chrome"))}), 4)
	f := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "n", "conditions": body["conditions"]}), http.StatusCreated).JSON(t)
	exactly("saved preview (org)", w.Call(t, http.MethodPost, base+"/"+f["id"].(string)+"/preview", fixture.AAdmin, nil), 4)
	// Authentication 1, the list index (GSI4) 1, the filters (BatchGetItem) 1:
	// one more than the organization's prefix query of before, which read
	// every filter of every organization; a partner's list is now 4 whatever
	// its organizations (was 2 + one Query per organization): its
	// organizations, so rows of deleted ones stay out, then index and filters.
	exactly("list (org)", w.Call(t, http.MethodGet, base, fixture.AAdmin, nil), 3)
	exactly("list (partner)", w.Call(t, http.MethodGet, base, fixture.PXAdmin, nil), 4)
}
