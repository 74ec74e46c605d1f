package tests

// Attack tests of the reviewer (ATTACKS.md) against issues 18, 22 and 23 and
// the outbound guard: sequences and races that must keep the invariants. Each
// test here passes; it stays as a regression test of what it attacks.

import (
	"context"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
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

type attackReviewDetail struct {
	ID           string
	Status       string
	RevokedCount *int
	Items        []struct{ ID, UserID, Decision string }
}

func attackReviewOf(t *testing.T, w *fixture.World, caller string) attackReviewDetail {
	t.Helper()
	id := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/access-reviews", caller, map[string]any{"name": "attack"}), http.StatusCreated).JSON(t)["id"].(string)
	return attackReviewGet(t, w, caller, id)
}

func attackReviewGet(t *testing.T, w *fixture.World, caller, id string) attackReviewDetail {
	t.Helper()
	var d attackReviewDetail
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/access-reviews/"+id, caller, nil), http.StatusOK).Decode(t, &d)
	return d
}

// Classes 1 and 9 on access reviews: 20 concurrent completions raced with 20
// decisions flipping one item: no 5xx, exactly one completion wins, and the
// completed review reports exactly the revocations its items show; afterwards
// it is immutable, and no other tenant reaches it.
func TestAttackReviewCompletionRaces(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	base := "/api/v1/access-reviews/"
	d := attackReviewOf(t, w, fixture.AAdmin)
	var flip string
	for _, it := range d.Items {
		if it.UserID == w.Users[fixture.AViewer] {
			flip = it.ID
		}
		fixture.Expect(t, w.Call(t, http.MethodPatch, base+d.ID+"/items/"+it.ID, fixture.AAdmin, map[string]any{"decision": "approved"}), http.StatusOK)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	wins := 0
	var bad []string
	for i := range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var res fixture.Response
			if i%2 == 0 {
				res = w.Call(t, http.MethodPost, base+d.ID+"/complete", fixture.AAdmin, nil)
			} else {
				dec := []string{"revoked", "approved"}[i/2%2]
				res = w.Call(t, http.MethodPatch, base+d.ID+"/items/"+flip, fixture.AAdmin, map[string]any{"decision": dec})
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case res.Status >= 500:
				bad = append(bad, fmt.Sprintf("%d %s", res.Status, res.Body))
			case i%2 == 0 && res.Status == http.StatusOK:
				wins++
			}
		}()
	}
	wg.Wait()
	for _, b := range bad {
		t.Error(b)
	}
	if wins > 1 {
		t.Fatalf("%d completions answered 200", wins)
	}
	if wins == 0 {
		fixture.Expect(t, w.Call(t, http.MethodPost, base+d.ID+"/complete", fixture.AAdmin, nil), http.StatusOK)
	}
	after := attackReviewGet(t, w, fixture.AAdmin, d.ID)
	revoked := 0
	for _, it := range after.Items {
		if it.Decision == "revoked" {
			revoked++
		}
	}
	if after.Status != "completed" || after.RevokedCount == nil || *after.RevokedCount != revoked {
		t.Fatalf("completed review %+v shows %d revoked items", after, revoked)
	}
	viewerGone := true
	for _, m := range attackMembers(t, w, w.A.ID) {
		if m == w.Users[fixture.AViewer] {
			viewerGone = false
		}
	}
	if (revoked == 1) != viewerGone {
		t.Fatalf("revoked items %d, viewer removed %v", revoked, viewerGone)
	}
	// Immutable once completed, and invisible to every other tenant.
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+d.ID+"/items/"+flip, fixture.AAdmin, map[string]any{"decision": "pending"}), http.StatusBadRequest, "bad_request")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+d.ID+"/complete", fixture.AAdmin, nil), http.StatusBadRequest, "bad_request")
	for _, c := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PXAdmin, fixture.PYAdmin} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+d.ID, c, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+d.ID+"/items/"+flip, c, map[string]any{"decision": "pending"}))
	}
}

func attackMembers(t *testing.T, w *fixture.World, orgID string) []string {
	t.Helper()
	ms, err := w.Env.Users.Members(context.Background(), authz.ScopeOrg, "", orgID)
	if err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, m := range ms {
		out = append(out, m.UserID)
	}
	return out
}

