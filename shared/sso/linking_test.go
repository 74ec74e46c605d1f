package sso_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oauth2-proxy/mockoidc"
	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

const castPassword = "Correct-Horse-Battery-9"

// castProvider is one cast member's provider: the tenant it serves, a
// membership of that tenant and one of another tenant it never serves.
type castProvider struct {
	name    string
	idp     *idp
	id      string // the provider's id
	login   string // /sso/login/:orgId: the organization's or the partner's id
	served  fixture.Member
	foreign fixture.Member
}

// castProviders registers, with autoProvision on, the provider of
// organization A (partner X), of organization C of another partner (Y) and
// partner X's own provider.
func (w *world) castProviders(t *testing.T) []castProvider {
	t.Helper()
	orgA := fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgViewerID}
	orgC := fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgViewerID}
	partnerX := fixture.Member{Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerViewerID, OrgAccess: authz.OrgAccessAll}
	idpX := fixture.NewIdP(t, w.pki)
	cps := []castProvider{
		{name: "org provider of A", idp: w.idpA, login: w.a.ID, served: orgA, foreign: orgC},
		{name: "org provider of C (another partner)", idp: w.idpB, login: w.c.ID, served: orgC, foreign: orgA},
		// A's organization membership belongs to partner X's organization: the
		// partner's provider never serves it.
		{name: "partner provider of X", idp: idpX, login: w.px.ID, served: partnerX, foreign: orgA},
	}
	for i, admin := range []string{aAdmin, cAdmin, pxAdmin} {
		def := role.OrgViewerID
		if cps[i].served.Scope == authz.ScopePartner {
			def = role.PartnerViewerID
		}
		cps[i].id = w.provider(t, admin, "", cps[i].idp, map[string]any{"autoProvision": true, "defaultRoleId": def}).ID
	}
	return cps
}

// account writes an account straight into the table: status st, with a
// password when pw is set.
func (w *world) account(t testing.TB, email, pw string, st user.Status) *user.User {
	t.Helper()
	now := clock.Format(w.env.Clock.Now())
	u := &user.User{ID: uuid.NewString(), Email: email, Name: "Cast", Status: st, CreatedAt: now, UpdatedAt: now}
	if pw != "" {
		h, err := passhash.Hash(pw)
		if err != nil {
			t.Fatal(err)
		}
		u.PasswordHash, u.PasswordChangedAt = h, now
	}
	if err := w.env.Store.Commit(context.Background(), (&store.Tx{}).Add(user.CreateWrites(u)...)); err != nil {
		t.Fatal(err)
	}
	return u
}

// member gives account uid membership m in state st; an invitation also gets
// its token row, whose token it answers.
func (w *world) member(t testing.TB, uid string, m fixture.Member, st user.MemberStatus) string {
	t.Helper()
	mem := &user.Membership{ID: uuid.NewString(), UserID: uid, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID,
		RoleID: m.RoleID, RoleOwner: role.SystemOwner, OrgAccess: m.OrgAccess, Status: st,
		CreatedAt: clock.Format(w.env.Clock.Now())}
	tx := (&store.Tx{}).Add(user.AddMembershipWrite(mem))
	tok := ""
	if st == user.MemberInvited {
		var inv *user.Invite
		var err error
		if tok, inv, err = user.NewInvite(mem, "test", w.env.Clock.Now()); err != nil {
			t.Fatal(err)
		}
		tx.Add(store.Put(inv))
	}
	if err := w.env.Store.Commit(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	return tok
}

// linkCase is one row of the package doc's linking table: the kind of
// existing account (built for the provider cp), whether the provider says
// email_verified, and the outcome ("" for #ssoCode).
type linkCase struct {
	name       string
	unverified bool
	setup      func(t *testing.T, w *world, cp castProvider, email string)
	want       string
}

var linkingTable = []linkCase{
	{name: "new address", want: ""},
	{name: "new address, e-mail not verified", unverified: true, want: sso.CodeUserNotFound},
	{name: "active member served", want: "", setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, castPassword, user.StatusActive)
		w.member(t, u.ID, cp.served, user.MemberActive)
	}},
	{name: "active member served and member elsewhere", want: "", setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, castPassword, user.StatusActive)
		w.member(t, u.ID, cp.foreign, user.MemberActive)
		w.member(t, u.ID, cp.served, user.MemberActive)
	}},
	{name: "active member served, e-mail not verified", unverified: true, want: sso.CodeUserNotFound,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			u := w.account(t, email, castPassword, user.StatusActive)
			w.member(t, u.ID, cp.served, user.MemberActive)
		}},
	{name: "member served, suspended there", want: sso.CodeNoOrgAccess, setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, castPassword, user.StatusActive)
		w.member(t, u.ID, cp.served, user.MemberSuspended)
	}},
	{name: "member of another tenant only", want: sso.CodeAccountExists, setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, castPassword, user.StatusActive)
		w.member(t, u.ID, cp.foreign, user.MemberActive)
	}},
	{name: "identity provider's account of another tenant (no password)", want: sso.CodeAccountExists,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			u := w.account(t, email, "", user.StatusActive)
			w.member(t, u.ID, cp.foreign, user.MemberActive)
		}},
	{name: "self-registered with a password, no membership", want: sso.CodeAccountExists,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			w.account(t, email, castPassword, user.StatusActive)
		}},
	{name: "active without password or membership", want: sso.CodeAccountExists,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			w.account(t, email, "", user.StatusActive)
		}},
	{name: "invited by this tenant, no credential", want: "", setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, "", user.StatusInvited)
		w.member(t, u.ID, cp.served, user.MemberInvited)
	}},
	{name: "invited by this tenant and another, no credential", want: "", setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, "", user.StatusInvited)
		w.member(t, u.ID, cp.foreign, user.MemberInvited)
		w.member(t, u.ID, cp.served, user.MemberInvited)
	}},
	{name: "invited by this tenant, holding a password", want: sso.CodeAccountExists, setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, castPassword, user.StatusActive)
		w.member(t, u.ID, cp.served, user.MemberInvited)
	}},
	{name: "invited by this tenant, identity provider's account of another tenant", want: sso.CodeAccountExists,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			u := w.account(t, email, "", user.StatusActive)
			w.member(t, u.ID, cp.foreign, user.MemberActive)
			w.member(t, u.ID, cp.served, user.MemberInvited)
		}},
	{name: "invited by another tenant, no credential", want: sso.CodeAccountExists, setup: func(t *testing.T, w *world, cp castProvider, email string) {
		u := w.account(t, email, "", user.StatusInvited)
		w.member(t, u.ID, cp.foreign, user.MemberInvited)
	}},
	{name: "invited by another tenant, holding a password", want: sso.CodeAccountExists,
		setup: func(t *testing.T, w *world, cp castProvider, email string) {
			u := w.account(t, email, castPassword, user.StatusActive)
			w.member(t, u.ID, cp.foreign, user.MemberInvited)
		}},
}

