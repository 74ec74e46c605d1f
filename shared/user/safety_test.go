package user_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// victim is an account of organization B, with its own name and password.
func (w *world) victim(t *testing.T) fixture.Caller {
	t.Helper()
	return fixture.User(t, w.env, fixture.Member{Email: uniqueEmail("victim"), Name: "Victim Real Name",
		Password: strongPassword, Scope: authz.ScopeOrg, OrgID: w.C.ID, RoleID: role.OrgViewerID})
}

func (w *world) profile(t *testing.T, id string) *user.User {
	t.Helper()
	u, err := user.Store{St: w.env.Store}.Get(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// Finding 1: inviting an existing account claims nothing, reveals nothing, and
// lets the inviter change nothing of the account.
func TestInvitingAnExistingAccountRevealsAndChangesNothing(t *testing.T) {
	w := newWorld(t)
	v := w.victim(t)
	res := fixture.Expect(t, w.invite(t, w.adminA.Token, map[string]any{"email": v.Email, "name": "Whoever", "roleId": role.OrgViewerID}), 201).JSON(t)
	if res["name"] != "Whoever" || res["status"] != "invited" {
		t.Fatalf("invite answer reveals the account: %v", res)
	}
	got := fixture.Expect(t, w.do("GET", "/api/v1/users/"+v.UserID, w.adminA.Token, nil), 200).JSON(t)
	if got["name"] != "Whoever" || got["status"] != "invited" || got["lastLoginAt"] != nil {
		t.Fatalf("pending member shows the account: %v", got)
	}
	// Disabling and renaming the pending member touch only the invitation.
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"name": "Renamed"}), 200)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"status": "disabled"}), 200)
	u := w.profile(t, v.UserID)
	if u.Name != "Victim Real Name" || u.Status != user.StatusActive {
		t.Fatalf("the account changed: name %q status %q", u.Name, u.Status)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", v.Token, nil), 200)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/login", "", map[string]any{"email": v.Email, "password": strongPassword}), 200)
}

// accept accepts the newest invitation sent to email with password.
func (w *world) accept(t *testing.T, email, password string) fixture.Response {
	t.Helper()
	toks := tokens(t, email)
	if len(toks) == 0 {
		t.Fatal("no invitation sent")
	}
	return w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": toks[len(toks)-1], "password": password})
}

// Finding 1: once an account belongs to two tenants, neither changes what is
// account-wide; a status change suspends only its own membership.
func TestAccountWideFieldsNeedEveryMembership(t *testing.T) {
	w := newWorld(t)
	v := w.victim(t)
	fixture.Expect(t, w.invite(t, w.adminA.Token, map[string]any{"email": v.Email, "name": "V", "roleId": role.OrgViewerID}), 201)
	// An existing account accepts with its own password only.
	fixture.Expect(t, w.accept(t, v.Email, "Some-Other-Password-9!"), 401)
	fixture.Expect(t, w.accept(t, v.Email, strongPassword), 200)
	if u := w.profile(t, v.UserID); u.Name != "Victim Real Name" {
		t.Fatalf("acceptance renamed the account to %q", u.Name)
	}
	got := fixture.Expect(t, w.do("GET", "/api/v1/users/"+v.UserID, w.adminA.Token, nil), 200).JSON(t)
	if got["status"] != "active" || got["name"] != "Victim Real Name" {
		t.Fatalf("accepted member %v", got)
	}

	res := w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"name": "Pwned"})
	if fixture.Expect(t, res, 403); errorOf(t, res) != user.ErrAccountWide.Message {
		t.Fatalf("rename: %s", res.Body)
	}
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminC.Token, map[string]any{"name": "Pwned"}), 403)
	got = fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"status": "disabled"}), 200).JSON(t)
	if got["status"] != "disabled" {
		t.Fatalf("suspended member shows %v", got["status"])
	}
	u := w.profile(t, v.UserID)
	if u.Name != "Victim Real Name" || u.Status != user.StatusActive || u.TokensValidAfter != "" {
		t.Fatalf("the account changed: %+v", u)
	}
	// Organization B's session still works; B sees an active member.
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", v.Token, nil), 200)
	if s := fixture.Expect(t, w.do("GET", "/api/v1/users/"+v.UserID, w.adminC.Token, nil), 200).JSON(t)["status"]; s != "active" {
		t.Fatalf("B sees %v", s)
	}
	// A restores its own membership.
	got = fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"status": "active"}), 200).JSON(t)
	if got["status"] != "active" {
		t.Fatalf("restored member shows %v", got["status"])
	}
}

