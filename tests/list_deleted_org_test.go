package tests

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestPartnerListsLeaveDeletedOrganizationsOut: an organization deleted while
// it still holds scripts, filters and API keys (delete refuses only sites,
// groups, members and devices) leaves those rows in its partner's list
// partition; the partner's lists answer as before the list indexes, without
// them, and their totals do not count them.
func TestPartnerListsLeaveDeletedOrganizationsOut(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "scripts", "filters", "api-keys", "organizations")
	gone := fixture.Org(t, w.Env, w.PX.ID, "Gone").ID
	cond := map[string]any{"operator": "AND", "conditions": []any{map[string]any{"field": "hostname", "operator": "contains", "value": "x"}}}
	for _, c := range []struct{ path, name string }{
		{"/api/v1/scripts", "kept-script"}, {"/api/v1/filters", "kept-filter"}, {"/api/v1/api-keys", "kept-key"},
	} {
		for _, org := range []struct{ id, suffix string }{{w.A.ID, ""}, {gone, "-gone"}} {
			body := map[string]any{"orgId": org.id, "name": c.name + org.suffix}
			switch c.path {
			case "/api/v1/scripts":
				body["language"], body["content"] = "powershell", "Get-Process"
			case "/api/v1/filters":
				body["conditions"] = cond
			default:
				body["scopes"] = []string{"devices:read"}
			}
			fixture.Expect(t, w.Call(t, http.MethodPost, c.path, fixture.PXAdmin, body), http.StatusCreated)
		}
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/organizations/"+gone, fixture.PXAdmin, nil), http.StatusOK)
	for _, path := range []string{"/api/v1/scripts", "/api/v1/filters", "/api/v1/api-keys", "/api/v1/scripts?limit=1"} {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.PXAdmin, nil), http.StatusOK)
		if strings.Contains(string(res.Body), "-gone") {
			t.Fatalf("%s lists a deleted organization's row: %s", path, res.Body)
		}
		if !strings.Contains(string(res.Body), "kept-") {
			t.Fatalf("%s lost the live organization's row: %s", path, res.Body)
		}
		if !strings.Contains(string(res.Body), `"total":1`) {
			t.Fatalf("%s total counts a deleted organization's row: %s", path, res.Body)
		}
	}
}
