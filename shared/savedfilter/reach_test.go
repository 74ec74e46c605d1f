package savedfilter_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
)

// previewOf decodes a preview answer.
type previewOf struct {
	Data struct {
		TotalCount  int    `json:"totalCount"`
		EvaluatedAt string `json:"evaluatedAt"`
		Devices     []struct {
			ID, Hostname, OSType, Status string
			DisplayName, LastSeenAt      *string
		} `json:"devices"`
	} `json:"data"`
}

func preview(t *testing.T, w *fixture.World, caller, path string, body any) previewOf {
	t.Helper()
	var p previewOf
	fixture.Expect(t, w.Call(t, http.MethodPost, path, caller, body), http.StatusOK).Decode(t, &p)
	return p
}

// A preview counts every device the caller can see, across all its
// organizations and within its site or device-group restriction, whichever
// organization the saved filter belongs to.
func TestPreviewReachAndRestrictions(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a1 := seed(t, w.Env, w.A.ID, w.PX.ID, w.A1.ID, "alpha", 2, "online")
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A2.ID, "avocado", 1, "online")
	seed(t, w.Env, w.B.ID, w.PX.ID, "", "bravo", 3, "online")
	seed(t, w.Env, w.C.ID, w.PY.ID, w.C1.ID, "charlie", 4, "online")
	// One device of site a1 joins group gA.
	d, err := device.Store{St: w.Env.Store}.Get(context.Background(), w.A.ID, a1[0])
	if err != nil {
		t.Fatal(err)
	}
	d.GroupIDs, d.GroupID = []string{w.GA}, w.GA
	if err := w.Env.Store.Do(context.Background(), store.Put(d)); err != nil {
		t.Fatal(err)
	}
	all := map[string]any{"conditions": group(cond("tags", "hasAny", []string{"prod"})), "limit": 100}
	for caller, want := range map[string]int{
		fixture.AGroupOnly:  1,
		fixture.ARestricted: 2,
		fixture.AViewer:     3,
		fixture.PXSelectedB: 3,
		fixture.PXAdmin:     6,
		fixture.PYAdmin:     4,
		fixture.SysAdmin:    10,
	} {
		if got := preview(t, w, caller, base+"/preview", all).Data.TotalCount; got != want {
			t.Errorf("%s: totalCount %d, want %d", caller, got, want)
		}
	}
	// The devices answered: the first by hostname, with the preview fields.
	p := preview(t, w, fixture.AAdmin, base+"/preview", map[string]any{"conditions": all["conditions"], "limit": 2})
	if p.Data.TotalCount != 3 || len(p.Data.Devices) != 2 || p.Data.Devices[0].Hostname != "alpha-0" || p.Data.Devices[1].Hostname != "alpha-1" {
		t.Fatalf("preview %+v", p.Data)
	}
	if dv := p.Data.Devices[0]; dv.ID != a1[0] || dv.OSType != "windows" || dv.Status != "online" || dv.LastSeenAt == nil ||
		p.Data.EvaluatedAt != "2026-11-01T09:00:00.000Z" {
		t.Fatalf("preview device %+v at %s", dv, p.Data.EvaluatedAt)
	}
	// A's saved filter previews over everything the caller reaches: partner X
	// counts A and B; a restricted caller of A only its own devices.
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "prod",
		"conditions": all["conditions"]}), http.StatusCreated).JSON(t)["id"].(string)
	for caller, want := range map[string]int{fixture.AAdmin: 3, fixture.PXAdmin: 6, fixture.ARestricted: 2, fixture.AGroupOnly: 1, fixture.SysAdmin: 10} {
		if got := preview(t, w, caller, base+"/"+id+"/preview?limit=100", nil).Data.TotalCount; got != want {
			t.Errorf("saved preview as %s: totalCount %d, want %d", caller, got, want)
		}
	}
	// Another tenant's filter is 404 on every route that names it.
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin, fixture.PXSelectedB} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+id+"/preview", caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+id, caller, map[string]any{"name": "mine"}))
		fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/"+id, caller, nil))
		if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, caller, nil)); slices.Contains(ids, id) {
			t.Fatalf("%s lists A's filter", caller)
		}
	}
	if f := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).JSON(t); f["name"] != "prod" {
		t.Fatalf("attacks changed the filter: %v", f)
	}
}

