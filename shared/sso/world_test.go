package sso_test

import (
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oauth2-proxy/mockoidc"

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

// Callers of the world: fixture.World's cast.
const (
	aAdmin      = fixture.AAdmin
	aNoMFA      = fixture.ANoMFA
	aViewer     = fixture.AViewer
	aRestricted = fixture.ARestricted
	bAdmin      = fixture.BAdmin
	cAdmin      = fixture.CAdmin
	pxAdmin     = fixture.PXAdmin
	pyAdmin     = fixture.PYAdmin
	sysAdmin    = fixture.SysAdmin
)

// idp is the test OpenID provider (fixture.IdP).
type idp = fixture.IdP

// world is fixture.World (three organizations: A and B of partner X, C of
// partner Y, and the cast) serving the sso, auth and users groups on an
// environment whose outbound guard exempts loopback and trusts the test CA
// (as a local run would), with two identity providers. Its lower-case fields
// are the World's, under the names this package's tests use.
type world struct {
	*fixture.World
	env    *testenv.Env
	api    http.Handler
	pki    *fixture.PKI
	idpA   *idp
	idpB   *idp
	px, py tenant.Partner
	a, b   tenant.Organization
	c      tenant.Organization
	tokens map[string]string
	// emails are the cast's e-mail addresses (partnerCaller adds its own).
	emails map[string]string
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
	// Provider tokens carry the wall clock; the injected clock starts there,
	// before the cast signs in.
	env.Clock.Set(time.Now())
	fw := fixture.NewWorldOn(t, env, "sso", "auth", "users")
	w := &world{World: fw, env: env, api: fw.API, pki: pki, px: fw.PX, py: fw.PY, a: fw.A, b: fw.B, c: fw.C,
		tokens: fw.Tokens, emails: fw.Emails}
	w.idpA, w.idpB = fixture.NewIdP(t, pki), fixture.NewIdP(t, pki)
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