// Class 1 and 3 on reviews: another tenant's item id under one's own review
// is unknown, and a restricted or lower caller cannot decide.
func TestAttackReviewForeignItemsAndLowerCallers(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	base := "/api/v1/access-reviews/"
	a := attackReviewOf(t, w, fixture.AAdmin)
	b := attackReviewOf(t, w, fixture.BAdmin)
	for _, it := range a.Items {
		// A's item under B's review, as B.
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+b.ID+"/items/"+it.ID, fixture.BAdmin, map[string]any{"decision": "revoked"}))
		res := w.Call(t, http.MethodPatch, base+a.ID+"/items/"+it.ID, fixture.ARestricted, map[string]any{"decision": "revoked"})
		fixture.ExpectError(t, res, http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+a.ID+"/items/"+it.ID, fixture.AViewer, map[string]any{"decision": "revoked"}), http.StatusForbidden, "forbidden")
	}
	for _, it := range attackReviewGet(t, w, fixture.AAdmin, a.ID).Items {
		if it.Decision != "pending" {
			t.Fatalf("item changed: %+v", it)
		}
	}
	if ms := attackMembers(t, w, w.B.ID); len(ms) != 1 {
		t.Fatalf("B's members changed: %v", ms)
	}
}

// syncBuffer is a log sink safe for concurrent handlers.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Classes 1, 3, 4, 7 and 12 on SSO provider management: another tenant's
// provider by id is 404 on every route and unchanged; lower and restricted
// callers cannot write; an issuer and client id pair cannot be registered by
// another tenant; the client secret is never answered, stored in clear or
// logged; the public routes answer unknown and known organizations alike and
// never 500 on garbage.
//
// Not parallel: it captures the process's default logger for its duration.
func TestAttackSSOProvidersAcrossTenantsAndSecrets(t *testing.T) {
	env := testenv.New(t, "OUTBOUND_ALLOW_CIDRS", "127.0.0.1/32", "APP_URL", "https://app.gale.test", "API_URL", "https://api.gale.test",
		"LOG_LEVEL", "debug")
	logs := &syncBuffer{}
	env.Log = httpapi.NewLogger(logs, slog.LevelDebug)
	prev := slog.Default()
	slog.SetDefault(env.Log)
	t.Cleanup(func() { slog.SetDefault(prev) })
	w := &fixture.World{Env: env, Tokens: map[string]string{}, Users: map[string]string{}}
	w.API = fixture.API(t, env, "sso", "auth")
	px, py := fixture.Partner(t, env, "Partner X"), fixture.Partner(t, env, "Partner Y")
	a, b, c := fixture.Org(t, env, px.ID, "Alpha"), fixture.Org(t, env, px.ID, "Bravo"), fixture.Org(t, env, py.ID, "Charlie")
	site := fixture.Site(t, env, a.ID, "A one")
	for name, m := range map[string]fixture.Member{
		fixture.PXAdmin:     {Scope: authz.ScopePartner, PartnerID: px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		fixture.PXSelectedB: {Scope: authz.ScopePartner, PartnerID: px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{b.ID}, MFA: true, TOTP: true},
		fixture.PYAdmin:     {Scope: authz.ScopePartner, PartnerID: py.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		fixture.AAdmin:      {Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: a.ID, RoleID: role.OrgAdminID, MFA: true},
		fixture.AViewer:     {Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: a.ID, RoleID: role.OrgViewerID, MFA: true},
		fixture.ATech:       {Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: a.ID, RoleID: role.OrgTechnicianID, MFA: true},
		fixture.ARestricted: {Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: a.ID, RoleID: role.OrgAdminID, SiteIDs: []string{site.ID}, MFA: true},
		fixture.BAdmin:      {Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: b.ID, RoleID: role.OrgAdminID, MFA: true},
		fixture.CAdmin:      {Scope: authz.ScopeOrg, PartnerID: py.ID, OrgID: c.ID, RoleID: role.OrgAdminID, MFA: true},
	} {
		u := fixture.User(t, env, m)
		w.Tokens[name], w.Users[name] = u.Token, u.UserID
	}
	const secret1, secret2 = "Sso-Client-Secret-One-0f3c9a", "Sso-Client-Secret-Two-7be21d"
	const issuer = "https://127.0.0.1:1/realms/alpha"
	base := "/api/v1/sso/providers"
	res := w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Alpha IdP", "issuer": issuer,
		"clientId": "gale-alpha", "clientSecret": secret1})
	fixture.Expect(t, res, http.StatusCreated)
	id := res.JSON(t)["id"].(string)
	answers := []string{string(res.Body)}
	res = w.Call(t, http.MethodPatch, base+"/"+id, fixture.AAdmin, map[string]any{"clientSecret": secret2})
	answers = append(answers, string(fixture.Expect(t, res, http.StatusOK).Body))
	res = w.Call(t, http.MethodPost, base+"/"+id+"/status", fixture.AAdmin, map[string]any{"status": "active"})
	answers = append(answers, string(fixture.Expect(t, res, http.StatusOK).Body))
	snapshot := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).Body
	answers = append(answers, string(snapshot))

	// Another partner, another organization, a partner without access to A:
	// 404 everywhere, and nothing changes.
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin, fixture.PXSelectedB} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+id, caller, map[string]any{"name": "owned", "enforceSSO": true}))
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+id+"/status", caller, map[string]any{"status": "inactive"}))
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+id+"/test", caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/"+id, caller, nil))
		list := w.Call(t, http.MethodGet, base+"?orgId="+a.ID, caller, nil)
		if list.Status == http.StatusOK && strings.Contains(string(list.Body), id) {
			t.Fatalf("%s lists A's provider: %s", caller, list.Body)
		}
		if strings.Contains(string(list.Body), "Alpha IdP") {
			t.Fatalf("%s sees A's provider name: %s", caller, list.Body)
		}
	}
	// Lower roles and a site-restricted administrator of A cannot write.
	for _, caller := range []string{fixture.AViewer, fixture.ATech, fixture.ARestricted} {
		fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id, caller, map[string]any{"enforceSSO": true}), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/status", caller, map[string]any{"status": "inactive"}), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/"+id, caller, nil), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.Call(t, http.MethodPost, base, caller, map[string]any{"name": "x", "issuer": "https://127.0.0.1:2/x", "clientId": "x"}), http.StatusForbidden, "forbidden")
	}
	if after := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).Body; string(after) != string(snapshot) {
		t.Fatalf("A's provider changed:\n%s\n%s", snapshot, after)
	}
	// Another tenant registering A's IdP application (same issuer and client id) is refused.
	for _, caller := range []string{fixture.CAdmin, fixture.BAdmin} {
		fixture.ExpectError(t, w.Call(t, http.MethodPost, base, caller, map[string]any{"name": "harvest", "issuer": issuer,
			"clientId": "gale-alpha", "clientSecret": "x"}), http.StatusConflict, "conflict")
	}
	// A provider of another organization cannot be moved into A's reach.
	cRes := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.CAdmin, map[string]any{"name": "Charlie IdP",
		"issuer": "https://127.0.0.1:1/realms/charlie", "clientId": "gale-charlie"}), http.StatusCreated)
	cid := cRes.JSON(t)["id"].(string)
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+cid, fixture.AAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+cid, fixture.PXAdmin, nil))
	// Nor can another tenant's provider take A's pair by PATCH, in one step or two.
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+cid, fixture.CAdmin, map[string]any{"issuer": issuer,
		"clientId": "gale-alpha"}), http.StatusConflict, "conflict")
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+cid, fixture.CAdmin, map[string]any{"issuer": issuer}), http.StatusOK)
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+cid, fixture.CAdmin, map[string]any{"clientId": "gale-alpha"}), http.StatusConflict, "conflict")
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+cid, fixture.CAdmin, map[string]any{"clientId": "gale-charlie-2"}), http.StatusOK)

	// 20 concurrent registrations of one pair by two tenants: exactly one wins.
	var wg sync.WaitGroup
	var created, conflicts atomic.Int32
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			caller := []string{fixture.BAdmin, fixture.CAdmin}[i%2]
			r := w.Call(t, http.MethodPost, base, caller, map[string]any{"name": fmt.Sprintf("race %d", i),
				"issuer": "https://127.0.0.1:1/realms/race", "clientId": "gale-race", "clientSecret": "x"})
			switch r.Status {
			case http.StatusCreated:
				created.Add(1)
			case http.StatusConflict:
				conflicts.Add(1)
			default:
				t.Errorf("racing create: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if created.Load() != 1 || conflicts.Load() != 19 {
		t.Fatalf("racing creates of one pair: %d created, %d conflicts", created.Load(), conflicts.Load())
	}

	// Public routes: an unknown organization looks like one without a
	// provider; garbage never answers 5xx.
	unknown := "5f0c7a52-3c8e-4d7e-9f1a-2b3c4d5e6f70"
	known := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/sso/check/"+b.ID, "", nil), http.StatusOK).Body
	other := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/sso/check/"+unknown, "", nil), http.StatusOK).Body
	if string(known) != string(other) {
		t.Fatalf("check tells an organization without a provider (%s) from an unknown id (%s)", known, other)
	}
	for _, path := range []string{"/api/v1/sso/callback?state=garbage&code=x", "/api/v1/sso/callback?state=&code=", "/api/v1/sso/callback",
		"/api/v1/sso/callback?error=access_denied&state=x", "/api/v1/sso/login/not-a-uuid", "/api/v1/sso/login/" + unknown,
		"/api/v1/sso/check/not-a-uuid", "/api/v1/sso/callback?state=" + strings.Repeat("a", 5000) + "&code=x"} {
		if r := w.Call(t, http.MethodGet, path, "", nil); r.Status >= 500 || r.Status == http.StatusOK && strings.Contains(path, "callback") {
			t.Fatalf("GET %.80s: %d %s", path, r.Status, r.Body)
		}
	}
	for _, body := range []any{map[string]any{"code": "x"}, map[string]any{"code": strings.Repeat("x", 300)}, map[string]any{"code": 7},
		map[string]any{"code": "x", "Code": "y"}, `{"code":"x","code":"y"}`, map[string]any{}} {
		if r := w.Call(t, http.MethodPost, "/api/v1/sso/exchange", "", body); r.Status < 400 || r.Status >= 500 {
			t.Fatalf("exchange %v: %d %s", body, r.Status, r.Body)
		}
	}

	// Class 12: neither secret in any answer, the table or the logs.
	scan := fixture.Scan(t, env)
	for _, s := range []string{secret1, secret2} {
		for i, ans := range answers {
			if strings.Contains(ans, s) {
				t.Fatalf("answer %d holds the client secret: %s", i, ans)
			}
		}
		if strings.Contains(scan, strings.ToLower(s)) {
			t.Fatal("the table holds the client secret in clear")
		}
		if strings.Contains(logs.String(), s) {
			t.Fatal("the logs hold the client secret")
		}
	}
	if !strings.Contains(logs.String(), "sso callback refused") {
		t.Fatal("the log capture saw nothing: the scan of the logs proves nothing")
	}
}