// tableChange is what changed in the table from before to after, beside the
// rows every login writes or spends (rate-limit counters, the login session).
func tableChange(before, after string) []string {
	var diff []string
	in := func(s, l string) bool { return strings.Contains(s, l) }
	skip := func(l string) bool { return in(l, "pk:rl#") || in(l, "pk:ssologin#") }
	for _, l := range strings.Split(after, "\n") {
		if !skip(l) && !in(before, l) {
			diff = append(diff, "+ "+l)
		}
	}
	for _, l := range strings.Split(before, "\n") {
		if !skip(l) && !in(after, l) {
			diff = append(diff, "- "+l)
		}
	}
	return diff
}

// claimsOf reads an access token's payload (its signature is the API's
// business; the test reads what was issued).
func claimsOf(t testing.TB, tok string) map[string]any {
	t.Helper()
	parts := strings.Split(tok, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	c := map[string]any{}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// The linking table of the package doc, case by case, for each cast member's
// provider (organization A's, organization C's of another partner, partner
// X's own): a refusal writes nothing at all; an admission links the subject
// to the account, admits it only into the membership the provider serves,
// leaves every other membership as it was, and its exchange answers a
// session bound to the provider (idp claim).
func TestLinkingTable(t *testing.T) {
	w := newWorld(t)
	cps := w.castProviders(t)
	for i, cp := range cps {
		for j, lc := range linkingTable {
			t.Run(cp.name+"/"+lc.name, func(t *testing.T) {
				email := fmt.Sprintf("cast-%d-%d@cast.example", i, j)
				if lc.setup != nil {
					lc.setup(t, w, cp, email)
				}
				_, msBefore := w.memberships(t, email)
				before := fixture.Scan(t, w.env)
				mu := &mockoidc.MockUser{Subject: fmt.Sprintf("sub-%d-%d", i, j), Email: email, EmailVerified: !lc.unverified,
					PreferredUsername: "p"}
				code, got := w.signIn(t, cp.idp, cp.login, mu)
				if got != lc.want {
					t.Fatalf("outcome %q, want %q", got, lc.want)
				}
				if lc.want != "" {
					if d := tableChange(before, fixture.Scan(t, w.env)); len(d) > 0 {
						t.Fatalf("a refused sign-in changed the table:\n%s", strings.Join(d, "\n"))
					}
					return
				}
				u, ms := w.memberships(t, email)
				if u == nil || u.Status != user.StatusActive {
					t.Fatalf("account after admission: %+v", u)
				}
				for _, m := range ms {
					served := m.Scope == cp.served.Scope && m.PartnerID == cp.served.PartnerID && m.OrgID == cp.served.OrgID
					switch {
					case served && m.State(u) != user.MemberActive:
						t.Errorf("served membership %s is %s after admission", m.ID, m.State(u))
					case !served:
						// Every other membership is as it was (other invitations stay pending).
						same := false
						for _, b := range msBefore {
							same = same || (b.ID == m.ID && b.Status == m.Status)
						}
						if !same {
							t.Errorf("membership %+v changed or appeared", m)
						}
					}
				}
				var lr signin.Result
				fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
				if lr.Tokens == nil || lr.User.ID != u.ID || lr.User.Scope != cp.served.Scope || lr.User.OrgID != cp.served.OrgID ||
					lr.User.PartnerID != cp.served.PartnerID {
					t.Fatalf("exchange signed in %+v", lr.User)
				}
				if c := claimsOf(t, lr.Tokens.AccessToken); c["idp"] != cp.id {
					t.Fatalf("access token claims %v, want idp %s", c, cp.id)
				}
			})
		}
	}
}

// The attack of issue 30: a partner administrator registers its own provider
// (autoProvision on) and makes it assert email_verified for a self-registered
// account and for an address another tenant invited. Both are account_exists
// with nothing written; the self-registered owner still signs in with their
// password (and no second factor of the attacker's), and the genuine
// tenant's invitation still accepts with a password of the invitee's choosing
// even after the attacker's tenant invited the address too and its provider
// accepted that invitation (the linking table's third case: that session is
// bound to the attacker's tenant, and the account gets its first password).
func TestPartnerProviderCannotTakeOverAccountsItDoesNotServe(t *testing.T) {
	w := newWorld(t)
	w.provider(t, pxAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.PartnerViewerID})
	owner := w.account(t, "owner@self.example", castPassword, user.StatusActive)
	invitee := w.account(t, "invitee@charlie.example", "", user.StatusInvited)
	tok := w.member(t, invitee.ID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgViewerID},
		user.MemberInvited)

	for _, email := range []string{owner.Email, invitee.Email} {
		before := fixture.Scan(t, w.env)
		if _, e := w.signIn(t, w.idpA, w.px.ID, verified("evil-"+email, email)); e != sso.CodeAccountExists {
			t.Fatalf("X's provider asserting %s: %q, want account_exists", email, e)
		}
		if d := tableChange(before, fixture.Scan(t, w.env)); len(d) > 0 {
			t.Fatalf("the refusal changed the table:\n%s", strings.Join(d, "\n"))
		}
	}
	if _, ms := w.memberships(t, owner.Email); len(ms) != 0 {
		t.Fatalf("the self-registered account got memberships: %+v", ms)
	}
	if strings.Contains(fixture.Scan(t, w.env), "ssoident#") {
		t.Fatal("an identity was linked")
	}
	res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/login", RemoteAddr: "198.51.100.7:1",
		Body: map[string]any{"email": owner.Email, "password": castPassword}})
	var lr signin.Result
	fixture.Expect(t, res, http.StatusOK).Decode(t, &lr)
	if lr.MFARequired || lr.Tokens == nil {
		t.Fatalf("owner's password sign-in: %s", res.Body)
	}

	// The attacker's tenant invites the address too: its provider may now
	// accept that invitation (a credentialless invitee of its tenant), in a
	// session bound to it that changes nothing account-wide.
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/users/invite", pxAdmin, map[string]any{"email": invitee.Email,
		"name": "Bait", "roleId": role.PartnerViewerID}), http.StatusCreated)
	code, e := w.signIn(t, w.idpA, w.px.ID, verified("evil-2", invitee.Email))
	if e != "" {
		t.Fatalf("X's provider on X's own credentialless invitee: %q", e)
	}
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if lr.User.PartnerID != w.px.ID || lr.User.OrgID != "" {
		t.Fatalf("attacker's session: %+v", lr.User)
	}
	fixture.ExpectError(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPatch, Path: "/api/v1/users/me",
		Token: lr.Tokens.AccessToken, Body: map[string]any{"name": "Owned"}}), http.StatusForbidden, "credential_sign_in_required")
	u, ms := w.memberships(t, invitee.Email)
	for _, m := range ms {
		if m.OrgID == w.c.ID && m.State(u) != user.MemberInvited {
			t.Fatalf("C's invitation became %s", m.State(u))
		}
	}
	res = fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/accept-invite", RemoteAddr: "198.51.100.8:1",
		Body: map[string]any{"token": tok, "password": "Genuine-Invitee-Pass-7"}})
	fixture.Expect(t, res, http.StatusOK).Decode(t, &lr)
	if lr.User == nil || lr.User.OrgID != w.c.ID {
		t.Fatalf("genuine acceptance: %s", res.Body)
	}
}

