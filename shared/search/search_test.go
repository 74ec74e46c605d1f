package search_test

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type result struct{ ID, Type, Title, Href string }

func search(t *testing.T, w *fixture.World, caller, query string) []result {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/search?"+query, caller, nil), http.StatusOK)
	var out struct{ Results []result }
	res.Decode(t, &out)
	return out.Results
}

func TestSearchAcrossCategoriesWithinTenancy(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "search", "scripts", "alerts", "enrollment-keys", "agents")
	for _, c := range []struct{ caller, name string }{{fixture.AAdmin, "alpha"}, {fixture.CAdmin, "charlie"}} {
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/scripts", c.caller, map[string]any{"name": "Backup " + c.name, "language": "bash", "content": "ls"}), http.StatusCreated)
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/alerts", c.caller, map[string]any{"title": "Backup failed on " + c.name, "severity": "high"}), http.StatusCreated)
	}
	ek := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/enrollment-keys", fixture.AAdmin, map[string]any{"name": "k", "maxUsage": 2}), http.StatusCreated).JSON(t)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll", RemoteAddr: "198.51.100.9:1",
		Body: map[string]any{"enrollmentKey": ek["key"], "hostname": "BACKUP-SRV-01", "osType": "linux", "osVersion": "12", "architecture": "x64", "agentVersion": "1.0.0"}}), http.StatusCreated)

	got := search(t, w, fixture.AAdmin, "q=backup")
	types := map[string]int{}
	for _, r := range got {
		types[r.Type]++
		if strings.Contains(strings.ToLower(r.Title), "charlie") {
			t.Fatalf("A's admin found C's %s %q", r.Type, r.Title)
		}
	}
	if types["devices"] != 1 || types["scripts"] != 1 || types["alerts"] != 1 {
		t.Fatalf("A's admin found %v: %+v", types, got)
	}
	// A viewer reads devices, scripts and alerts but not user management; a settings entry by its permission.
	if got := search(t, w, fixture.AAdmin, "q=user+management"); len(got) != 1 || got[0].Href != "/settings/users" {
		t.Fatalf("admin: %+v", got)
	}
	if got := search(t, w, fixture.AViewer, "q=user+management"); len(got) != 0 {
		t.Fatalf("viewer found %+v", got)
	}
	// Wildcards are literal.
	if got := search(t, w, fixture.AAdmin, "q=%25"); len(got) != 0 {
		t.Fatalf("%% matched %+v", got)
	}
	// The restricted admin (site a1) does not see the device (no site) nor organization-wide alerts.
	for _, r := range search(t, w, fixture.ARestricted, "q=backup") {
		if r.Type == "devices" || r.Type == "alerts" {
			t.Fatalf("restricted admin found %+v", r)
		}
	}
}

func TestSearchBalancesCategoriesAndValidates(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "search", "scripts", "alerts")
	for i := range 6 {
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/scripts", fixture.AAdmin, map[string]any{"name": "zeta script " + string(rune('a'+i)), "language": "bash", "content": "ls"}), http.StatusCreated)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/alerts", fixture.AAdmin, map[string]any{"title": "zeta alert", "severity": "low"}), http.StatusCreated)
	got := search(t, w, fixture.AAdmin, "q=zeta&limit=4")
	n := map[string]int{}
	for _, r := range got {
		n[r.Type]++
	}
	if len(got) != 4 || n["scripts"] != 3 || n["alerts"] != 1 {
		t.Fatalf("balanced results %v: %+v", n, got)
	}
	if got := search(t, w, fixture.AAdmin, "q=zeta&limit=10"); len(got) != 7 {
		t.Fatalf("limit 10 gives %d", len(got))
	}
	for q, field := range map[string]string{"q=++": "q", "": "q", "q=" + strings.Repeat("x", 101): "q", "q=a&limit=0": "limit", "q=a&limit=51": "limit", "q=a&limit=x": "limit"} {
		fixture.Invalid(t, w.Call(t, http.MethodGet, "/api/v1/search?"+q, fixture.AAdmin, nil), field)
	}
}
