package sso_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

func verified(sub, email string) *mockoidc.MockUser {
	return &mockoidc.MockUser{Subject: sub, Email: email, EmailVerified: true, PreferredUsername: "p"}
}

// memberships reads an account's memberships by e-mail.
func (w *world) memberships(t testing.TB, email string) (*user.User, []user.Membership) {
	t.Helper()
	u, err := w.env.Users.ByEmail(context.Background(), email)
	if err != nil {
		return nil, nil
	}
	ms, err := w.env.Users.Memberships(context.Background(), u.ID)
	if err != nil {
		t.Fatal(err)
	}
	return u, ms
}

// The whole flow over HTTPS on loopback, through the outbound guard as a local
// run configures it: the first login provisions an account and an accepted
// membership with the default role; the second links the same account; the
// exchange answers the login response once.
func TestFirstLoginProvisionsSecondLinks(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgTechnicianID,
		"allowedDomains": []string{"alpha.example"}})
	if pr.HasClientSecret != true || pr.Status != sso.StatusActive {
		t.Fatalf("provider %+v", pr)
	}

	code, errCode := w.signIn(t, w.idpA, w.a.ID, verified("sub-ann", "Ann@Alpha.example"))
	if errCode != "" {
		t.Fatalf("first login: %s", errCode)
	}
	res := fixture.Expect(t, w.exchange(t, code), http.StatusOK)
	var lr signin.Result
	res.Decode(t, &lr)
	if lr.User == nil || lr.User.Email != "ann@alpha.example" || lr.User.OrgID != w.a.ID || lr.User.PasswordSet || lr.Tokens == nil ||
		lr.Tokens.AccessToken == "" || lr.MFARequired {
		t.Fatalf("exchange: %s", res.Body)
	}
	if !strings.Contains(res.Header.Get("Set-Cookie"), signin.CookieName+"=") {
		t.Fatal("exchange set no refresh cookie")
	}
	u, ms := w.memberships(t, "ann@alpha.example")
	if u == nil || u.Status != user.StatusActive || u.PasswordHash != "" || len(ms) != 1 || ms[0].OrgID != w.a.ID ||
		ms[0].RoleID != role.OrgTechnicianID || !ms[0].Active() {
		t.Fatalf("provisioned %+v %+v", u, ms)
	}
	// The code is single use.
	fixture.ExpectError(t, w.exchange(t, code), http.StatusBadRequest, "bad_request")

	// Second login: the same subject signs in the same account.
	code2, errCode := w.signIn(t, w.idpA, w.a.ID, verified("sub-ann", "ann@alpha.example"))
	if errCode != "" {
		t.Fatalf("second login: %s", errCode)
	}
	var lr2 signin.Result
	fixture.Expect(t, w.exchange(t, code2), http.StatusOK).Decode(t, &lr2)
	if lr2.User.ID != u.ID {
		t.Fatalf("second login signed in %s, want %s", lr2.User.ID, u.ID)
	}
	if _, ms := w.memberships(t, "ann@alpha.example"); len(ms) != 1 {
		t.Fatalf("second login added memberships: %+v", ms)
	}
	// The access token works on a route that needs organizations:read.
	res = fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: "/api/v1/auth/me", Token: lr2.Tokens.AccessToken})
	fixture.Expect(t, res, http.StatusOK)
	// Secrets never rest in clear: the client secret, the exchange codes.
	scan := fixture.Scan(t, w.env)
	for _, s := range []string{w.idpA.ClientSecret, code, code2} {
		if strings.Contains(scan, strings.ToLower(s)) {
			t.Errorf("the table holds a secret in clear: %q", s)
		}
	}
}

// An existing account with an accepted membership of the organization is
// linked on a verified e-mail; an unverified e-mail links nothing.
func TestExistingMemberLinksOnlyWithVerifiedEmail(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, nil)
	bob := fixture.User(t, w.env, fixture.Member{Email: "bob@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID,
		RoleID: role.OrgViewerID, Password: "Correct-Horse-Battery-9"})

	if _, errCode := w.signIn(t, w.idpA, w.a.ID, &mockoidc.MockUser{Subject: "sub-bob", Email: "bob@alpha.example"}); errCode != sso.CodeUserNotFound {
		t.Fatalf("unverified e-mail: %q, want user_not_found", errCode)
	}
	if strings.Contains(fixture.Scan(t, w.env), "ssoident#") {
		t.Fatal("an unverified e-mail left an identity link")
	}
	code, errCode := w.signIn(t, w.idpA, w.a.ID, verified("sub-bob", "bob@alpha.example"))
	if errCode != "" {
		t.Fatalf("verified e-mail: %s", errCode)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if lr.User.ID != bob.UserID || lr.User.OrgID != w.a.ID {
		t.Fatalf("signed in %+v", lr.User)
	}
	u, _ := w.memberships(t, "bob@alpha.example")
	if u.PasswordHash == "" {
		t.Fatal("the provider changed the account's password")
	}
}