// An account an identity provider provisioned has no password: it accepts
// another tenant's invitation by setting its first password (and signs in
// with it afterwards); the provider's session could not have.
func TestAcceptInviteSetsAFirstPassword(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	code, e := w.signIn(t, w.idpA, w.a.ID, verified("sub-pia", "pia@alpha.example"))
	if e != "" {
		t.Fatal(e)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	// The SSO session cannot set a password on its own.
	fixture.ExpectError(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/change-password",
		Token: lr.Tokens.AccessToken, Body: map[string]any{"currentPassword": "x", "newPassword": "Brand-New-Pass-42"}}),
		http.StatusForbidden, "credential_sign_in_required")
	u, _ := w.memberships(t, "pia@alpha.example")
	tok := w.member(t, u.ID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgViewerID},
		user.MemberInvited)
	res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/accept-invite", RemoteAddr: "198.51.100.9:1",
		Body: map[string]any{"token": tok, "password": "First-Password-Pia-3"}})
	fixture.Expect(t, res, http.StatusOK).Decode(t, &lr)
	if lr.User == nil || lr.User.OrgID != w.c.ID || !lr.User.PasswordSet {
		t.Fatalf("acceptance: %s", res.Body)
	}
	res = fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/login", RemoteAddr: "198.51.100.10:1",
		Body: map[string]any{"email": "pia@alpha.example", "password": "First-Password-Pia-3"}})
	fixture.Expect(t, res, http.StatusOK)
}