// unsafeURLs are destinations every user-given URL must refuse: loopback,
// private, link-local and metadata addresses in numeric-host forms and in
// every IPv6 form embedding an IPv4 address.
var unsafeURLs = []string{
	"https://127.0.0.1/", "https://127.0.0.1./x", "https://2130706433/", "https://0x7f000001/", "https://0X7F.0.0.1/",
	"https://0177.0.0.1/", "https://127.1/", "https://127.000.000.001/", "https://0/", "https://0.0.0.0/",
	"https://169.254.169.254/latest/meta-data/", "https://100.100.100.200/", "https://192.0.0.192/", "https://[fd00:ec2::254]/",
	"https://[::1]/", "https://[::]/", "https://[::127.0.0.1]/", "https://[0:0:0:0:0:0:0:1]/",
	"https://[::ffff:127.0.0.1]/", "https://[::ffff:7f00:1]/", "https://[0:0:0:0:0:ffff:a9fe:a9fe]/",
	"https://[::ffff:0:127.0.0.1]/", "https://[::ffff:0:a9fe:a9fe]/", "https://[64:ff9b::127.0.0.1]/",
	"https://[64:ff9b::a9fe:a9fe]/", "https://[64:ff9b:1::8.8.8.8]/", "https://[2002:7f00:1::1]/", "https://[2002:a9fe:a9fe::]/",
	"https://[2001:0:4136:e378:8000:63bf:80ff:fffe]/", "https://[2001:0:a9fe:a9fe::1]/", "https://[fe80::1%25eth0]/",
	"https://localhost/", "https://LOCALHOST./", "https://metadata.localhost/", "https://printer.local/", "https://intranet/",
	"http://hooks.example.com/", "https://xn--80ak6aa92e.com\u0000/", "https://\uff11\uff12\uff17.0.0.1/",
}