// ATTACKS 2: another organization's provider cannot sign in or link an account
// of this organization, whatever it claims; nothing changes.
func TestAnotherOrganizationsProviderCannotTakeOver(t *testing.T) {
	w := newWorld(t)
	// C's admin registers a provider (its own IdP) with auto-provisioning.
	w.provider(t, cAdmin, "", w.idpB, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgAdminID})
	victim := fixture.User(t, w.env, fixture.Member{Email: "victim@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID,
		OrgID: w.a.ID, RoleID: role.OrgAdminID})
	before := fixture.Scan(t, w.env)
	_, errCode := w.signIn(t, w.idpB, w.c.ID, verified("attacker-sub", "victim@alpha.example"))
	if errCode != sso.CodeAccountExists {
		t.Fatalf("C's provider asserting A's admin: %q, want account_exists", errCode)
	}
	_, ms := w.memberships(t, "victim@alpha.example")
	if len(ms) != 1 || ms[0].OrgID != w.a.ID {
		t.Fatalf("the victim's memberships changed: %+v", ms)
	}
	if strings.Contains(fixture.Scan(t, w.env), "ssoident#") {
		t.Fatal("an identity was linked to the victim")
	}
	// Nor through A's login with C's provider's code (mix-up): see
	// TestMixUpFails. And A's own login page does not serve C's provider.
	b := w.browser()
	if loc := b.Start(t, w.a.ID); !strings.HasSuffix(loc, "/login?error=provider_not_found") {
		t.Fatalf("A's login without a provider went to %s", loc)
	}
	// The unverified form is refused the same way and changes nothing.
	_, errCode = w.signIn(t, w.idpB, w.c.ID, &mockoidc.MockUser{Subject: "attacker-2", Email: "victim@alpha.example"})
	if errCode != sso.CodeUserNotFound {
		t.Fatalf("unverified: %q", errCode)
	}
	after := fixture.Scan(t, w.env)
	for _, l := range strings.Split(after, "\n") {
		if strings.Contains(l, strings.ToLower(victim.UserID)) && !strings.Contains(before, l) && !strings.Contains(l, "pk:audit") {
			t.Errorf("a row of the victim changed: %s", l)
		}
	}
	// The provider cannot register A's IdP application either: the pair is taken.
	w.provider(t, aAdmin, "", w.idpA, nil)
	res := w.call(t, http.MethodPost, "/api/v1/sso/providers", cAdmin, map[string]any{"name": "copy", "issuer": w.idpA.Issuer(),
		"clientId": w.idpA.ClientID})
	fixture.ExpectError(t, res, http.StatusConflict, "conflict")
}

// An account that belongs elsewhere and not to the provider's organization is
// neither linked nor given a membership, even with autoProvision on; nor is
// an account with no membership anywhere (a self-registered one): only a new
// address is provisioned.
func TestMemberOfAnotherTenantIsNotProvisioned(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	fixture.User(t, w.env, fixture.Member{Email: "carol@charlie.example", Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID,
		RoleID: role.OrgViewerID})
	if _, errCode := w.signIn(t, w.idpA, w.a.ID, verified("sub-carol", "carol@charlie.example")); errCode != sso.CodeAccountExists {
		t.Fatalf("got %q, want account_exists", errCode)
	}
	if _, ms := w.memberships(t, "carol@charlie.example"); len(ms) != 1 || ms[0].OrgID != w.c.ID {
		t.Fatalf("memberships changed: %+v", ms)
	}
	fixture.User(t, w.env, fixture.Member{Email: "dan@alpha.example", Scope: authz.ScopeNone})
	if _, errCode := w.signIn(t, w.idpA, w.a.ID, verified("sub-dan", "dan@alpha.example")); errCode != sso.CodeAccountExists {
		t.Fatalf("account without membership: %q, want account_exists", errCode)
	}
	if _, ms := w.memberships(t, "dan@alpha.example"); len(ms) != 0 {
		t.Fatalf("memberships %+v", ms)
	}
}

