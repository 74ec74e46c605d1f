package push_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/app/pushgroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/push"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// customRole stores a custom role of organization orgID.
func customRole(t *testing.T, w *fixture.World, orgID, name string, perms ...string) string {
	t.Helper()
	id := uuid.NewString()
	r := struct {
		store.Keys
		ID          string   `dynamodbav:"id"`
		Owner       string   `dynamodbav:"owner"`
		OrgID       string   `dynamodbav:"orgId"`
		Scope       string   `dynamodbav:"scope"`
		Name        string   `dynamodbav:"name"`
		Permissions []string `dynamodbav:"permissions"`
		Version     int      `dynamodbav:"version"`
	}{Keys: store.Keys{PK: "ROLES#ORG#" + orgID, SK: "ROLE#" + id}, ID: id, Owner: "ORG#" + orgID, OrgID: orgID,
		Scope: string(authz.ScopeOrg), Name: name, Permissions: perms, Version: 1}
	if err := w.Env.Store.Do(context.Background(), store.PutNew(r)); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestMobileEligibility: a custom role's devices:execute makes an approver
// (one GetItem for the role), a custom role without it does not; a disabled
// account and a suspended membership are never asked, nor is an account
// without a push target.
func TestMobileEligibility(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	approver := customRole(t, w, w.A.ID, "Approver", "devices:read", "devices:execute")
	reader := customRole(t, w, w.A.ID, "Reader", "devices:read")
	member := func(roleID string) fixture.Caller {
		return fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: roleID,
			RoleOwner: "ORG#" + w.A.ID, MFA: true})
	}
	cast := map[string]fixture.Caller{"custom approver": member(approver), "custom reader": member(reader),
		"disabled": member(approver), "suspended": member(approver)}
	for name, c := range cast {
		fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: targets, Token: c.Token,
			Body: map[string]any{"platform": "fcm", "token": fcmToken(name[:4] + c.UserID[:8])}}), http.StatusCreated)
	}
	ctx := context.Background()
	if err := w.Env.Store.Do(ctx, store.Set("USER#"+cast["disabled"].UserID, "PROFILE", "status", string(user.StatusDisabled))); err != nil {
		t.Fatal(err)
	}
	if err := w.Env.Store.Do(ctx, store.Set("USER#"+cast["suspended"].UserID, "MEMBER#ORG#"+w.A.ID, "status", string(user.MemberSuspended))); err != nil {
		t.Fatal(err)
	}
	r := &pam.Request{ID: pam.NewRequestID(w.Env.Clock.Now()), OrgID: w.A.ID, PartnerID: w.PX.ID, DeviceID: uuid.NewString(),
		Status: pam.StatusPending, SubjectUsername: `CORP\nobody`, FlowType: pam.FlowUAC, RequestedAt: clock.Format(w.Env.Clock.Now())}
	if err := w.Env.Store.Do(ctx, pam.CreateRequestWrite(r, w.Env.Cfg.PAMPendingTTL)); err != nil {
		t.Fatal(err)
	}
	cctx, calls := store.WithCalls(ctx)
	if err := pushgroup.Mobile(w.Env.Deps).FanOut(cctx, r); err != nil {
		t.Fatal(err)
	}
	fixture.Budget(t, fixture.Response{DBCalls: calls.N()}, 4+2) // + one GetItem per custom role
	rows := approvals(t, w, w.A.ID, r.ID)
	if len(rows) != 1 || rows[cast["custom approver"].UserID] != push.StatusPending {
		t.Fatalf("approvers %v, want only the custom approver %s", rows, cast["custom approver"].UserID)
	}
}

// TestTokenRace: ten accounts registering one token at once leave it with
// exactly one of them, and its guard names that one.
func TestTokenRace(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	var callers []fixture.Caller
	for i := 0; i < 10; i++ {
		callers = append(callers, fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
			RoleID: role.OrgTechnicianID, MFA: true}))
	}
	tok := apnsToken(9)
	var wg sync.WaitGroup
	statuses := make([]int, len(callers))
	for i, c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: targets, Token: c.Token,
				Body: map[string]any{"platform": "apns", "token": tok}}).Status
		}()
	}
	wg.Wait()
	holders := []string{}
	for _, c := range callers {
		ts, err := push.Store{St: w.Env.Store}.Targets(context.Background(), c.UserID)
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range ts.Targets {
			if x.Token == tok {
				holders = append(holders, c.UserID)
			}
		}
	}
	if len(holders) != 1 {
		t.Fatalf("%d accounts hold the token (statuses %v)", len(holders), statuses)
	}
	for _, s := range statuses {
		if s != http.StatusCreated && s != http.StatusConflict {
			t.Fatalf("statuses %v", statuses)
		}
	}
	if !slices.Contains(statuses, http.StatusCreated) {
		t.Fatalf("no registration won: %v", statuses)
	}
	h := sha256.Sum256([]byte("apns:" + tok))
	var g struct {
		UserID string `dynamodbav:"userId"`
	}
	if err := w.Env.Store.Get(context.Background(), "PUSHTOKEN#"+hex.EncodeToString(h[:]), "PUSHTOKEN", &g); err != nil || g.UserID != holders[0] {
		t.Fatalf("guard %+v (%v), holder %s", g, err, holders[0])
	}
}
