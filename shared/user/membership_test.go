package user_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// tableWorld is fixture.World with target accounts made to order: an
// existing account (own name, password, MFA, last sign-in) with an accepted
// membership of organization C and a membership of organization A in a given
// state of the transition table.
type tableWorld struct {
	*fixture.World
	hash string
	ip   atomic.Int64
}

const ownName = "Own Name"

type target struct {
	ID, Email, Token string
}

func (tw *tableWorld) target(t *testing.T, st user.MemberStatus) target {
	t.Helper()
	now := "2026-11-01T09:00:00.000Z"
	u := &user.User{ID: uuid.NewString(), Email: "t-" + uuid.NewString()[:12] + "@example.com", Name: ownName,
		Status: user.StatusActive, PasswordHash: tw.hash, MFAEnabled: true, MFASecret: "x", MFAMethod: "totp",
		LastLoginAt: now, CreatedAt: now, UpdatedAt: now}
	inC := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, OrgID: tw.C.ID, RoleID: role.OrgViewerID,
		RoleOwner: role.SystemOwner, Status: user.MemberActive, CreatedAt: now}
	inA := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, OrgID: tw.A.ID, RoleID: role.OrgTechnicianID,
		RoleOwner: role.SystemOwner, Status: st, InvitedName: "Given Name", CreatedAt: now}
	if inA.Accepted(u) {
		inA.InvitedName = ""
	}
	tok, inv, err := user.NewInvite(inA, "test", tw.Env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	tx := (&store.Tx{}).Add(user.CreateWrites(u)...).Add(user.AddMembershipWrite(inC), user.AddMembershipWrite(inA),
		tenant.CountOrg(tw.A.ID, "", tenant.CountMembers, 1), tenant.CountOrg(tw.C.ID, "", tenant.CountMembers, 1), store.Put(inv))
	if err := tw.Env.Store.Commit(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	return target{ID: u.ID, Email: u.Email, Token: tok}
}

// state reads the target's membership of A (MemberRemoved without one) and its account.
func (tw *tableWorld) state(t *testing.T, id string) (user.MemberStatus, *user.User) {
	t.Helper()
	ctx := context.Background()
	u, err := tw.Env.Users.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	k := user.MembershipKey(id, authz.ScopeOrg, "", tw.A.ID)
	var m user.Membership
	switch err := tw.Env.Store.Get(ctx, k.PK, k.SK, &m); {
	case errors.Is(err, store.ErrNotFound):
		return user.MemberRemoved, u
	case err != nil:
		t.Fatal(err)
	}
	return m.State(u), u
}

// play performs op on the target as caller (the target itself for accept).
func (tw *tableWorld) play(t *testing.T, op user.Op, caller string, tg target) fixture.Response {
	t.Helper()
	a := tw.A.ID
	switch op {
	case user.OpAccept:
		pw := "Wrong-Password-123!"
		if caller == "" {
			pw = strongPassword
		}
		ip := tw.ip.Add(1)
		return fixture.Do(t, tw.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/accept-invite",
			Body: map[string]any{"token": tg.Token, "password": pw}, RemoteAddr: fmt.Sprintf("203.0.113.%d:1", ip%250)})
	case user.OpSuspend:
		return tw.Call(t, http.MethodPatch, "/api/v1/users/"+tg.ID, caller, map[string]any{"orgId": a, "status": "disabled"})
	case user.OpRestore:
		return tw.Call(t, http.MethodPatch, "/api/v1/users/"+tg.ID, caller, map[string]any{"orgId": a, "status": "active"})
	case user.OpRename:
		return tw.Call(t, http.MethodPatch, "/api/v1/users/"+tg.ID, caller, map[string]any{"orgId": a, "name": "Renamed By Tenant"})
	case user.OpRole:
		return tw.Call(t, http.MethodPost, "/api/v1/users/"+tg.ID+"/role", caller, map[string]any{"orgId": a, "roleId": role.OrgViewerID})
	case user.OpResend:
		return tw.Call(t, http.MethodPost, "/api/v1/users/resend-invite", caller, map[string]any{"orgId": a, "userId": tg.ID})
	case user.OpRemove:
		return tw.Call(t, http.MethodDelete, "/api/v1/users/"+tg.ID+"?orgId="+a, caller, nil)
	}
	t.Fatalf("no op %s", op)
	return fixture.Response{}
}

// managers are the cast members who may manage a technician's membership of
// A; the others are refused (403 or 404) and change nothing.
var managers = map[string]bool{fixture.AAdmin: true, fixture.ANoMFA: true, fixture.PXAdmin: true, fixture.SysAdmin: true}

