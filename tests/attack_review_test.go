package tests

// Attack tests of the reviewer (ATTACKS.md) against issues 18, 22 and 23 and
// the outbound guard: sequences and races that must keep the invariants. Each
// test here passes; it stays as a regression test of what it attacks.

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

const attackPassword = "Marmalade-Otter-77!"

// attackMembership reads userID's membership of organization orgID ("" state
// when there is none).
func attackMembership(t *testing.T, w *fixture.World, userID, orgID string) (user.MemberStatus, bool) {
	t.Helper()
	k := user.MembershipKey(userID, authz.ScopeOrg, "", orgID)
	var m user.Membership
	err := w.Env.Store.Get(context.Background(), k.PK, k.SK, &m)
	if err != nil {
		if user.IsNotFound(err) {
			return "", false
		}
		t.Fatal(err)
	}
	u, err := w.Env.Users.Get(context.Background(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return m.State(u), true
}

// Class 2: another tenant invites an existing account's e-mail and plays every
// tenant-side write on the invitation, in sequence. The membership never
// becomes active, the tenant never sees the account's own name, MFA state or
// last sign-in, and the account's name and status never change.
func TestAttackInvitationSequencesNeverActivate(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.B.ID,
		RoleID: role.OrgAdminID, MFA: true, TOTP: true, Name: "Real Owner Name", Password: attackPassword})
	pk := user.ProfileKey(victim.UserID)
	if err := w.Env.Store.Do(context.Background(), store.Set(pk.PK, pk.SK, "lastLoginAt", "2026-10-30T08:00:00.000Z")); err != nil {
		t.Fatal(err)
	}
	for _, attacker := range []struct {
		caller, orgID string // orgID: the organization the invitation lands in
	}{{fixture.CAdmin, w.C.ID}, {fixture.AAdmin, w.A.ID}} {
		path := "/api/v1/users/" + victim.UserID
		check := func(step string) {
			t.Helper()
			res := w.Call(t, http.MethodGet, path, attacker.caller, nil)
			if res.Status == http.StatusNotFound {
				if st, ok := attackMembership(t, w, victim.UserID, attacker.orgID); ok {
					t.Fatalf("%s after %s: 404 while the membership exists (%s)", attacker.caller, step, st)
				}
				return
			}
			fixture.Expect(t, res, http.StatusOK)
			var m struct {
				Name, Status, LastLoginAt string
				MFAEnabled                bool
			}
			res.Decode(t, &m)
			if m.Name == "Real Owner Name" || m.MFAEnabled || m.LastLoginAt != "" || (m.Status != "invited" && m.Status != "disabled") {
				t.Fatalf("%s after %s sees %s", attacker.caller, step, res.Body)
			}
			st, _ := attackMembership(t, w, victim.UserID, attacker.orgID)
			if st != user.MemberInvited && st != user.MemberInvitedSuspended {
				t.Fatalf("%s after %s: membership state %s", attacker.caller, step, st)
			}
			u, err := w.Env.Users.Get(context.Background(), victim.UserID)
			if err != nil {
				t.Fatal(err)
			}
			if u.Name != "Real Owner Name" || u.Status != user.StatusActive {
				t.Fatalf("%s after %s changed the account: %q %s", attacker.caller, step, u.Name, u.Status)
			}
		}
		invite := func() {
			res := w.Call(t, http.MethodPost, "/api/v1/users/invite", attacker.caller, map[string]any{"email": strings.ToUpper(victim.Email),
				"name": "Guest", "roleId": role.OrgViewerID})
			fixture.Expect(t, res, http.StatusCreated)
			if res.JSON(t)["name"] != "Guest" || res.JSON(t)["status"] != "invited" {
				t.Fatalf("invite answer reveals the account: %s", res.Body)
			}
		}
		invite()
		check("invite")
		steps := []struct {
			name, method, path string
			body               any
		}{
			{"suspend", http.MethodPatch, path, map[string]any{"status": "disabled"}},
			{"restore", http.MethodPatch, path, map[string]any{"status": "active"}},
			{"restore again", http.MethodPatch, path, map[string]any{"status": "active"}},
			{"rename", http.MethodPatch, path, map[string]any{"name": "Renamed Guest"}},
			{"rename and restore", http.MethodPatch, path, map[string]any{"name": "Real Owner Name 2", "status": "active"}},
			{"role", http.MethodPost, path + "/role", map[string]any{"roleId": role.OrgAdminID}},
			{"suspend", http.MethodPatch, path, map[string]any{"status": "disabled"}},
			{"role while suspended", http.MethodPost, path + "/role", map[string]any{"roleId": role.OrgTechnicianID}},
			{"resend while suspended", http.MethodPost, "/api/v1/users/resend-invite", map[string]any{"userId": victim.UserID}},
			{"restore", http.MethodPatch, path, map[string]any{"status": "active"}},
			{"resend", http.MethodPost, "/api/v1/users/resend-invite", map[string]any{"userId": victim.UserID}},
			{"remove", http.MethodDelete, path, nil},
			{"suspend after removal", http.MethodPatch, path, map[string]any{"status": "disabled"}},
		}
		for _, s := range steps {
			res := w.Call(t, s.method, s.path, attacker.caller, s.body)
			if res.Status >= 500 {
				t.Fatalf("%s %s: %d %s", attacker.caller, s.name, res.Status, res.Body)
			}
			check(s.name)
		}
		invite()
		check("re-invite")
		fixture.Expect(t, w.Call(t, http.MethodPatch, path, attacker.caller, map[string]any{"status": "disabled"}), http.StatusOK)
		fixture.Expect(t, w.Call(t, http.MethodPatch, path, attacker.caller, map[string]any{"status": "active"}), http.StatusOK)
		check("re-invite, suspend, restore")
		// The tenant cannot rename or disable the account itself either.
		fixture.Expect(t, w.Call(t, http.MethodDelete, path, attacker.caller, nil), http.StatusOK)
	}
	// The owner's password sign-in still needs the second factor and, once
	// through, lands in the owner's own tenant.
	login := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
		Body: map[string]any{"email": victim.Email, "password": attackPassword}, RemoteAddr: "198.51.100.20:1"})
	if fixture.Expect(t, login, http.StatusOK).JSON(t)["mfaRequired"] != true {
		t.Fatalf("login %s", login.Body)
	}
}

