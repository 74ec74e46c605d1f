package apikey_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkKeyAuthentication times the X-API-Key path alone (a user-created key,
// so the creator checks are in) against the emulator and reports its DynamoDB
// calls per request; the budget is 2.
func BenchmarkKeyAuthentication(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	admin := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: roleAdmin(), MFA: true})
	api := fixture.API(b, env, "api-keys")
	res := fixture.Expect(b, fixture.Do(b, api, fixture.Request{Method: http.MethodPost, Path: keysURL, Token: admin.Token,
		Body: map[string]any{"orgId": o.ID, "name": "bench", "scopes": []string{"devices:read"}, "rateLimit": apikey.MaxRateLimit}}), http.StatusCreated)
	var k issued
	res.Decode(b, &k)
	a := &apikey.Authenticator{St: apikey.Store{St: env.Store}, Roles: env.Roles, Limits: ratelimit.Limiter{St: env.Store, Clock: env.Clock}, Clock: env.Clock}
	calls := 0
	for b.Loop() {
		// Keep under the key's limit: 100,000 per hour is a cell every 36 ms.
		env.Clock.Advance(40_000_000)
		ctx, n := store.WithCalls(b.Context())
		r := httptest.NewRequest(http.MethodGet, devURL, nil).WithContext(ctx)
		if _, err := a.AuthenticateKey(ctx, httptest.NewRecorder(), r, k.Key); err != nil {
			b.Fatal(err)
		}
		calls += n.N()
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
}