// Class 11 through the routes: a webhook URL (create and PATCH) and an SSO
// issuer given in any unsafe form answer 400 naming the field and store
// nothing.
func TestAttackOutboundURLsRefusedAtTheRoutes(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "webhooks", "sso")
	hook := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/webhooks", fixture.AAdmin, map[string]any{"name": "ok",
		"url": "https://93.184.216.34/in", "events": []string{"device.online"}}), http.StatusCreated).JSON(t)["id"].(string)
	before := fixture.Scan(t, w.Env)
	for _, u := range unsafeURLs {
		for _, c := range []struct {
			method, path, field string
			body                map[string]any
		}{
			{http.MethodPost, "/api/v1/webhooks", "url", map[string]any{"name": "x", "url": u, "events": []string{"device.online"}}},
			{http.MethodPatch, "/api/v1/webhooks/" + hook, "url", map[string]any{"url": u}},
			{http.MethodPost, "/api/v1/sso/providers", "issuer", map[string]any{"name": "x", "issuer": u, "clientId": "c"}},
		} {
			res := w.Call(t, c.method, c.path, fixture.AAdmin, c.body)
			if res.Status != http.StatusBadRequest {
				t.Errorf("%s %s with %q: %d %s", c.method, c.path, u, res.Status, res.Body)
				continue
			}
			fixture.Invalid(t, res, c.field)
		}
	}
	if after := fixture.Scan(t, w.Env); strings.Count(after, "\n") != strings.Count(before, "\n") {
		t.Fatal("a refused URL left rows behind")
	}
}