func TestCallbackErrorCodes(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"allowedDomains": []string{"alpha.example"}})

	t.Run("domain not allowed", func(t *testing.T) {
		if _, e := w.signIn(t, w.idpA, w.a.ID, verified("s1", "eve@other.example")); e != sso.CodeDomainNotAllowed {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("no account, no autoProvision", func(t *testing.T) {
		if _, e := w.signIn(t, w.idpA, w.a.ID, verified("s2", "new@alpha.example")); e != sso.CodeUserNotFound {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("e-mail missing", func(t *testing.T) {
		if _, e := w.signIn(t, w.idpA, w.a.ID, &mockoidc.MockUser{Subject: "s3", EmailVerified: true}); e != sso.CodeEmailMissing {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("replayed state", func(t *testing.T) {
		b := w.browser()
		w.idpA.QueueUser(verified("s4", "x@alpha.example"))
		cb := b.Authorize(t, b.Start(t, w.a.ID))
		if _, e := fixture.Outcome(t, b.Callback(t, cb)); e != sso.CodeUserNotFound {
			t.Fatalf("first: %q", e)
		}
		// The same callback again, from the same browser: the session is spent.
		if _, e := fixture.Outcome(t, b.Callback(t, cb)); e != sso.CodeInvalidState {
			t.Fatalf("replayed state: %q", e)
		}
	})
	t.Run("expired session", func(t *testing.T) {
		b := w.browser()
		auth := b.Start(t, w.a.ID)
		w.idpA.QueueUser(verified("s5", "x@alpha.example"))
		cb := b.Authorize(t, auth)
		w.env.Clock.Advance(sso.LoginTTL + time.Second)
		defer w.env.Clock.Set(time.Now())
		if _, e := fixture.Outcome(t, b.Callback(t, cb)); e != sso.CodeSessionExpired {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("tampered ID token", func(t *testing.T) {
		w.idpA.Tamper.Store(true)
		defer w.idpA.Tamper.Store(false)
		if _, e := w.signIn(t, w.idpA, w.a.ID, verified("s6", "x@alpha.example")); e != sso.CodeIDTokenInvalid {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("callback replayed in another browser", func(t *testing.T) {
		victim, attacker := w.browser(), w.browser()
		w.idpA.QueueUser(verified("s7", "x@alpha.example"))
		cb := victim.Authorize(t, victim.Start(t, w.a.ID))
		// The attacker brings the victim's callback URL without the victim's cookie,
		// then with a cookie of its own login.
		if _, e := fixture.Outcome(t, attacker.Callback(t, cb)); e != sso.CodeInvalidState {
			t.Fatalf("no cookie: %q", e)
		}
		attacker.Start(t, w.a.ID)
		if _, e := fixture.Outcome(t, attacker.Callback(t, cb)); e != sso.CodeInvalidState {
			t.Fatalf("another login's cookie: %q", e)
		}
	})
	t.Run("provider error", func(t *testing.T) {
		b := w.browser()
		b.Start(t, w.a.ID)
		res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: "/api/v1/sso/callback?state=" + url.QueryEscape(b.Cookie) + "&error=access_denied",
			Header: map[string]string{"Cookie": sso.CookieName + "=" + b.Cookie}})
		if _, e := fixture.Outcome(t, res.Header.Get("Location")); e != sso.CodeProviderError {
			t.Fatalf("got %q", e)
		}
	})
	t.Run("provider deactivated mid-flow", func(t *testing.T) {
		b := w.browser()
		auth := b.Start(t, w.a.ID)
		w.idpA.QueueUser(verified("s8", "x@alpha.example"))
		cb := b.Authorize(t, auth)
		fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/sso/providers/"+pr.ID+"/status", aAdmin, map[string]any{"status": "inactive"}), http.StatusOK)
		defer func() {
			fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/sso/providers/"+pr.ID+"/status", aAdmin, map[string]any{"status": "active"}), http.StatusOK)
		}()
		if _, e := fixture.Outcome(t, b.Callback(t, cb)); e != sso.CodeProviderNotFound {
			t.Fatalf("got %q", e)
		}
	})
}

// A mix-up: a code the browser got from provider A, presented with the state
// of a login that went to provider B, fails (B's token endpoint does not know
// it), and an iss naming A at B's callback fails before any exchange.
func TestMixUpFails(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	w.provider(t, bAdmin, "", w.idpB, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})

	// A real login at A yields a code for A.
	ba := w.browser()
	w.idpA.QueueUser(verified("mix", "mix@alpha.example"))
	cbA, _ := url.Parse(ba.Authorize(t, ba.Start(t, w.a.ID)))
	codeA := cbA.Query().Get("code")

	// A login at B: its state and cookie, with A's code.
	bb := w.browser()
	bb.Start(t, w.b.ID)
	q := url.Values{"state": {bb.Cookie}, "code": {codeA}}
	if _, e := fixture.Outcome(t, bb.Callback(t, apiURL+sso.CallbackPath+"?"+q.Encode())); e != sso.CodeTokenExchange {
		t.Fatalf("A's code at B: %q, want token_exchange_failed", e)
	}
	// With iss naming A (RFC 9207), refused before the exchange.
	bb2 := w.browser()
	bb2.Start(t, w.b.ID)
	q = url.Values{"state": {bb2.Cookie}, "code": {codeA}, "iss": {w.idpA.Issuer()}}
	if _, e := fixture.Outcome(t, bb2.Callback(t, apiURL+sso.CallbackPath+"?"+q.Encode())); e != sso.CodeInvalidState {
		t.Fatalf("iss of A at B: %q, want invalid_state", e)
	}
	if u, _ := w.memberships(t, "mix@alpha.example"); u != nil {
		t.Fatal("the mix-up provisioned an account")
	}
}

// The exchange code is single use under concurrency: of 20 exchanges exactly
// one answers 200.
func TestExchangeCodeIsSingleUse(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	code, e := w.signIn(t, w.idpA, w.a.ID, verified("race", "race@alpha.example"))
	if e != "" {
		t.Fatal(e)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok, bad := 0, 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := w.exchange(t, code)
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case http.StatusOK:
				ok++
			case http.StatusBadRequest:
				bad++
			default:
				t.Errorf("exchange: %d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if ok != 1 || bad != 19 {
		t.Fatalf("%d exchanges won, %d refused; want 1 and 19", ok, bad)
	}
	// An expired code is refused too.
	code, e = w.signIn(t, w.idpA, w.a.ID, verified("race", "race@alpha.example"))
	if e != "" {
		t.Fatal(e)
	}
	w.env.Clock.Advance(sso.CodeTTL + time.Second)
	fixture.ExpectError(t, w.exchange(t, code), http.StatusBadRequest, "bad_request")
}

// enforceSSO disables password login for the organization's users; the
// check route tells the login page.
func TestEnforceSSODisablesPasswordLogin(t *testing.T) {
	w := newWorld(t)
	fixture.User(t, w.env, fixture.Member{Email: "pat@alpha.example", Password: "Correct-Horse-Battery-9", Scope: authz.ScopeOrg,
		PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgViewerID})
	login := func() fixture.Response {
		return fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/login", RemoteAddr: "198.51.100.9:1",
			Body: map[string]any{"email": "pat@alpha.example", "password": "Correct-Horse-Battery-9"}})
	}
	fixture.Expect(t, login(), http.StatusOK)
	var chk sso.Check
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.a.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if chk.SSOEnabled || chk.Provider != nil || chk.EnforceSSO {
		t.Fatalf("check without provider: %+v", chk)
	}
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"enforceSSO": true, "name": "Alpha IdP"})
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.a.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if !chk.SSOEnabled || chk.Provider == nil || chk.Provider.ID != pr.ID || chk.Provider.Name != "Alpha IdP" || !chk.EnforceSSO {
		t.Fatalf("check: %+v", chk)
	}
	fixture.ExpectError(t, login(), http.StatusForbidden, "forbidden")
	// Turning enforcement off (PATCH of the active provider) restores it at once.
	fixture.Expect(t, w.call(t, http.MethodPatch, "/api/v1/sso/providers/"+pr.ID, aAdmin, map[string]any{"enforceSSO": false}), http.StatusOK)
	fixture.Expect(t, login(), http.StatusOK)
	// Another organization is not affected; an unknown one looks like one without SSO.
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.b.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if chk.SSOEnabled {
		t.Fatalf("B: %+v", chk)
	}
}

// An account created by an invitation (it accepted nothing yet) accepts its
// invitation to the provider's organization by its SSO sign-in; an account
// that accepted a membership anywhere is never given one by another
// tenant's provider, even one its admin invited it to.
func TestSSOAcceptsOnlyANewAccountsInvitation(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, nil)
	w.provider(t, cAdmin, "", w.idpB, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/users/invite", aAdmin, map[string]any{"email": "ivy@alpha.example",
		"name": "Ivy", "roleId": role.OrgViewerID}), http.StatusCreated)
	code, e := w.signIn(t, w.idpA, w.a.ID, verified("sub-ivy", "ivy@alpha.example"))
	if e != "" {
		t.Fatalf("invited account: %s", e)
	}
	fixture.Expect(t, w.exchange(t, code), http.StatusOK)
	u, ms := w.memberships(t, "ivy@alpha.example")
	if u.Status != user.StatusActive || u.PasswordHash != "" || len(ms) != 1 || ms[0].State(u) != user.MemberActive {
		t.Fatalf("after SSO acceptance: %+v %+v", u, ms)
	}

	// C's admin invites A's admin and asserts the address through C's IdP.
	victim := fixture.User(t, w.env, fixture.Member{Email: "vic@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID,
		OrgID: w.a.ID, RoleID: role.OrgAdminID})
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/users/invite", cAdmin, map[string]any{"email": "vic@alpha.example",
		"name": "Vic", "roleId": role.OrgViewerID}), http.StatusCreated)
	if _, e := w.signIn(t, w.idpB, w.c.ID, verified("vic-at-c", "vic@alpha.example")); e != sso.CodeAccountExists {
		t.Fatalf("C's provider on A's admin: %q, want account_exists", e)
	}
	u, ms = w.memberships(t, "vic@alpha.example")
	for _, m := range ms {
		if m.OrgID == w.c.ID && m.State(u) != user.MemberInvited {
			t.Fatalf("C's invitation of %s became %s", victim.UserID, m.State(u))
		}
	}
	// A new account invited to C cannot be taken into A by A's provider.
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/users/invite", cAdmin, map[string]any{"email": "zed@charlie.example",
		"name": "Zed", "roleId": role.OrgViewerID}), http.StatusCreated)
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("zed", "zed@charlie.example")); e != sso.CodeAccountExists {
		t.Fatalf("A's provider on C's invitee: %q, want account_exists", e)
	}
}

