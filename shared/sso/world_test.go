package sso_test

import (
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	appURL = fixture.AppURL
	apiURL = fixture.APIURL
)

// Callers of the world.
const (
	aAdmin      = "org A admin"
	aNoMFA      = "org A admin without mfa"
	aViewer     = "org A viewer"
	aRestricted = "org A admin restricted to a site"
	bAdmin      = "org B admin"
	cAdmin      = "org C admin"
	pxAdmin     = "partner X admin"
	pyAdmin     = "partner Y admin"
	sysAdmin    = "system admin"
)

// idp is the test OpenID provider (fixture.IdP).
type idp = fixture.IdP

// world is three organizations (A and B of partner X, C of partner Y), the
// sso and auth groups on an environment whose outbound guard exempts loopback
// and trusts the test CA (as a local run would), two identity providers and
// the cast.
type world struct {
	env    *testenv.Env
	api    http.Handler
	pki    *fixture.PKI
	idpA   *idp
	idpB   *idp
	px, py tenant.Partner
	a, b   tenant.Organization
	c      tenant.Organization
	tokens map[string]string
	users  map[string]fixture.Caller
	// clients numbers the source addresses of browsers and exchanges, so
	// that tests running many logins stay clear of the per-IP rate limits.
	clients atomic.Int32
}

// nextAddr is a source address no other browser or exchange of w used.
func (w *world) nextAddr() string {
	n := w.clients.Add(1)
	return fmt.Sprintf("198.18.%d.%d:443", n/250, n%250+1)
}

func newWorld(t *testing.T) *world {
	t.Helper()
	pki := fixture.NewPKI(t)
	env := testenv.New(t, pki.SSOVars()...)
	// Provider tokens carry the wall clock; the injected clock starts there.
	env.Clock.Set(time.Now())
	w := &world{env: env, pki: pki, tokens: map[string]string{}, users: map[string]fixture.Caller{}}
	w.api = fixture.API(t, env, "sso", "auth", "users")
	w.idpA, w.idpB = fixture.NewIdP(t, pki), fixture.NewIdP(t, pki)
	w.px = fixture.Partner(t, env, "Partner X")
	w.py = fixture.Partner(t, env, "Partner Y")
	w.a = fixture.Org(t, env, w.px.ID, "Alpha")
	w.b = fixture.Org(t, env, w.px.ID, "Bravo")
	w.c = fixture.Org(t, env, w.py.ID, "Charlie")
	site := fixture.Site(t, env, w.a.ID, "A one")
	for name, m := range map[string]fixture.Member{
		sysAdmin:    {Scope: authz.ScopeSystem, RoleID: role.SystemAdminID, MFA: true},
		pxAdmin:     {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		pyAdmin:     {Scope: authz.ScopePartner, PartnerID: w.py.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		aAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID, MFA: true},
		aNoMFA:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID},
		aViewer:     {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgViewerID, MFA: true},
		aRestricted: {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID, SiteIDs: []string{site.ID}, MFA: true},
		bAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.b.ID, RoleID: role.OrgAdminID, MFA: true},
		cAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgAdminID, MFA: true},
	} {
		c := fixture.User(t, env, m)
		w.tokens[name], w.users[name] = c.Token, c
	}
	return w
}

func (w *world) call(t testing.TB, method, path, caller string, body any) fixture.Response {
	t.Helper()
	tok := ""
	if caller != "" {
		if tok = w.tokens[caller]; tok == "" {
			t.Fatalf("no caller %q", caller)
		}
	}
	return fixture.Do(t, w.api, fixture.Request{Method: method, Path: path, Token: tok, Body: body})
}

// provider creates a provider of org at p as caller, with extra settings,
// and activates it.
func (w *world) provider(t testing.TB, caller, orgID string, p *idp, extra map[string]any) sso.Provider {
	t.Helper()
	body := map[string]any{"name": "IdP", "issuer": p.Issuer(), "clientId": p.ClientID, "clientSecret": p.ClientSecret}
	if orgID != "" {
		body["orgId"] = orgID
	}
	for k, v := range extra {
		body[k] = v
	}
	var pr sso.Provider
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/sso/providers", caller, body), http.StatusCreated).Decode(t, &pr)
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/sso/providers/"+pr.ID+"/status", caller,
		map[string]any{"status": "active"}), http.StatusOK).Decode(t, &pr)
	return pr
}

// browser is a user agent (fixture.Browser) at a source address no other
// browser of w used.
func (w *world) browser() *fixture.Browser { return fixture.NewBrowser(w.api, w.pki, w.nextAddr()) }

// signIn runs a whole login of user at orgID and answers the outcome.
func (w *world) signIn(t testing.TB, p *idp, orgID string, u *mockoidc.MockUser) (code, errCode string) {
	t.Helper()
	return w.browser().SignIn(t, p, orgID, u)
}

// exchange trades a code at /sso/exchange.
func (w *world) exchange(t testing.TB, code string) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/sso/exchange", Body: map[string]any{"code": code},
		RemoteAddr: w.nextAddr()})
}