// Where a create lands, per scope: the organization's own (orgId ignored);
// a partner's named organization, or its only one; a system caller's named one.
func TestCreateOrganizationPerScope(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	ok := group(cond("osType", "equals", "windows"))
	create := func(caller string, body map[string]any) fixture.Response {
		body["conditions"] = ok
		return w.Call(t, http.MethodPost, base, caller, body)
	}
	orgOf := func(res fixture.Response) string {
		t.Helper()
		return fixture.Expect(t, res, http.StatusCreated).JSON(t)["orgId"].(string)
	}
	if got := orgOf(create(fixture.AAdmin, map[string]any{"name": "own", "orgId": w.B.ID})); got != w.A.ID {
		t.Fatalf("organization caller saved into %s", got)
	}
	if got := orgOf(create(fixture.PXAdmin, map[string]any{"name": "named", "orgId": w.B.ID})); got != w.B.ID {
		t.Fatalf("partner saved into %s", got)
	}
	if got := orgOf(create(fixture.PXSelectedB, map[string]any{"name": "only"})); got != w.B.ID {
		t.Fatalf("partner with one organization saved into %s", got)
	}
	if got := orgOf(create(fixture.SysAdmin, map[string]any{"name": "sys", "orgId": w.C.ID})); got != w.C.ID {
		t.Fatalf("system saved into %s", got)
	}
	res := create(fixture.PXAdmin, map[string]any{"name": "nowhere"})
	if body := fixture.ExpectError(t, res, http.StatusBadRequest, "validation_failed", "orgId"); body["error"] != "orgId is required for partner scope" {
		t.Fatalf("partner without orgId: %v", body)
	}
	// A system caller has no organization context to infer: the keys
	// document's 403 `Organization context required`, nothing stored.
	before := fixture.Scan(t, w.Env)
	res = create(fixture.SysAdmin, map[string]any{"name": "nowhere"})
	if body := fixture.ExpectError(t, res, http.StatusForbidden, "forbidden"); body["error"] != "Organization context required" {
		t.Fatalf("system without orgId: %v", body)
	}
	if strings.Contains(fixture.Scan(t, w.Env), "nowhere") && !strings.Contains(before, "nowhere") {
		t.Fatal("the refused create stored a filter")
	}
	fixture.NotFound(t, create(fixture.PXSelectedB, map[string]any{"name": "x", "orgId": w.A.ID}))
	fixture.NotFound(t, create(fixture.PYAdmin, map[string]any{"name": "x", "orgId": w.A.ID}))
	fixture.NotFound(t, create(fixture.PXAdmin, map[string]any{"name": "x", "orgId": "7b0b5b6e-5a3a-4c1e-8f00-000000000000"}))
	// Lower roles and restricted callers do not write.
	fixture.ExpectError(t, create(fixture.AViewer, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, create(fixture.ARestricted, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, create(fixture.AGroupOnly, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, create(fixture.ANoMFA, map[string]any{"name": "x"}), http.StatusForbidden, "MFA_REQUIRED")
	// Who lists what.
	for caller, want := range map[string]int{fixture.AViewer: 1, fixture.BAdmin: 2, fixture.PXAdmin: 3, fixture.PXSelectedB: 2, fixture.PYAdmin: 1, fixture.SysAdmin: 4} {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base, caller, nil), http.StatusOK)
		var l struct {
			Data  []map[string]any
			Total int
		}
		res.Decode(t, &l)
		if len(l.Data) != want || l.Total != want {
			t.Errorf("%s lists %d (total %d), want %d", caller, len(l.Data), l.Total, want)
		}
	}
}

// The list is newest first, search matches name or description without
// regard to case, and total counts what matched.
func TestListNewestFirstAndSearch(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var ids []string
	for _, f := range []map[string]any{
		{"name": "Servers", "description": "every SERVER of the fleet"},
		{"name": "Laptops"},
		{"name": "Stale", "description": "not seen for a week"},
	} {
		f["conditions"] = group(cond("osType", "equals", "windows"))
		ids = append(ids, fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, f), http.StatusCreated).JSON(t)["id"].(string))
		w.Env.Clock.Advance(time.Second)
	}
	order := func(q string) ([]string, int) {
		t.Helper()
		var l struct {
			Data  []struct{ ID string }
			Total int
		}
		fixture.Expect(t, w.Call(t, http.MethodGet, base+q, fixture.AViewer, nil), http.StatusOK).Decode(t, &l)
		var out []string
		for _, d := range l.Data {
			out = append(out, d.ID)
		}
		return out, l.Total
	}
	if got, total := order(""); strings.Join(got, ",") != strings.Join([]string{ids[2], ids[1], ids[0]}, ",") || total != 3 {
		t.Fatalf("list order %v (total %d), want newest first %v", got, total, ids)
	}
	for q, want := range map[string][]string{
		"?search=server":    {ids[0]},
		"?search=S":         {ids[2], ids[1], ids[0]},
		"?search=WEEK":      {ids[2]},
		"?search=%25":       nil, // a literal %
		"?search=":          {ids[2], ids[1], ids[0]},
		"?search=+laptops+": {ids[1]},
	} {
		got, total := order(q)
		if strings.Join(got, ",") != strings.Join(want, ",") || total != len(want) {
			t.Errorf("%s: %v (total %d), want %v", q, got, total, want)
		}
	}
}