// The account's own second factor still applies after SSO: the exchange
// answers the MFA hand-off, never tokens; a suspended membership stops the
// next SSO sign-in.
func TestExchangeKeepsTheAccountsMFAAndMembershipState(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, nil)
	mfa := fixture.User(t, w.env, fixture.Member{Email: "mia@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID,
		RoleID: role.OrgViewerID, TOTP: true})
	code, e := w.signIn(t, w.idpA, w.a.ID, verified("sub-mia", "mia@alpha.example"))
	if e != "" {
		t.Fatal(e)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if !lr.MFARequired || lr.TempToken == "" || lr.Tokens != nil {
		t.Fatalf("exchange for an MFA account: %+v", lr)
	}
	// A's admin suspends the membership: the linked identity no longer signs in.
	fixture.Expect(t, w.call(t, http.MethodPatch, "/api/v1/users/"+mfa.UserID, aAdmin, map[string]any{"status": "disabled"}), http.StatusOK)
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("sub-mia", "mia@alpha.example")); e != sso.CodeNoOrgAccess {
		t.Fatalf("suspended member: %q, want no_org_access", e)
	}
}

// email_verified vouches for the email claim only: an address mapped from
// another claim is unverified, so an IdP user who writes a member's address
// into preferred_username cannot link or sign in as that member.
func TestMappedEmailClaimIsNeverVerified(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"attributeMapping": map[string]any{"email": "preferred_username"}})
	fixture.User(t, w.env, fixture.Member{Email: "bob@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID,
		RoleID: role.OrgAdminID, Password: "Correct-Horse-Battery-9"})
	mallory := &mockoidc.MockUser{Subject: "sub-mallory", Email: "mallory@elsewhere.example", EmailVerified: true,
		PreferredUsername: "bob@alpha.example"}
	if _, errCode := w.signIn(t, w.idpA, w.a.ID, mallory); errCode != sso.CodeUserNotFound {
		t.Fatalf("mapped e-mail claim: %q, want user_not_found", errCode)
	}
	if strings.Contains(fixture.Scan(t, w.env), "ssoident#") {
		t.Fatal("a mapped e-mail claim left an identity link")
	}
}
