package device_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkListPartnerDevices lists 20,000 devices over 200 organizations of
// one partner as the partner's administrator, page 1 and page 40 (limit 50),
// by page number and by cursor, and reports the DynamoDB calls and the items
// they read per request.
// Run: go test -run '^$' -bench ListPartnerDevices -benchtime 5x ./shared/device/
func BenchmarkListPartnerDevices(b *testing.B) {
	const orgs, perOrg = 200, 100
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	seedPartner(b, env, p.ID, orgs, perOrg)
	api := fixture.API(b, env, "devices")
	for _, page := range []int{1, 40} {
		b.Run(fmt.Sprintf("page=%d", page), func(b *testing.B) {
			calls, items := 0, 0
			for b.Loop() {
				res := fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodGet, Token: admin.Token,
					Path: fmt.Sprintf("/api/v1/devices?page=%d", page)}), http.StatusOK)
				var out struct {
					Data       []struct{ Hostname string }
					Pagination struct{ Total int }
				}
				res.Decode(b, &out)
				if len(out.Data) != 50 || out.Pagination.Total != orgs*perOrg {
					b.Fatalf("page %d: %d devices of %d", page, len(out.Data), out.Pagination.Total)
				}
				calls, items = calls+res.DBCalls, items+res.DBItems
			}
			b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
			b.ReportMetric(float64(items)/float64(b.N), "items-read/op")
		})
	}
}

// seedPartner writes orgs organizations of partnerID with perOrg devices each
// (hostnames interleaved across organizations), counters included, in
// BatchWriteItem calls.
func seedPartner(t testing.TB, env *testenv.Env, partnerID string, orgs, perOrg int) {
	t.Helper()
	ctx := context.Background()
	var batch []types.WriteRequest
	flush := func() {
		for len(batch) > 0 {
			out, err := env.Store.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{env.Store.Table: batch}})
			if err != nil {
				t.Fatal(err)
			}
			batch = out.UnprocessedItems[env.Store.Table]
		}
	}
	put := func(v any) {
		item, err := store.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
		if len(batch) == 25 {
			flush()
		}
	}
	total := orgs * perOrg
	for o := range orgs {
		org := tenant.Organization{ID: fmt.Sprintf("%08x-0000-4000-8000-000000000000", o+1), PartnerID: partnerID, Name: fmt.Sprintf("org %d", o),
			Status: tenant.OrgActive, DeviceCount: perOrg, CreatedAt: "2026-10-01T09:00:00.000Z", UpdatedAt: "2026-10-01T09:00:00.000Z"}
		org.Keys = tenant.OrgKeys(org.ID, partnerID)
		put(org)
		for i := range perOrg {
			n := o*perOrg + i
			id := fmt.Sprintf("%08x-%04x-4000-8000-%012x", o+1, i, n)
			seen := "2026-11-01T08:59:00.000Z"
			d := device.Device{Keys: device.Keys(org.ID, id), ID: id, OrgID: org.ID, PartnerID: partnerID,
				GroupIDs: []string{}, Hostname: fmt.Sprintf("host-%05d", (n*7919)%total), OSType: "windows", OSVersion: "11",
				Architecture: "x64", AgentVersion: "1.0.0", Status: device.StatusOnline, DeviceRole: "workstation", EnrolledAt: "2026-10-01T09:00:00.000Z",
				LastSeenAt: &seen, Tags: []string{"prod"}, CustomFields: map[string]string{}, UpdatedAt: "2026-11-01T09:00:00.000Z"}
			put(d)
		}
	}
	flush()
}
