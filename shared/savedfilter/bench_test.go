package savedfilter_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkPreviewTenThousand previews a 6-condition nested filter over an
// organization of 10,000 devices through the handler against the emulator,
// and reports the DynamoDB calls of one preview (the device Query pages
// through the organization's partition).
func BenchmarkPreviewTenThousand(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	site := fixture.Site(b, env, o.ID, "S")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	seed(b, env, o.ID, p.ID, site.ID, "host", 10_000, "online")
	api := fixture.API(b, env, "filters")
	body := map[string]any{"limit": 100, "conditions": map[string]any{"operator": "AND", "conditions": []any{
		cond("osType", "equals", "windows"),
		cond("status", "in", []string{"online", "maintenance"}),
		map[string]any{"operator": "OR", "conditions": []any{
			cond("hostname", "startsWith", "host-1"),
			cond("hostname", "endsWith", "7"),
			map[string]any{"operator": "AND", "conditions": []any{
				cond("tags", "hasAny", []string{"prod"}),
				cond("lastSeenAt", "withinLast", map[string]any{"amount": 7, "unit": "days"}),
			}},
		}},
	}}}
	calls, total := 0, 0
	for b.Loop() {
		res := fixture.Serve(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/filters/preview", Token: admin.Token, Body: body})
		if res.Status != http.StatusOK {
			b.Fatalf("status %d: %s", res.Status, res.Body)
		}
		var out struct{ Data struct{ TotalCount int } }
		res.Decode(b, &out)
		calls, total = calls+res.DBCalls, out.Data.TotalCount
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
	b.ReportMetric(float64(total), "matches")
}
