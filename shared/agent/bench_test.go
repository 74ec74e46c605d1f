package agent_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkHeartbeat drives steady-state heartbeats through the agents group
// against the emulator and reports DynamoDB calls per heartbeat next to ns/op.
// Run: go test -run '^$' -bench Heartbeat -benchtime 500x ./shared/agent/
func BenchmarkHeartbeat(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	api := fixture.API(b, env, "agents", "enrollment-keys")
	var k struct{ Key string }
	fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/enrollment-keys", Token: admin.Token,
		Body: map[string]any{"name": "bench"}}), http.StatusCreated).Decode(b, &k)
	var e struct{ DeviceID, AuthToken string }
	fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll", RemoteAddr: "192.0.2.1:1",
		Body: fixture.EnrollBody(k.Key, "bench")}), http.StatusCreated).Decode(b, &e)
	req := fixture.Request{Method: http.MethodPost, Path: beatPath(e.DeviceID), Token: e.AuthToken, Body: beat()}
	calls := 0
	b.ResetTimer()
	for range b.N {
		env.Clock.Advance(time.Second) // steady state: no burst
		res := fixture.Serve(b, api, req)
		if res.Status != http.StatusOK {
			b.Fatalf("heartbeat %d: %s", res.Status, res.Body)
		}
		calls += res.DBCalls
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dynamodb-calls/op")
}