// Class 2, sign-in side: a partner-scope invitation (which would outrank the
// owner's organization membership in sign-in's scope choice) suspended and
// restored contributes nothing to the owner's next password sign-in.
func TestAttackPartnerInvitationDoesNotWinSignIn(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.B.ID,
		RoleID: role.OrgViewerID, MFA: true, Password: attackPassword})
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.PYAdmin,
		map[string]any{"email": victim.Email, "name": "Guest", "roleId": role.PartnerAdminID, "orgAccess": "all"}), http.StatusCreated)
	path := "/api/v1/users/" + victim.UserID
	for _, st := range []string{"disabled", "active", "disabled", "active"} {
		res := w.Call(t, http.MethodPatch, path, fixture.PYAdmin, map[string]any{"status": st})
		if res.Status != http.StatusOK && res.Status != http.StatusBadRequest {
			t.Fatalf("%s: %d %s", st, res.Status, res.Body)
		}
	}
	res := w.Call(t, http.MethodGet, path, fixture.PYAdmin, nil)
	if s := fixture.Expect(t, res, http.StatusOK).JSON(t)["status"]; s != "invited" {
		t.Fatalf("partner invitation after suspend/restore: %s", res.Body)
	}
	login := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/login",
		Body: map[string]any{"email": victim.Email, "password": attackPassword}, RemoteAddr: "198.51.100.21:1"})
	fixture.Expect(t, login, http.StatusOK)
	var out struct {
		User struct{ Scope, OrgID, PartnerID string }
	}
	login.Decode(t, &out)
	if out.User.Scope != "organization" || out.User.OrgID != w.B.ID {
		t.Fatalf("the owner's sign-in landed in %+v, want its own organization B", out.User)
	}
}

// Class 9: 30 concurrent suspend and restore calls on one invitation: no
// 5xx, and the invitation never turns into an active membership.
func TestAttackConcurrentSuspendRestoreOfInvitation(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.B.ID,
		RoleID: role.OrgViewerID, MFA: true})
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.CAdmin,
		map[string]any{"email": victim.Email, "name": "Guest", "roleId": role.OrgViewerID}), http.StatusCreated)
	path := "/api/v1/users/" + victim.UserID
	var wg sync.WaitGroup
	errs := make(chan string, 30)
	for i := range 30 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := "disabled"
			if i%2 == 1 {
				st = "active"
			}
			res := w.Call(t, http.MethodPatch, path, fixture.CAdmin, map[string]any{"status": st})
			if res.Status >= 500 {
				errs <- fmt.Sprintf("%d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if st, _ := attackMembership(t, w, victim.UserID, w.C.ID); st != user.MemberInvited && st != user.MemberInvitedSuspended {
		t.Fatalf("after the race the invitation is %s", st)
	}
}