// The usual case stays as the spec writes it: an account whose every
// membership is the caller's is renamed and disabled account-wide.
func TestOwnAccountIsChangedAccountWide(t *testing.T) {
	w := newWorld(t)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.memberA.UserID, w.adminA.Token, map[string]any{"name": "Renamed", "status": "disabled"}), 200)
	u := w.profile(t, w.memberA.UserID)
	if u.Name != "Renamed" || u.Status != user.StatusDisabled {
		t.Fatalf("account %q %q", u.Name, u.Status)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 401)
}

// A suspended membership is refused at authentication.
func TestSuspendedMembershipIsRefused(t *testing.T) {
	w := newWorld(t)
	v := w.victim(t)
	fixture.Expect(t, w.invite(t, w.adminA.Token, map[string]any{"email": v.Email, "name": "V", "roleId": role.OrgViewerID}), 201)
	acc := fixture.Expect(t, w.accept(t, v.Email, strongPassword), 200).JSON(t)
	tokens, _ := acc["tokens"].(map[string]any)
	access, _ := tokens["accessToken"].(string)
	if access == "" {
		t.Fatalf("accept answered %v", acc)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", access, nil), 200)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+v.UserID, w.adminA.Token, map[string]any{"status": "disabled"}), 200)
	if e := errorOf(t, fixture.Expect(t, w.do("GET", "/api/v1/users/me", access, nil), 401)); e != "Account is disabled" {
		t.Fatalf("suspended membership: %q", e)
	}
}

// Finding 4: one tenant's invitation never revokes another's.
func TestInvitationsArePerScope(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("twice")
	fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201)
	first := tokens(t, email)[0]
	fixture.Expect(t, w.invite(t, w.adminC.Token, orgBody(email, role.OrgViewerID)), 201)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{"token": first}), 200)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": first, "password": strongPassword}), 200)
	// B's invitation is still open for the now existing account.
	fixture.Expect(t, w.accept(t, email, strongPassword), 200)
}

// Finding 3: a user administrator acts only on members within its level.
func TestNoActingAboveYourLevel(t *testing.T) {
	w := newWorld(t)
	rid := customRole(t, w.env, w.A.ID, authz.UsersRead, authz.UsersWrite, authz.UsersInvite, authz.UsersDelete)
	usersAdmin := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: rid,
		RoleOwner: role.OrgOwner(w.A.ID)})
	for _, tc := range []struct{ method, path string }{
		{"PATCH", "/api/v1/users/" + w.adminA.UserID},
		{"DELETE", "/api/v1/users/" + w.adminA.UserID},
		{"POST", "/api/v1/users/" + w.adminA.UserID + "/role"},
	} {
		body := map[string]any{"status": "disabled"}
		if tc.method == "POST" {
			body = map[string]any{"roleId": role.OrgViewerID}
		}
		if tc.method == "DELETE" {
			body = nil
		}
		res := w.do(tc.method, tc.path, usersAdmin.Token, body)
		if res.Status != http.StatusForbidden || errorOf(t, res) != user.ErrAboveLevel.Message {
			t.Fatalf("%s %s: %d %s", tc.method, tc.path, res.Status, res.Body)
		}
	}
	if u := w.profile(t, w.adminA.UserID); u.Status != user.StatusActive {
		t.Fatalf("admin status %s", u.Status)
	}
	// The viewer holds device, script and alert reads the caller lacks.
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.memberA.UserID, usersAdmin.Token, map[string]any{"status": "disabled"}), 403)
	// Within its level it still works.
	weaker := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID,
		RoleID: customRole(t, w.env, w.A.ID, authz.UsersRead), RoleOwner: role.OrgOwner(w.A.ID)})
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+weaker.UserID, usersAdmin.Token, map[string]any{"status": "disabled"}), 200)
}