// Every change and every preview is audited in the caller's organization;
// an update names the fields whose value changed.
func TestAuditRecords(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	seed(t, w.Env, w.A.ID, w.PX.ID, w.A1.ID, "aud", 2, "online")
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "audited", "description": "d",
		"conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{"name": "audited", "description": nil,
		"conditions": group(cond("osType", "equals", "linux"))}), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/preview", fixture.AViewer, map[string]any{"conditions": group(cond("osType", "equals", "windows"))}), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/preview", fixture.AViewer, nil), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.AAdmin, nil), http.StatusOK)
	recs, err := audit.List(context.Background(), w.Env.Store, audit.Tenant(w.A.ID, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]audit.Record{}
	for _, r := range recs {
		if strings.HasPrefix(r.Action, "filter.") {
			got[r.Action] = r
		}
	}
	for _, action := range []string{"filter.create", "filter.update", "filter.delete", "filter.preview", "filter.saved.preview"} {
		r, ok := got[action]
		if !ok {
			t.Fatalf("no %s record among %v", action, got)
		}
		if r.Email == "" || r.OrgID != w.A.ID {
			t.Fatalf("%s record %+v", action, r)
		}
		if action != "filter.preview" && r.ResourceID != id {
			t.Fatalf("%s record names %q", action, r.ResourceID)
		}
	}
	changed, _ := got["filter.update"].Details["changed"].([]any)
	if len(changed) != 2 || changed[0] != "description" || changed[1] != "conditions" {
		t.Fatalf("filter.update changed %v, want [description conditions] (the name was sent unchanged)", changed)
	}
	if n := got["filter.preview"].Details["totalCount"]; n != 2.0 && n != 2 {
		t.Fatalf("preview record %v", got["filter.preview"].Details)
	}
}

// Of concurrent deletes of one filter exactly one succeeds; the others find
// it gone (404) or lose the compare-and-swap (409).
func TestConcurrentDeletesHaveOneWinner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "race",
		"conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)["id"].(string)
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodDelete, Path: base + "/" + id, Token: w.Tokens[fixture.AAdmin]})
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[http.StatusOK] != 1 || codes[http.StatusNotFound]+codes[http.StatusConflict] != 19 {
		t.Fatalf("statuses %v, want one 200 and 19 of 404 or 409", codes)
	}
}

// An invalid filter is 400 `Invalid filter` on every route that takes
// conditions, naming each bad path, and nothing is saved or changed.
func TestInvalidFilterOnEveryRoute(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "keep",
		"conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)["id"].(string)
	bad := map[string]any{"operator": "AND", "conditions": []any{
		cond("nope", "equals", "x"),
		cond("hostname", "between", map[string]any{"from": "a", "to": "b"}),
		map[string]any{"operator": "OR", "conditions": []any{}},
		map[string]any{"operator": "OR", "conditions": []any{cond("status", "equals", "sleeping"), cond("tags", "hasAny", "prod")}},
		cond("lastSeenAt", "withinLast", map[string]any{"amount": 3, "unit": "fortnights"}),
		cond("hostname", "matches", "("),
	}}
	want := []string{"conditions.0.field", "conditions.1.operator", "conditions.2.conditions",
		"conditions.3.conditions.0.value", "conditions.3.conditions.1.value", "conditions.4.value", "conditions.5.value"}
	before := strip(fixture.Scan(t, w.Env))
	for _, c := range []struct {
		method, path string
		body         map[string]any
	}{
		{http.MethodPost, base, map[string]any{"name": "bad", "conditions": bad}},
		{http.MethodPatch, base + "/" + id, map[string]any{"conditions": bad}},
		{http.MethodPost, base + "/preview", map[string]any{"conditions": bad}},
	} {
		res := w.Call(t, c.method, c.path, fixture.AAdmin, c.body)
		body := fixture.ExpectError(t, res, http.StatusBadRequest, "validation_failed", want...)
		if body["error"] != "Invalid filter" {
			t.Fatalf("%s %s: %v", c.method, c.path, body)
		}
		if fe := body["details"].(map[string]any)["fieldErrors"].(map[string]any); len(fe) != len(want) {
			t.Fatalf("%s %s: field errors %v, want exactly %v", c.method, c.path, fe, want)
		}
	}
	if strip(fixture.Scan(t, w.Env)) != before {
		t.Fatal("an invalid filter changed the table")
	}
}
