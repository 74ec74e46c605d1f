package device_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

const base = "/api/v1/devices"

func TestListAndGetRespectTenancyAndRestrictions(t *testing.T) {
	w := newWorld(t)
	a1, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "alpha-site1")
	a2, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A2.ID, "alpha-site2")
	aNone, _ := w.Device(t, fixture.AAdmin, w.A.ID, "", "alpha-nosite")
	bDev, _ := w.Device(t, fixture.BAdmin, w.B.ID, "", "bravo")
	cDev, _ := w.Device(t, fixture.CAdmin, w.C.ID, w.C1.ID, "charlie")

	res := fixture.Expect(t, w.Call(t, http.MethodGet, base, fixture.AAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 3)
	if got := fixture.IDs(t, res); strings.Join(got, ",") != strings.Join(fixture.Sorted(a1, a2, aNone), ",") {
		t.Fatalf("org A admin sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?siteId="+w.A1.ID, fixture.AAdmin, nil)); len(got) != 1 || got[0] != a1 {
		t.Fatalf("site filter %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.ARestricted, nil)); len(got) != 1 || got[0] != a1 {
		t.Fatalf("site-restricted sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.PXAdmin, nil)); len(got) != 4 {
		t.Fatalf("partner X sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.PXSelectedB, nil)); len(got) != 1 || got[0] != bDev {
		t.Fatalf("partner X, selected B, sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.SysAdmin, nil)); len(got) != 5 {
		t.Fatalf("system sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.AGroupOnly, nil)); len(got) != 0 {
		t.Fatalf("group-restricted sees %v before any device joins its group", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.AViewer, nil)); len(got) != 3 {
		t.Fatalf("viewer sees %v", got)
	}
	// Another tenant by id: 404 in the path and the query.
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+cDev, fixture.PXAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+bDev, fixture.AAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+a2, fixture.ARestricted, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"?orgId="+w.C.ID, fixture.PXAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"?orgId="+w.B.ID, fixture.AAdmin, nil))
	got := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+cDev, fixture.PYAdmin, nil), http.StatusOK).JSON(t)
	for _, f := range []string{"id", "orgId", "siteId", "groupIds", "hostname", "displayName", "osType", "osVersion", "osBuild", "architecture",
		"agentVersion", "status", "deviceRole", "lastUser", "isHeadless", "uptimeSeconds", "enrolledAt", "lastSeenAt", "tags", "customFields",
		"hardware", "network", "metrics", "software"} {
		if _, ok := got[f]; !ok {
			t.Fatalf("device lacks %s: %v", f, got)
		}
	}
	for q, field := range map[string]string{"orgId=x": "orgId", "siteId=x": "siteId", "limit=500": "limit", "page=-1": "page"} {
		fixture.Invalid(t, w.Call(t, http.MethodGet, base+"?"+q, fixture.AAdmin, nil), field)
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/not-an-id", fixture.AAdmin, nil), "id")
	fixture.Invalid(t, w.Call(t, http.MethodPatch, base+"/not-an-id", fixture.AAdmin, map[string]any{"tags": []string{"x"}}), "id")
	fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/not-an-id/decommission", fixture.AAdmin, nil), "id")
}

func TestLowerRolesAndNoSession(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "d")
	fixture.ExpectError(t, w.Call(t, http.MethodGet, base, "", nil), http.StatusUnauthorized, "unauthorized")
	// An agent token is not a user session.
	fixture.ExpectError(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base, Token: tok}), http.StatusUnauthorized, "unauthorized")
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, fixture.AViewer, map[string]any{"tags": []string{"x"}}), http.StatusForbidden, "forbidden")
}