// Finding 2: a site-restricted admin stays inside its restriction.
func TestRestrictedAdminStaysInside(t *testing.T) {
	w := newWorld(t)
	site := fixture.Site(t, w.env, w.A.ID, "HQ")
	other := fixture.Site(t, w.env, w.A.ID, "Branch")
	restricted := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID, SiteIDs: []string{site.ID}})
	res := w.invite(t, restricted.Token, orgBody(uniqueEmail("wide"), role.OrgViewerID))
	if fixture.Expect(t, res, 403); errorOf(t, res) != user.ErrWiderInvite.Message {
		t.Fatalf("unrestricted invite: %s", res.Body)
	}
	body := orgBody(uniqueEmail("other"), role.OrgViewerID)
	body["siteIds"] = []string{other.ID}
	fixture.Expect(t, w.invite(t, restricted.Token, body), 403)
	body["siteIds"] = []string{site.ID}
	fixture.Expect(t, w.invite(t, restricted.Token, body), 201)
	// The unrestricted admin and viewer are outside its reach.
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.adminA.UserID, restricted.Token, map[string]any{"status": "disabled"}), 403)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.memberA.UserID, restricted.Token, map[string]any{"status": "disabled"}), 403)
	fixture.Expect(t, w.do("DELETE", "/api/v1/users/"+w.memberA.UserID, restricted.Token, nil), 403)
}

// The last administrator stays; two admins demoting each other at once: one wins.
func TestLastAdministratorStays(t *testing.T) {
	w := newWorld(t)
	res := w.do("POST", "/api/v1/users/"+w.adminA.UserID+"/role", w.partnerAdmin.Token, map[string]any{"roleId": role.OrgViewerID, "orgId": w.A.ID})
	if fixture.Expect(t, res, 409); errorOf(t, res) != user.ErrLastAdmin.Message {
		t.Fatalf("demoting the last admin: %s", res.Body)
	}
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.adminA.UserID, w.partnerAdmin.Token, map[string]any{"status": "disabled", "orgId": w.A.ID}), 409)

	second := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	var wg sync.WaitGroup
	statuses := make([]int, 2)
	for i, pair := range [][2]fixture.Caller{{w.adminA, second}, {second, w.adminA}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = w.do("PATCH", "/api/v1/users/"+pair[1].UserID, pair[0].Token, map[string]any{"status": "disabled"}).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, s := range statuses {
		if s == http.StatusOK {
			ok++
		}
	}
	if ok != 1 {
		t.Fatalf("concurrent demotions answered %v; want exactly one 200", statuses)
	}
}

// Finding 3 for roles: a user administrator cannot strip or delete a role that
// holds more than it does; finding 2: a restricted admin changes nothing
// organization-wide.
func TestRolesAndSettingsStayAboveLowerCallers(t *testing.T) {
	w := newWorld(t)
	api := fixture.API(t, w.env, "roles", "organizations")
	do := func(method, path, token string, body any) fixture.Response {
		return fixture.Do(t, api, fixture.Request{Method: method, Path: path, Token: token, Body: body})
	}
	strong := customRole(t, w.env, w.A.ID, authz.DevicesRead, authz.DevicesWrite, authz.UsersRead)
	usersAdmin := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleOwner: role.OrgOwner(w.A.ID),
		RoleID: customRole(t, w.env, w.A.ID, authz.UsersRead, authz.UsersWrite, authz.UsersInvite, authz.UsersDelete)})
	strip := map[string]any{"permissions": []any{map[string]string{"resource": "users", "action": "read"}}}
	for _, res := range []fixture.Response{
		do("PATCH", "/api/v1/roles/"+strong, usersAdmin.Token, strip),
		do("DELETE", "/api/v1/roles/"+strong, usersAdmin.Token, nil),
	} {
		if fixture.Expect(t, res, 403); errorOf(t, res) != role.ErrAboveLevel.Message {
			t.Fatalf("role change above level: %s", res.Body)
		}
	}
	// The org admin, who holds all of it, may.
	fixture.Expect(t, do("PATCH", "/api/v1/roles/"+strong, w.adminA.Token, strip), 200)

	site := fixture.Site(t, w.env, w.A.ID, "HQ")
	restricted := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID,
		SiteIDs: []string{site.ID}, MFA: true})
	for _, res := range []fixture.Response{
		do("PATCH", "/api/v1/organizations/"+w.A.ID, restricted.Token, map[string]any{"name": "Mine now"}),
		do("PUT", "/api/v1/organizations/"+w.A.ID+"/security-settings", restricted.Token, map[string]any{"requireMfa": false, "allowedMfaMethods": []string{"sms"}}),
		do("POST", "/api/v1/roles", restricted.Token, map[string]any{"name": "Wide", "permissions": []any{map[string]string{"resource": "devices", "action": "read"}}}),
		do("DELETE", "/api/v1/roles/"+strong, restricted.Token, nil),
	} {
		if fixture.Expect(t, res, 403); errorOf(t, res) != authz.ErrRestrictedWide.Message {
			t.Fatalf("organization-wide change by a restricted admin: %s", res.Body)
		}
	}
}