// TestMembershipTransitionTable plays every operation of the table from every
// state, by every member of the cast (and, for accept, by the account with its
// own password), and checks the state it leaves against user.Transitions.
func TestMembershipTransitionTable(t *testing.T) {
	t.Parallel()
	hash, err := passhash.Hash(strongPassword)
	if err != nil {
		t.Fatal(err)
	}
	tw := &tableWorld{World: fixture.NewWorld(t, "users", "auth"), hash: hash}
	callers := []string{""} // the account itself
	for name := range tw.Tokens {
		callers = append(callers, name)
	}
	var mu sync.Mutex
	cases := 0
	for _, st := range user.States {
		t.Run(string(st), func(t *testing.T) {
			t.Parallel()
			for _, op := range user.Ops {
				for _, caller := range callers {
					if caller == "" && op != user.OpAccept {
						continue // the account performs only its own acceptance
					}
					tg := tw.target(t, st)
					res := tw.play(t, op, caller, tg)
					got, u := tw.state(t, tg.ID)
					want, allowed := user.Next(st, op)
					by := map[bool]string{true: "the account", false: caller}[caller == ""]
					switch {
					case op == user.OpAccept && caller != "":
						allowed = false // another's password accepts nothing
					case op != user.OpAccept && !managers[caller]:
						allowed = false
					}
					// A system caller holds every account: suspending an accepted
					// membership disables the account instead (user.update), and
					// only it may rename an account that also belongs to C.
					accountWide := caller == fixture.SysAdmin && (st == user.MemberActive || st == user.MemberSuspended)
					if op == user.OpRename && (st == user.MemberActive || st == user.MemberSuspended) && !accountWide {
						allowed = false
					}
					if !allowed {
						want = st
						if res.Status < 400 {
							t.Errorf("%s from %s by %s answered %d, want a refusal: %s", op, st, by, res.Status, res.Body)
						}
					} else if res.Status >= 300 {
						t.Errorf("%s from %s by %s answered %d: %s", op, st, by, res.Status, res.Body)
					}
					if accountWide && op == user.OpSuspend {
						want = st
						if u.Status != user.StatusDisabled {
							t.Errorf("system suspend from %s left the account %s", st, u.Status)
						}
					} else if u.Status != user.StatusActive {
						t.Errorf("%s from %s by %s: account status %s", op, st, by, u.Status)
					}
					if got != want {
						t.Errorf("%s from %s by %s: state %s, want %s (answer %d %s)", op, st, by, got, want, res.Status, res.Body)
					}
					if got == user.MemberActive && st != user.MemberActive && st != user.MemberSuspended && op != user.OpAccept {
						t.Errorf("%s from %s by %s activated an unaccepted membership", op, st, by)
					}
					renamed := accountWide && op == user.OpRename
					if (u.Name == ownName) == renamed {
						t.Errorf("%s from %s by %s: account name %q", op, st, by, u.Name)
					}
					if caller == fixture.AAdmin && got != user.MemberRemoved {
						v := fixture.Expect(t, tw.Call(t, http.MethodGet, "/api/v1/users/"+tg.ID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
						accepted := got == user.MemberActive || got == user.MemberSuspended
						if !accepted && (v["name"] == ownName || v["mfaEnabled"] == true || v["lastLoginAt"] != nil) {
							t.Errorf("%s from %s: an unaccepted membership shows the account's own fields: %v", op, st, v)
						}
						if accepted && (v["name"] != ownName || v["mfaEnabled"] != true) {
							t.Errorf("%s from %s: an accepted membership hides the account: %v", op, st, v)
						}
					}
					mu.Lock()
					cases++
					mu.Unlock()
				}
			}
		})
	}
	t.Cleanup(func() { t.Logf("transition table: %d cases (states x operations x callers)", cases) })
}

// Finding 2 of issue 18: another tenant's admin invited an existing account,
// suspended the invitation, then restored it: the membership became active
// without acceptance, the account could then be renamed and disabled, its
// owner's next sign-in could land in the attacker's tenant, and GET showed
// the account's own name, MFA state and last sign-in.
func TestInviteSuspendRestoreNeverActivates(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID,
		Password: strongPassword, Name: "Victim Own Name", TOTP: false})
	path := "/api/v1/users/" + victim.UserID
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.CAdmin,
		map[string]any{"email": victim.Email, "name": "Attacker Given", "roleId": role.OrgAdminID}), http.StatusCreated)
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"status": "disabled"}), http.StatusOK)
	v := fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"status": "active"}), http.StatusOK).JSON(t)
	if v["status"] != "invited" || v["name"] != "Attacker Given" || v["mfaEnabled"] != false || v["lastLoginAt"] != nil {
		t.Fatalf("restored invitation shows %v", v)
	}
	k := user.MembershipKey(victim.UserID, authz.ScopeOrg, "", w.C.ID)
	var m user.Membership
	if err := w.Env.Store.Get(context.Background(), k.PK, k.SK, &m); err != nil || m.Status != user.MemberInvited {
		t.Fatalf("membership after suspend and restore: %s, %v", m.Status, err)
	}
	// A second restore is refused: only acceptance activates.
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"status": "active"}), http.StatusBadRequest, "bad_request")
	// The account-wide fields stay the owner's.
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"name": "Renamed"}), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"status": "disabled"}), http.StatusOK)
	u, err := w.Env.Users.Get(context.Background(), victim.UserID)
	if err != nil || u.Name != "Victim Own Name" || u.Status != user.StatusActive {
		t.Fatalf("account after the attacker's writes: %+v, %v", u, err)
	}
	// The owner's sign-in lands in their own organization.
	login := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/auth/login", "", map[string]any{"email": victim.Email, "password": strongPassword}), http.StatusOK)
	me := fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/auth/me", Token: accessToken(t, login)})
	if body := fixture.Expect(t, me, http.StatusOK).JSON(t); !strings.Contains(string(me.Body), w.A.ID) || strings.Contains(string(me.Body), w.C.ID) {
		t.Fatalf("sign-in landed elsewhere: %v", body)
	}
}

func accessToken(t *testing.T, res fixture.Response) string {
	t.Helper()
	var body struct {
		Tokens struct{ AccessToken string }
	}
	res.Decode(t, &body)
	return body.Tokens.AccessToken
}
