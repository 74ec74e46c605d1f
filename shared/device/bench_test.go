package device_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkListPartnerDevices lists 20,000 devices over 200 organizations of
// one partner as the partner's administrator, page 1 and page 40 (limit 50;
// page 40 by number and by the cursor page 39 handed out), and reports the DynamoDB calls and the items
// they read per request.
// Run: go test -run '^$' -bench ListPartnerDevices -benchtime 5x ./shared/device/
func BenchmarkListPartnerDevices(b *testing.B) {
	const orgs, perOrg = 200, 100
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	seedPartner(b, env, p.ID, orgs, perOrg)
	api := fixture.API(b, env, "devices")
	// The cursor of page 40: page 39's nextCursor.
	var p39 struct{ Pagination struct{ NextCursor string } }
	fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodGet, Token: admin.Token, Path: "/api/v1/devices?page=39"}), http.StatusOK).Decode(b, &p39)
	for _, c := range []struct{ name, query string }{
		{"page=1", "page=1"},
		{"page=40", "page=40"},
		{"page=40-by-cursor", "cursor=" + url.QueryEscape(p39.Pagination.NextCursor)},
	} {
		b.Run(c.name, func(b *testing.B) {
			calls, items := 0, 0
			for b.Loop() {
				res := fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodGet, Token: admin.Token,
					Path: "/api/v1/devices?" + c.query}), http.StatusOK)
				var out struct {
					Data       []struct{ Hostname string }
					Pagination struct{ Total int }
				}
				res.Decode(b, &out)
				if len(out.Data) != 50 || out.Pagination.Total != orgs*perOrg {
					b.Fatalf("%s: %d devices of %d", c.name, len(out.Data), out.Pagination.Total)
				}
				calls, items = calls+res.DBCalls, items+res.DBItems
			}
			b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
			b.ReportMetric(float64(items)/float64(b.N), "items-read/op")
		})
	}
}

// seedPartner writes orgs organizations of partnerID with perOrg devices each
// (hostnames interleaved across organizations, every fifth one "dup" in either
// case, so ties fall to the id), counters included, in BatchWriteItem calls,
// and returns the organizations' ids.
func seedPartner(t testing.TB, env *testenv.Env, partnerID string, orgs, perOrg int) []string {
	t.Helper()
	rows := env.Seeder(t)
	put := func(v any) {
		item, err := store.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		rows.Put(item)
	}
	total := orgs * perOrg
	prefix := uuid.NewString()[:8]
	var ids []string
	for o := range orgs {
		org := tenant.Organization{ID: fmt.Sprintf("%s-%04x-4000-8000-000000000000", prefix, o+1), PartnerID: partnerID, Name: fmt.Sprintf("org %d", o),
			Status: tenant.OrgActive, DeviceCount: perOrg, CreatedAt: "2026-10-01T09:00:00.000Z", UpdatedAt: "2026-10-01T09:00:00.000Z"}
		org.Keys = tenant.OrgKeys(org.ID, partnerID)
		put(org)
		ids = append(ids, org.ID)
		for i := range perOrg {
			n := o*perOrg + i
			id := fmt.Sprintf("%s-%04x-4000-8000-%012x", prefix, o+1, (n*104729)%(total*7))
			host := fmt.Sprintf("host-%05d", (n*7919)%total)
			switch n % 10 {
			case 0:
				host = "dup"
			case 5:
				host = "DUP"
			}
			seen := "2026-11-01T08:59:00.000Z"
			d := device.Device{Keys: device.Keys(org.ID, id), ID: id, OrgID: org.ID, PartnerID: partnerID,
				GroupIDs: []string{}, Hostname: host, OSType: "windows", OSVersion: "11",
				Architecture: "x64", AgentVersion: "1.0.0", Status: device.StatusOnline, DeviceRole: "workstation", EnrolledAt: "2026-10-01T09:00:00.000Z",
				LastSeenAt: &seen, Tags: []string{"prod"}, CustomFields: map[string]string{}, UpdatedAt: "2026-11-01T09:00:00.000Z"}
			device.SetListKeys(&d)
			put(d)
		}
	}
	rows.Flush()
	return ids
}
