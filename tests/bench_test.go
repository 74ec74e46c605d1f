package tests

import (
	"context"
	"fmt"
	"testing"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/gale-rmm/gale/shared/app/authgroup"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// Benchmarks of the hot paths. DynamoDB calls per request are the main cost and
// latency figure (each is a network round trip in AWS), so each benchmark
// reports dbcalls/op next to time; emulator time is not AWS time. The timed
// loops call fixture.Serve, the production path only: fixture.Do's validation
// against the OpenAPI document would be most of the time, memory and
// allocations measured (one exchange is validated with Do before the loop).

func BenchmarkAuthenticatedRequest(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	c := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})
	h, err := authgroup.Auth(env.Deps)
	if err != nil {
		b.Fatal(err)
	}
	req := fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: c.Token}
	fixture.Expect(b, fixture.Do(b, h, req), 200)
	calls := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res := fixture.Serve(b, h, req)
		if res.Status != 200 {
			b.Fatalf("status %d", res.Status)
		}
		calls += res.DBCalls
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
}

func BenchmarkLogin(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	const pw = "Correct-Horse-Battery-9"
	c := fixture.User(b, env, fixture.Member{Password: pw, Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})
	h, err := authgroup.Auth(env.Deps)
	if err != nil {
		b.Fatal(err)
	}
	calls, i := 0, 0
	b.ResetTimer()
	for b.Loop() {
		i++
		// A distinct source address per login keeps the per-IP limits out of the figure.
		res := fixture.Serve(b, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
			Body: map[string]string{"email": c.Email, "password": pw}, RemoteAddr: ipFor(i)})
		if res.Status != 200 {
			b.Fatalf("status %d: %s", res.Status, res.Body)
		}
		calls += res.DBCalls
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
}

func ipFor(i int) string { return fmt.Sprintf("10.%d.%d.%d:1", i/65536%256, i/256%256, i%256) }

func BenchmarkPasswordHash(b *testing.B) {
	for b.Loop() {
		if _, err := passhash.Hash("Correct-Horse-Battery-9"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAuthorizationDecision(b *testing.B) {
	var perms []authz.Permission
	for _, r := range role.SystemRoles() {
		if r.ID == role.PartnerTechnicianID {
			perms = r.PermissionList()
		}
	}
	p := &authz.Principal{Kind: authz.KindUser, Scope: authz.ScopePartner, PartnerID: "p1",
		OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{"o1", "o2", "o3"}, Perms: authz.NewSet(perms...)}
	ctx := authz.WithPrincipal(context.Background(), p)
	org := authz.Org{ID: "o3", PartnerID: "p1"}
	allowed := 0
	for b.Loop() {
		q, err := authz.Require(ctx, authz.DevicesRead)
		if err == nil && q.CanAccessOrg(org) {
			allowed++
		}
	}
	if allowed == 0 {
		b.Fatal("decision never allowed")
	}
}

// BenchmarkEnumerationTiming reports login with a wrong password and
// forgot-password for a known and an unknown address side by side: time,
// DynamoDB calls and password hash verifications per request. The calls and
// verifications are held equal by tests; this shows the times.
func BenchmarkEnumerationTiming(b *testing.B) {
	env := testenv.New(b)
	p := fixture.Partner(b, env, "P")
	o := fixture.Org(b, env, p.ID, "O")
	c := fixture.User(b, env, fixture.Member{Password: "Correct-Horse-Battery-9", Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})
	h, err := authgroup.Auth(env.Deps)
	if err != nil {
		b.Fatal(err)
	}
	ips := 0 // every request of every sub-benchmark comes from its own address
	for _, tc := range []struct {
		name, path string
		body       func(email string) map[string]string
		status     int
	}{
		{"login", "/api/v1/auth/login", func(e string) map[string]string {
			return map[string]string{"email": e, "password": "Wrong-Horse-Battery-9"}
		}, 401},
		{"forgot-password", "/api/v1/auth/forgot-password", func(e string) map[string]string {
			return map[string]string{"email": e}
		}, 200},
	} {
		for _, who := range []struct{ name, email string }{{"known", c.Email}, {"unknown", "nobody-" + c.Email}} {
			b.Run(tc.name+"/"+who.name, func(b *testing.B) {
				calls := 0
				hashes := passhash.Verifications()
				for b.Loop() {
					ips++
					// A fresh source address per request keeps the per-IP limits out of the figure.
					res := fixture.Serve(b, h, fixture.Request{Method: "POST", Path: tc.path, Body: tc.body(who.email), RemoteAddr: ipFor(ips)})
					if res.Status != tc.status {
						b.Fatalf("status %d: %s", res.Status, res.Body)
					}
					calls += res.DBCalls
				}
				b.ReportMetric(float64(calls)/float64(b.N), "dbcalls/op")
				b.ReportMetric(float64(passhash.Verifications()-hashes)/float64(b.N), "hashes/op")
			})
		}
	}
}