// Finding 11: invitations are bounded per address and inviter, and the e-mail
// carries none of the inviter's markup or links.
func TestInvitationLimitsAndPlainMail(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("spam")
	inviter := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID,
		Name: `<a href="https://evil.example/x">Click</a> http://evil.example`})
	body := map[string]any{"email": email, "name": `<b>x</b> https://phish.example`, "roleId": role.OrgViewerID}
	res := fixture.Expect(t, w.invite(t, inviter.Token, body), 201).JSON(t)
	id := res["id"].(string)
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", inviter.Token, map[string]any{"userId": id}), 200)
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", inviter.Token, map[string]any{"userId": id}), 200)
	limited := fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", inviter.Token, map[string]any{"userId": id}), 429)
	if limited.Header.Get("Retry-After") == "" {
		t.Fatalf("no Retry-After: %v", limited.Header)
	}
	mails := testenv.SentEmails(t, email)
	if len(mails) != 3 {
		t.Fatalf("%d e-mails sent, want 3", len(mails))
	}
	for _, m := range mails {
		if strings.Contains(m.Body, "<") || strings.Contains(m.Body, "evil") || strings.Contains(m.Body, "phish") ||
			strings.Count(m.Body, "://") != 1 {
			t.Fatalf("inviter-chosen markup reached the e-mail:\n%s", m.Body)
		}
	}
	// Per inviter: 20 an hour (four used above, the refused resend included).
	for i := 0; i < 16; i++ {
		fixture.Expect(t, w.invite(t, inviter.Token, orgBody(uniqueEmail("many"), role.OrgViewerID)), 201)
	}
	fixture.Expect(t, w.invite(t, inviter.Token, orgBody(uniqueEmail("many"), role.OrgViewerID)), 429)
}

// Accepting an invitation is a password sign-in like the login's: an account
// with a second factor gets the MFA step, never tokens on the password alone
// (else a mailbox and a forgotten-password reset would be a whole takeover).
func TestAcceptingAnInvitationKeepsTheAccountsMFA(t *testing.T) {
	w := newWorld(t)
	v := fixture.User(t, w.env, fixture.Member{Email: uniqueEmail("mfa-victim"), Name: "Victim", Password: strongPassword,
		Scope: authz.ScopeOrg, OrgID: w.C.ID, RoleID: role.OrgViewerID, TOTP: true})
	fixture.Expect(t, w.invite(t, w.adminA.Token, map[string]any{"email": v.Email, "name": "Guest", "roleId": role.OrgViewerID}), 201)
	got := fixture.Expect(t, w.accept(t, v.Email, strongPassword), http.StatusOK).JSON(t)
	if got["mfaRequired"] != true || got["tokens"] != nil {
		t.Fatalf("accepting an invitation skipped the second factor: %v", got)
	}
}

