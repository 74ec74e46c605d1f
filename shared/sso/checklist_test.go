package sso_test

import (
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/tests/fixture"
)

// The authorization request: code flow, this client, the redirect URI
// <API_URL>/api/v1/sso/callback, the provider's scopes, a state equal to the
// browser's cookie, a nonce, and PKCE with S256 only; every login gets its own
// state, nonce and challenge. A provider in testing does not serve logins.
func TestLoginRedirectCarriesPKCEStateAndNonce(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"scopes": []string{"openid", "email"}})
	seen := map[string]bool{}
	for range 2 {
		b := w.browser()
		loc, err := url.Parse(b.Start(t, w.a.ID))
		if err != nil {
			t.Fatal(err)
		}
		if got := loc.Scheme + "://" + loc.Host + loc.Path; got != w.idpA.AuthorizationEndpoint() {
			t.Fatalf("redirected to %s, want %s", got, w.idpA.AuthorizationEndpoint())
		}
		q := loc.Query()
		for k, want := range map[string]string{"response_type": "code", "client_id": w.idpA.ClientID,
			"redirect_uri": apiURL + sso.CallbackPath, "scope": "openid email", "code_challenge_method": "S256", "state": b.Cookie} {
			if q.Get(k) != want {
				t.Errorf("%s = %q, want %q", k, q.Get(k), want)
			}
		}
		if len(q.Get("code_challenge")) != 43 || len(q.Get("nonce")) < 43 || len(b.Cookie) < 43 {
			t.Errorf("challenge %q, nonce %q, state %q", q.Get("code_challenge"), q.Get("nonce"), b.Cookie)
		}
		for _, v := range []string{q.Get("state"), q.Get("nonce"), q.Get("code_challenge")} {
			if seen[v] {
				t.Errorf("a value of one login came again: %q", v)
			}
			seen[v] = true
		}
		// The verifier never leaves the server: the row holds it sealed.
		if strings.Contains(fixture.Scan(t, w.env), strings.ToLower(b.Cookie)) {
			t.Error("the state rests in clear")
		}
	}
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/status", aAdmin, map[string]any{"status": "testing"}), http.StatusOK)
	res := fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/login/"+w.a.ID, "", nil), http.StatusFound)
	if loc := res.Header.Get("Location"); loc != appURL+"/login?error=provider_not_found" {
		t.Fatalf("a provider in testing served a login: %s", loc)
	}
}

// default_role_required: a provider whose default role was deleted since
// provisions no one (and changes nothing).
func TestDefaultRoleGoneAnswersDefaultRoleRequired(t *testing.T) {
	w := newWorld(t)
	roles := fixture.API(t, w.env, "roles")
	res := fixture.Expect(t, fixture.Do(t, roles, fixture.Request{Method: http.MethodPost, Path: "/api/v1/roles", Token: w.tokens[aAdmin],
		Body: map[string]any{"name": "SSO newcomer", "permissions": []map[string]string{{"resource": "devices", "action": "read"}}}}),
		http.StatusCreated)
	roleID, _ := res.JSON(t)["id"].(string)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": roleID})
	fixture.Expect(t, fixture.Do(t, roles, fixture.Request{Method: http.MethodDelete, Path: "/api/v1/roles/" + roleID,
		Token: w.tokens[aAdmin]}), http.StatusOK)
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("newcomer", "new@alpha.example")); e != sso.CodeDefaultRole {
		t.Fatalf("got %q, want default_role_required", e)
	}
	if u, _ := w.memberships(t, "new@alpha.example"); u != nil {
		t.Fatal("an account was provisioned without a default role")
	}
}

// Audit: sso.provider.create, update (PATCH and status) and delete, with the
// provider's tenant.
func TestProviderChangesAreAudited(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, nil)
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+pr.ID, aAdmin, map[string]any{"name": "N"}), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodDelete, base+"/"+pr.ID, aAdmin, nil), http.StatusOK)
	pp := w.provider(t, pxAdmin, "", w.idpB, nil)
	counts := map[string]int{}
	for _, l := range strings.Split(fixture.Scan(t, w.env), "\n") {
		if !strings.Contains(l, "pk:audit") {
			continue
		}
		for _, a := range []string{"sso.provider.create", "sso.provider.update", "sso.provider.delete"} {
			if strings.Contains(l, "action:"+a+" ") && strings.Contains(l, strings.ToLower(pr.ID)) {
				counts[a]++
			}
		}
		if strings.Contains(l, "action:sso.provider.create ") && strings.Contains(l, strings.ToLower(pp.ID)) &&
			!strings.Contains(l, strings.ToLower(w.px.ID)) {
			t.Errorf("the partner provider's audit record does not name the partner: %s", l)
		}
	}
	// create; update by status (activate) and by PATCH; delete.
	if counts["sso.provider.create"] != 1 || counts["sso.provider.update"] != 2 || counts["sso.provider.delete"] != 1 {
		t.Fatalf("audit records %v", counts)
	}
}

// An ID token past its expiry (by the injected clock, within the login's 10
// minutes) is id_token_invalid, and nothing is provisioned.
func TestExpiredIDTokenIsRefused(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	w.idpA.AccessTTL = 30 * time.Second
	b := w.browser()
	auth := b.Start(t, w.a.ID)
	w.idpA.QueueUser(verified("late", "late@alpha.example"))
	cb := b.Authorize(t, auth)
	w.env.Clock.Advance(2 * time.Minute)
	if _, e := fixture.Outcome(t, b.Callback(t, cb)); e != sso.CodeIDTokenInvalid {
		t.Fatalf("expired ID token: %q, want id_token_invalid", e)
	}
	if u, _ := w.memberships(t, "late@alpha.example"); u != nil {
		t.Fatal("an expired ID token provisioned an account")
	}
}

// ATTACKS 8: one callback replayed 12 times at once from the browser that
// started it: the login session is spent once; exactly one callback signs in,
// the rest answer invalid_state.
func TestConcurrentCallbacksSpendTheSessionOnce(t *testing.T) {
	w := newWorld(t)
	w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	b := w.browser()
	auth := b.Start(t, w.a.ID)
	w.idpA.QueueUser(verified("twelve", "twelve@alpha.example"))
	cb := b.Authorize(t, auth)
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for range 12 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, e := fixture.Outcome(t, b.Callback(t, cb))
			mu.Lock()
			defer mu.Unlock()
			if code != "" {
				e = "signed in"
			}
			got[e]++
		}()
	}
	wg.Wait()
	if got["signed in"] != 1 || got[sso.CodeInvalidState] != 11 {
		t.Fatalf("outcomes %v; want 1 sign-in and 11 invalid_state", got)
	}
	if _, ms := w.memberships(t, "twelve@alpha.example"); len(ms) != 1 {
		t.Fatalf("memberships %+v", ms)
	}
}