// Class 11 at dial time: the outbound client follows no redirect (a provider
// or receiver answering 302 to the metadata address gets its 302 back, and
// the metadata address is never dialled), and a name that resolves to a
// blocked address after it was validated is refused when dialled.
func TestAttackOutboundClientFollowsNoRedirectAndRechecksAtDial(t *testing.T) {
	t.Parallel()
	var metadataHits atomic.Int32
	meta := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { metadataHits.Add(1) }))
	defer meta.Close()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		to := map[string]string{"/meta": "https://169.254.169.254/latest/meta-data/", "/loop": meta.URL + "/x",
			"/mapped": "https://[::ffff:169.254.169.254]/"}[r.URL.Path]
		http.Redirect(w, r, to, http.StatusFound)
	}))
	defer srv.Close()
	ca := t.TempDir() + "/ca.pem"
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	g, err := outbound.NewGuard([]string{"127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := outbound.NewHTTPClient(g, ca, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/meta", "/loop", "/mapped"} {
		res, err := c.Get(srv.URL + p)
		if err != nil {
			t.Fatalf("GET %s: %v", p, err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusFound {
			t.Fatalf("GET %s: %d, want the 302 itself", p, res.StatusCode)
		}
	}
	if n := metadataHits.Load(); n != 0 {
		t.Fatalf("a redirect was followed %d times", n)
	}
	// DNS rebinding: public when validated, loopback or metadata when dialled.
	r := &flipResolver{first: netip.MustParseAddr("93.184.216.34")}
	g2 := &outbound.Guard{Resolver: r}
	if err := g2.Validate(context.Background(), "https://rebind.example.com/hook"); err != nil {
		t.Fatalf("validate: %v", err)
	}
	for _, later := range []string{"127.0.0.1", "169.254.169.254", "::ffff:169.254.169.254", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1"} {
		r.set(netip.MustParseAddr(later))
		_, err := g2.DialContext(context.Background(), "tcp", "rebind.example.com:443")
		var unsafe *outbound.UnsafeError
		if !errors.As(err, &unsafe) {
			t.Fatalf("dial after rebinding to %s: %v", later, err)
		}
	}
}

// flipResolver answers first until set is called.
type flipResolver struct {
	mu    sync.Mutex
	first netip.Addr
	later netip.Addr
}

func (f *flipResolver) set(a netip.Addr) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.later = a
}

func (f *flipResolver) LookupNetIP(_ context.Context, _, _ string) ([]netip.Addr, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.later.IsValid() {
		return []netip.Addr{f.later}, nil
	}
	return []netip.Addr{f.first}, nil
}

// attackToken issues a fresh invitation token for userID's pending membership
// of orgID (what resend-invite e-mails), straight in the table.
func attackToken(t *testing.T, w *fixture.World, userID, orgID string) string {
	t.Helper()
	ctx := context.Background()
	k := user.MembershipKey(userID, authz.ScopeOrg, "", orgID)
	var m user.Membership
	if err := w.Env.Store.Get(ctx, k.PK, k.SK, &m); err != nil {
		t.Fatal(err)
	}
	tok, inv, err := user.NewInvite(&m, "test", w.Env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Env.Store.Do(ctx, store.Put(inv)); err != nil {
		t.Fatal(err)
	}
	return tok
}

// Classes 8 and 9 on acceptance: a suspended invitation's token does not
// work; 20 concurrent acceptances of one token (from 20 addresses) raced with
// a suspension leave exactly one session at most, and the membership is
// active only if an acceptance committed before the suspension (whose sign-in
// the suspension may then refuse: the account is disabled).
func TestAttackAcceptanceReplaysAndRaces(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "auth")
	email := "newcomer-" + fmt.Sprint(time.Now().UnixNano()) + "@example.com"
	res := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.AAdmin,
		map[string]any{"email": email, "name": "Newcomer", "roleId": role.OrgViewerID}), http.StatusCreated)
	uid := res.JSON(t)["id"].(string)
	tok := attackToken(t, w, uid, w.A.ID)
	accept := func(i int) fixture.Response {
		return fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/accept-invite",
			Body: map[string]any{"token": tok, "password": attackPassword}, RemoteAddr: fmt.Sprintf("198.51.100.%d:1", 100+i)})
	}
	path := "/api/v1/users/" + uid
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"status": "disabled"}), http.StatusOK)
	if r := accept(0); r.Status < 400 || r.Status >= 500 {
		t.Fatalf("accepting a suspended invitation: %d %s", r.Status, r.Body)
	}
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"status": "active"}), http.StatusOK)
	var wg sync.WaitGroup
	var ok atomic.Int32
	var suspended fixture.Response
	for i := range 21 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == 20 {
				suspended = w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"status": "disabled"})
				return
			}
			r := accept(i + 1)
			switch {
			case r.Status == http.StatusOK:
				ok.Add(1)
			case r.Status >= 500:
				t.Errorf("accept: %d %s", r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	if ok.Load() > 1 {
		t.Fatalf("%d acceptances of one token answered 200", ok.Load())
	}
	st, _ := attackMembership(t, w, uid, w.A.ID)
	switch {
	case ok.Load() == 1 && st != user.MemberActive && st != user.MemberSuspended:
		t.Fatalf("accepted, yet the membership is %s", st)
	case ok.Load() == 0 && st != user.MemberInvitedSuspended:
		// An acceptance may commit and then lose its sign-in to the
		// suspension that lands between the two (the suspending admin holds
		// the account's one accepted membership, so it disables the account).
		// Then the membership is accepted and the account disabled; any other
		// accepted state without a 200 is a membership no acceptance made.
		u, err := w.Env.Users.Get(context.Background(), uid)
		if err != nil {
			t.Fatal(err)
		}
		if st != user.MemberActive || u.Status != user.StatusDisabled || suspended.Status != http.StatusOK {
			t.Fatalf("nobody accepted, yet the membership is %s and the account %s (suspend answered %d)", st, u.Status, suspended.Status)
		}
	}
	// The spent token never works again.
	if r := accept(30); r.Status < 400 || r.Status >= 500 {
		t.Fatalf("replayed token: %d %s", r.Status, r.Body)
	}
	// Class 12: neither the invitation token nor the password is stored in clear.
	scan := fixture.Scan(t, w.Env)
	for _, s := range []string{tok, attackPassword} {
		if strings.Contains(scan, strings.ToLower(s)) {
			t.Fatalf("the table holds %q in clear", s[:6])
		}
	}
}