// The MFA hand-off keeps an SSO sign-in bound to its provider: an account
// with TOTP, member of A first and of C, signed in by C's provider, finishes
// its second factor in C's membership with the idp claim (not in its primary
// membership A, as a password sign-in would), and the session it gets still
// changes nothing account-wide.
func TestMFAHandOffKeepsTheProvidersBinding(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, cAdmin, "", w.idpB, nil)
	c := fixture.User(t, w.env, fixture.Member{Email: "tia@alpha.example", Password: castPassword, Scope: authz.ScopeOrg,
		PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgViewerID})
	var setup struct{ Secret string }
	fixture.Expect(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/mfa/setup", Token: c.Token}),
		http.StatusOK).Decode(t, &setup)
	totpCode := func() string {
		code, err := totp.GenerateCodeCustom(setup.Secret, w.env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix,
			Algorithm: otp.AlgorithmSHA1})
		if err != nil {
			t.Fatal(err)
		}
		return code
	}
	fixture.Expect(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/mfa/verify", Token: c.Token,
		Body: map[string]any{"code": totpCode()}}), http.StatusOK)
	w.env.Clock.Advance(30 * time.Second)
	w.member(t, c.UserID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgViewerID}, user.MemberActive)

	code, e := w.signIn(t, w.idpB, w.c.ID, verified("sub-tia", "tia@alpha.example"))
	if e != "" {
		t.Fatal(e)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if !lr.MFARequired || lr.TempToken == "" {
		t.Fatalf("exchange: %+v", lr)
	}
	verify := fixture.Expect(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/mfa/verify",
		RemoteAddr: w.nextAddr(), Body: map[string]any{"tempToken": lr.TempToken, "code": totpCode()}}), http.StatusOK)
	verify.Decode(t, &lr)
	if lr.Tokens == nil || lr.User.OrgID != w.c.ID {
		t.Fatalf("after the second factor: %+v", lr.User)
	}
	if cl := claimsOf(t, lr.Tokens.AccessToken); cl["idp"] != pr.ID || cl["orgId"] != w.c.ID || cl["mfa"] != true {
		t.Fatalf("claims %v, want idp %s in C with mfa", cl, pr.ID)
	}
	fixture.ExpectError(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/mfa/disable",
		Token: lr.Tokens.AccessToken, Body: map[string]any{"code": totpCode()}}), http.StatusForbidden, "credential_sign_in_required")
	// Refresh keeps the binding: a refreshed SSO session is still one.
	refresh := ""
	for _, ck := range (&http.Response{Header: verify.Header}).Cookies() {
		if ck.Name == signin.CookieName {
			refresh = ck.Value
		}
	}
	var again signin.Result
	fixture.Expect(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/refresh", RemoteAddr: w.nextAddr(),
		Header: map[string]string{"Cookie": signin.CookieName + "=" + refresh, signin.CSRFHeader: "1"}}), http.StatusOK).Decode(t, &again)
	if cl := claimsOf(t, again.Tokens.AccessToken); cl["idp"] != pr.ID || cl["orgId"] != w.c.ID {
		t.Fatalf("refreshed claims %v, want idp %s in C", cl, pr.ID)
	}
	fixture.ExpectError(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodPatch, Path: "/api/v1/users/me",
		Token: again.Tokens.AccessToken, Body: map[string]any{"name": "Renamed"}}), http.StatusForbidden, "credential_sign_in_required")
}
