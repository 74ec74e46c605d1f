package push_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/gale-rmm/gale/shared/app/pushgroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/push"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// BenchmarkFanOut reports the DynamoDB calls of one mobile approval fan-out
// to 40 technicians with a push target each (the goal: 3 + 1 per
// batch), beside the ingest's own calls (shared/pam's benchmark).
func BenchmarkFanOut(b *testing.B) {
	env := testenv.New(b)
	ctx := context.Background()
	px := fixture.Partner(b, env, "P")
	org := fixture.Org(b, env, px.ID, "O")
	svc := &push.Service{St: push.Store{St: env.Store}, Clock: env.Clock}
	const technicians = 40
	for i := 0; i < technicians; i++ {
		c := fixture.User(b, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: org.ID, RoleID: role.OrgTechnicianID, MFA: true})
		p := &authz.Principal{Kind: authz.KindUser, UserID: c.UserID}
		platform, token := "fcm", fmt.Sprintf("bench-%02d:%0140d", i, i)
		if _, _, err := svc.Register(authz.WithPrincipal(ctx, p), push.TargetInput{Platform: &platform, Token: &token}); err != nil {
			b.Fatal(err)
		}
	}
	fan := pushgroup.Mobile(env.Deps)
	calls := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		r := &pam.Request{ID: pam.NewRequestID(env.Clock.Now()), OrgID: org.ID, PartnerID: px.ID, DeviceID: "d", Status: pam.StatusPending,
			SubjectUsername: `CORP\x`, FlowType: pam.FlowUAC, RequestedAt: clock.Format(env.Clock.Now())}
		if err := env.Store.Do(ctx, pam.CreateRequestWrite(r, env.Cfg.PAMPendingTTL)); err != nil {
			b.Fatal(err)
		}
		env.Clock.Advance(1)
		cctx, n := store.WithCalls(ctx)
		b.StartTimer()
		if err := fan.FanOut(cctx, r); err != nil {
			b.Fatal(err)
		}
		calls += n.N()
	}
	b.ReportMetric(float64(calls)/float64(b.N), "dynamodb-calls/fanout")
	b.ReportMetric(technicians, "approvers/fanout")
}
