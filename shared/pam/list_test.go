package pam_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListAndActive: every filter of the list, the {success, requests,
// pagination} envelope, restrictions, and the active view.
func TestListAndActive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d1 := newDevice(t, w, w.A.ID, w.A1.ID, "host-one")
	d2 := newDevice(t, w, w.A.ID, w.A2.ID, "host-two")
	db := newDevice(t, w, w.B.ID, "", "host-b")
	first, _ := submit(t, w, d1, "CORP\\a")
	w.Env.Clock.Advance(4 * time.Minute)
	second, _ := submit(t, w, d2, "CORP\\b")
	w.Env.Clock.Advance(4 * time.Minute)
	third, _ := submit(t, w, d1, "CORP\\c")
	submit(t, w, db, "CORP\\z")
	fixture.Expect(t, respond(t, w, fixture.AAdmin, second, map[string]any{"decision": "approve", "durationMinutes": 2}), http.StatusOK)

	list := func(caller, q string) []string {
		t.Helper()
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/elevation-requests"+q, caller, nil), http.StatusOK)
		var out struct {
			Success  bool
			Requests []struct {
				ID, DeviceHostname string
				SiteName           *string
			}
			Pagination struct{ Page, Limit, Total int }
		}
		res.Decode(t, &out)
		if !out.Success {
			t.Fatalf("envelope %s", res.Body)
		}
		var ids []string
		for _, r := range out.Requests {
			if r.DeviceHostname == "" || (r.SiteName == nil && strings.HasPrefix(r.DeviceHostname, "host-o")) {
				t.Fatalf("not described: %s", res.Body)
			}
			ids = append(ids, r.ID)
		}
		return ids
	}
	res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/elevation-requests", fixture.AAdmin, nil), http.StatusOK)
	// The session, one Query per list partition (four, merged), the page's
	// requests, their devices and sites.
	fixture.Budget(t, res, 7)
	if got := strings.Join(list(fixture.AAdmin, ""), ","); got != third+","+second+","+first {
		t.Fatalf("newest first: %s", got)
	}
	for q, want := range map[string]string{
		"?status=approved":                                           second,
		"?status=pending&deviceId=" + d1.id:                          third + "," + first,
		"?siteId=" + w.A2.ID:                                         second,
		"?flowType=uac_intercept&limit=1":                            third,
		"?limit=1&page=2":                                            second,
		"?from=2026-11-01T09:02:00.000Z":                             third + "," + second,
		"?to=2026-11-01T09:06:00.000Z":                               second + "," + first,
		"?from=2026-11-01T09:02:00.000Z&to=2026-11-01T09:06:00.000Z": second,
		"?flowType=ai_tool_action":                                   "",
		"?orgId=" + w.A.ID:                                           third + "," + second + "," + first,
	} {
		if got := strings.Join(list(fixture.AAdmin, q), ","); got != want {
			t.Fatalf("%s: %s, want %s", q, got, want)
		}
	}
	if got := strings.Join(list(fixture.ARestricted, ""), ","); got != third+","+first {
		t.Fatalf("restricted sees %s", got)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodGet, base+"/elevation-requests?siteId="+w.A2.ID, fixture.ARestricted, nil), http.StatusForbidden, "forbidden")
	if got := list(fixture.CAdmin, ""); len(got) != 0 {
		t.Fatalf("C sees %v", got)
	}
	if got := list(fixture.PXAdmin, ""); len(got) != 4 {
		t.Fatalf("partner X sees %v", got)
	}
	if got := strings.Join(list(fixture.PXAdmin, "?status=approved"), ","); got != second {
		t.Fatalf("partner X approved %v", got)
	}
	// A system caller merges every partner's list partitions (and each
	// partnerless organization's).
	if got := list(fixture.SysAdmin, ""); len(got) != 4 {
		t.Fatalf("system sees %v", got)
	}
	if got := strings.Join(list(fixture.SysAdmin, "?status=approved&limit=1"), ","); got != second {
		t.Fatalf("system approved %v", got)
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/elevation-requests?orgId="+w.A.ID, fixture.PYAdmin, nil))
	for q, field := range map[string]string{
		"?status=open": "status", "?flowType=x": "flowType", "?deviceId=1": "deviceId", "?siteId=1": "siteId",
		"?from=yesterday": "from", "?to=1": "to", "?limit=101": "limit", "?page=0": "page", "?orgId=x": "orgId",
		"?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z": "to",
	} {
		fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/elevation-requests"+q, fixture.AAdmin, nil), field)
	}
	// Active: the approved one, until its window ends.
	res = fixture.Expect(t, w.Call(t, http.MethodGet, base+"/active", fixture.AViewer, nil), http.StatusOK)
	var act struct {
		Active []struct{ ID string }
	}
	res.Decode(t, &act)
	if len(act.Active) != 1 || act.Active[0].ID != second {
		t.Fatalf("active %s", res.Body)
	}
	if len(fixture.Expect(t, w.Call(t, http.MethodGet, base+"/active", fixture.ARestricted, nil), http.StatusOK).JSON(t)["active"].([]any)) != 0 {
		t.Fatal("restricted sees another site's elevation")
	}
	w.Env.Clock.Advance(3 * time.Minute)
	// Past expiresAt it is no longer active, even before the sweeper runs.
	if len(fixture.Expect(t, w.Call(t, http.MethodGet, base+"/active", fixture.AViewer, nil), http.StatusOK).JSON(t)["active"].([]any)) != 0 {
		t.Fatal("expired still active")
	}
}
