package tests

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListCallBudgets asserts the DynamoDB call budget of every organization
// list route of the lists work (issue 20), as an organization administrator and
// as the administrator of a partner with two organizations. Every list reads
// one page whatever the partner's size (tenant.List: the index page, then the
// page's rows; an empty page reads no rows); a partner's list first reads
// the partner's organizations, so the rows of deleted ones stay out.
func TestListCallBudgets(t *testing.T) {
	w := fixture.NewWorld(t, "devices", "agents", "enrollment-keys", "alerts", "scripts", "api-keys", "service-principals", "filters")
	w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "alpha")
	w.Device(t, fixture.BAdmin, w.B.ID, "", "bravo")
	for _, c := range []struct {
		path         string
		org, partner int
	}{
		{"/api/v1/devices", 3, 4},         // index page + the devices; the counters only when a page stops before the end
		{"/api/v1/enrollment-keys", 3, 4}, // index page + the keys (the lists below are empty here: no batch read)
		{"/api/v1/alerts", 2, 3},
		{"/api/v1/scripts", 2, 3},
		{"/api/v1/api-keys", 2, 3},           // an empty index page (+ the keys and their guards when there are keys)
		{"/api/v1/service-principals", 2, 3}, // an empty index page (+ the principals)
		{"/api/v1/filters", 2, 3},
	} {
		for _, who := range []struct {
			caller string
			budget int
		}{{fixture.AAdmin, c.org}, {fixture.PXAdmin, c.partner}} {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, c.path, who.caller, nil), http.StatusOK)
			t.Logf("%s as %s: %d calls, %d items", c.path, who.caller, res.DBCalls, res.DBItems)
			fixture.Budget(t, res, who.budget)
		}
	}
}