func TestPatch(t *testing.T) {
	w := newWorld(t)
	id, _ := w.Device(t, fixture.AAdmin, w.A.ID, "", "patch-me")
	path := base + "/" + id
	res := fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.ATech, map[string]any{
		"displayName": "Reception PC", "tags": []string{"front", "front", "desk"}, "customFields": map[string]string{"asset_tag": "A-17"}, "groupId": w.GA}), http.StatusOK)
	d := res.JSON(t)
	if d["displayName"] != "Reception PC" || len(d["tags"].([]any)) != 2 || d["customFields"].(map[string]any)["asset_tag"] != "A-17" ||
		len(d["groupIds"].([]any)) != 1 || d["groupIds"].([]any)[0] != w.GA {
		t.Fatalf("patched %v", d)
	}
	g, err := tenant.Store{St: w.Env.Store}.Group(context.Background(), w.A.ID, w.GA)
	if err != nil || g.DeviceCount != 1 {
		t.Fatalf("group count %+v %v", g, err)
	}
	// The group-restricted admin now sees it, and may not take it out of its group.
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.AGroupOnly, nil)); len(got) != 1 {
		t.Fatalf("group-restricted sees %v", got)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, path, fixture.AGroupOnly, map[string]any{"groupId": nil}), http.StatusForbidden, "forbidden")
	// Clearing the group and the name.
	d = fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"groupId": nil, "displayName": nil}), http.StatusOK).JSON(t)
	if d["displayName"] != nil || len(d["groupIds"].([]any)) != 0 {
		t.Fatalf("cleared %v", d)
	}
	if g, _ := (tenant.Store{St: w.Env.Store}).Group(context.Background(), w.A.ID, w.GA); g.DeviceCount != 0 {
		t.Fatalf("group count after leaving %d", g.DeviceCount)
	}
	before := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AAdmin, nil), http.StatusOK).Body
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{"displayName": ""}, "displayName"},
		{map[string]any{"displayName": strings.Repeat("n", 256)}, "displayName"},
		{map[string]any{"displayName": 5}, "displayName"},
		{map[string]any{"displayName": "a\nb"}, "displayName"},
		{map[string]any{"tags": "one"}, "tags"},
		{map[string]any{"tags": nil}, "tags"},
		{map[string]any{"tags": []string{""}}, "tags.0"},
		{map[string]any{"tags": make([]string, 51)}, "tags"},
		{map[string]any{"customFields": map[string]any{"Bad Key": "v"}}, "customFields.Bad Key"},
		{map[string]any{"customFields": map[string]any{"n": 5}}, "customFields"},
		{map[string]any{"customFields": map[string]any{"k": strings.Repeat("v", 1025)}}, "customFields.k"},
		{map[string]any{"groupId": "nope"}, "groupId"},
		{map[string]any{"groupId": 7}, "groupId"},
		{map[string]any{"groupId": "7b0b5b6e-5a3a-4c1e-8f00-000000000000"}, "groupId"},
		{map[string]any{"hostname": "renamed"}, "hostname"},
		{`{"tags": ["a"]`, "body"},
	}
	for i, c := range cases {
		t.Logf("case %d", i)
		fixture.Invalid(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, c.body), c.field)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")
	after := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AAdmin, nil), http.StatusOK).Body
	if string(before) != string(after) {
		t.Fatalf("bad input changed the device:\n%s\n%s", before, after)
	}
	// Another tenant's group is not a group of this device's organization.
	fixture.NotFound(t, w.Call(t, http.MethodPatch, path, fixture.BAdmin, map[string]any{"tags": []string{"x"}}))
	fixture.NotFound(t, w.Call(t, http.MethodPatch, path, fixture.PYAdmin, map[string]any{"tags": []string{"x"}}))
}

func TestSoftwareChunksStayUnderTheItemLimit(t *testing.T) {
	list := make([]device.Software, device.MaxSoftware)
	for i := range list {
		// Incompressible names: the worst case for the chunking.
		list[i] = device.Software{Name: strings.Repeat(string(rune('a'+i%26)), 3) + randomish(i), Version: "1.0", Vendor: "V"}
	}
	parts, hash, err := device.EncodeSoftware(list)
	if err != nil || hash == "" || len(parts) == 0 {
		t.Fatal(err)
	}
	for _, p := range parts {
		if len(p) > device.ChunkBytes {
			t.Fatalf("chunk of %d bytes", len(p))
		}
	}
	// Order does not matter: the hash is of the sorted list.
	rev := make([]device.Software, len(list))
	for i := range list {
		rev[len(list)-1-i] = list[i]
	}
	if _, h2, _ := device.EncodeSoftware(rev); h2 != hash {
		t.Fatal("hash depends on order")
	}
}

func randomish(i int) string {
	x := uint64(i)*0x9E3779B97F4A7C15 + 1
	var b strings.Builder
	for range 40 {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b.WriteByte("0123456789abcdefghijklmnopqrstuvwxyz"[x%36])
	}
	return b.String()
}

func TestConcurrentDecommissionsHaveOneWinner(t *testing.T) {
	w := newWorld(t)
	id, _ := w.Device(t, fixture.AAdmin, w.A.ID, "", "race")
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base + "/" + id + "/decommission", Token: w.Tokens[fixture.AAdmin]})
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[http.StatusOK] != 1 || codes[http.StatusConflict] != 19 {
		t.Fatalf("statuses %v, want one 200 and 19 409", codes)
	}
}

// The interval told to agents is jittered per device and minute, within
// +-10% of its base, and deterministic.
func TestNextIntervalJitter(t *testing.T) {
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	seen := map[time.Duration]bool{}
	for i := range 200 {
		id := fmt.Sprintf("dev-%d", i)
		d := device.NextInterval(id, now, false)
		if d < 54*time.Second || d > 66*time.Second || d != device.NextInterval(id, now.Add(30*time.Second), false) {
			t.Fatalf("%s: %s", id, d)
		}
		seen[d] = true
		if c := device.NextInterval(id, now, true); c < 270*time.Second || c > 330*time.Second {
			t.Fatalf("%s with a channel: %s", id, c)
		}
	}
	if len(seen) < 10 {
		t.Fatalf("200 devices told %d distinct intervals", len(seen))
	}
}