// TestDemotionReadsCustomRolesOnlyWhenNoBuiltinAdminRemains: the last-admin
// check resolves the holders of built-in roles without a read, and reads a
// custom role only when no built-in administrator is left; a custom role
// holding every organization-admin permission counts as an administrator,
// one holding less does not.
func TestDemotionReadsCustomRolesOnlyWhenNoBuiltinAdminRemains(t *testing.T) {
	w := fixture.NewWorld(t, "users", "auth", "roles")
	solo := fixture.Org(t, w.Env, w.PX.ID, "Solo")
	admin := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: solo.ID, RoleID: role.OrgAdminID, MFA: true})
	customRole := func(name string, perms []string) string {
		var ps []map[string]string
		for _, p := range perms {
			res, act, _ := strings.Cut(p, ":")
			ps = append(ps, map[string]string{"resource": res, "action": act})
		}
		res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/roles", Token: admin.Token,
			Body: map[string]any{"name": name, "permissions": ps}})
		id, _ := fixture.Expect(t, res, http.StatusCreated).JSON(t)["id"].(string)
		return id
	}
	var orgAdmin []string
	for _, r := range role.SystemRoles() {
		if r.ID == role.OrgAdminID {
			orgAdmin = r.Permissions
		}
	}
	holder := func(roleID string) fixture.Caller {
		return fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: solo.ID, RoleID: roleID,
			RoleOwner: store.OrgPK(solo.ID), MFA: true})
	}
	full := holder(customRole("Full", orgAdmin))
	holder(customRole("Writer", []string{"devices:read"}))
	demote := func(who fixture.Caller) fixture.Response {
		return w.Call(t, http.MethodPost, "/api/v1/users/"+who.UserID+"/role", fixture.PXAdmin, map[string]any{"orgId": solo.ID, "roleId": role.OrgViewerID})
	}
	// A second built-in administrator: the custom roles are not read.
	second := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: solo.ID, RoleID: role.OrgAdminID})
	if res := fixture.Expect(t, demote(second), http.StatusOK); res.DBCalls != 7 {
		t.Fatalf("demoting one of two built-in administrators made %d DynamoDB calls, want 7", res.DBCalls)
	}
	// The last built-in administrator: the custom "Full" holder keeps the
	// organization administered (one Query of the organization's roles).
	if res := fixture.Expect(t, demote(admin), http.StatusOK); res.DBCalls != 8 {
		t.Fatalf("demoting the last built-in administrator made %d DynamoDB calls, want 8", res.DBCalls)
	}
	// "Writer" is no administrator: "Full" is the last one. (Full's own role
	// is resolved twice, by the level check and the last-admin check.)
	res := fixture.Expect(t, demote(full), http.StatusConflict)
	if errorOf(t, res) != user.ErrLastAdmin.Message || res.DBCalls != 10 {
		t.Fatalf("demoting the last (custom-role) administrator: %d calls, %s", res.DBCalls, res.Body)
	}
}

// Issue 30: an existing account's password, tried through an invitation from
// 50 addresses at once, is verified at most five times (each attempt counts
// on the account's login lock before the check); then the right password is
// refused there and at login alike.
func TestAcceptInviteCountsOnTheLoginLockUnderABurst(t *testing.T) {
	w := newWorld(t)
	v := w.victim(t)
	fixture.Expect(t, w.invite(t, w.adminA.Token, map[string]any{"email": v.Email, "name": "V", "roleId": role.OrgViewerID}), 201)
	toks := tokens(t, v.Email)
	h := fixture.API(t, w.env, "users", "auth")
	accept := func(password, ip string) fixture.Response {
		return fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/accept-invite", RemoteAddr: ip + ":1",
			Body: map[string]any{"token": toks[len(toks)-1], "password": password}})
	}
	before := passhash.Verifications()
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = accept("Some-Other-Password-9!", fmt.Sprintf("198.18.%d.%d", i/200, 1+i%200)).Status
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 401 {
			t.Fatalf("attempt %d answered %d", i, c)
		}
	}
	if n := passhash.Verifications() - before; n > int64(signin.Lockout.Limit) {
		t.Fatalf("%d passwords verified; want at most %d", n, signin.Lockout.Limit)
	}
	fixture.Expect(t, accept(strongPassword, "198.18.9.9"), 401)
	fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/login", RemoteAddr: "198.18.9.10:1",
		Body: map[string]any{"email": v.Email, "password": strongPassword}}), 401)
	w.env.Clock.Advance(signin.LockDuration + time.Second)
	fixture.Expect(t, accept(strongPassword, "198.18.9.11"), 200)
}
