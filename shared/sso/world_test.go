package sso_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
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
	appURL = "https://app.gale.test"
	apiURL = "https://api.gale.test"
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

// tlsPKI is a test CA and a certificate for 127.0.0.1 it signed; caFile is
// the CA as OUTBOUND_CA_FILE takes it.
type tlsPKI struct {
	server *tls.Config
	pool   *x509.CertPool
	caFile string
}

func newPKI(t testing.TB) *tlsPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "Gale SSO test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	leafTpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(24 * time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTpl, ca, &leafKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	path := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(path, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return &tlsPKI{server: &tls.Config{MinVersion: tls.VersionTLS12,
		Certificates: []tls.Certificate{{Certificate: [][]byte{leafDER}, PrivateKey: leafKey}}}, pool: pool, caFile: path}
}

// idp is an OpenID provider (mockoidc) served over HTTPS on loopback, with a
// switch that tampers with the ID tokens its token endpoint answers.
type idp struct {
	*mockoidc.MockOIDC
	tamper atomic.Bool
}

func newIDP(t testing.TB, pki *tlsPKI) *idp {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &idp{MockOIDC: m}
	if err := m.AddMiddleware(p.tamperMiddleware); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Start(tls.NewListener(ln, pki.server), pki.server); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Shutdown() })
	return p
}

// tamperMiddleware, when on, rewrites the ID token's payload (another e-mail)
// and keeps its signature: a token the provider never signed.
func (p *idp) tamperMiddleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.tamper.Load() || r.URL.Path != mockoidc.TokenEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err == nil {
			if tok, ok := body["id_token"].(string); ok {
				parts := strings.Split(tok, ".")
				if raw, err := base64.RawURLEncoding.DecodeString(parts[1]); err == nil {
					raw = bytes.Replace(raw, []byte("@"), []byte("@evil."), 1)
					parts[1] = base64.RawURLEncoding.EncodeToString(raw)
					body["id_token"] = strings.Join(parts, ".")
				}
			}
		}
		out, _ := json.Marshal(body)
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		_, _ = w.Write(out)
	})
}

// world is three organizations (A and B of partner X, C of partner Y), the
// sso and auth groups on an environment whose outbound guard exempts loopback
// and trusts the test CA (as a local run would), two identity providers and
// the cast.
type world struct {
	env    *testenv.Env
	api    http.Handler
	pki    *tlsPKI
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
	pki := newPKI(t)
	env := testenv.New(t, "OUTBOUND_ALLOW_CIDRS", "127.0.0.1/32", "OUTBOUND_CA_FILE", pki.caFile,
		"APP_URL", appURL, "API_URL", apiURL)
	// Provider tokens carry the wall clock; the injected clock starts there.
	env.Clock.Set(time.Now())
	w := &world{env: env, pki: pki, tokens: map[string]string{}, users: map[string]fixture.Caller{}}
	w.api = fixture.API(t, env, "sso", "auth", "users")
	w.idpA, w.idpB = newIDP(t, pki), newIDP(t, pki)
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

// browser is one user agent: its cookie jar holds the state cookie; it
// speaks to the provider over HTTPS (trusting the test CA) and follows no
// redirect by itself.
type browser struct {
	cookie string
	addr   string // source address toward Gale
	http   *http.Client
}

func (w *world) browser() *browser {
	return &browser{addr: w.nextAddr(), http: &http.Client{Timeout: 10 * time.Second,
		Transport:     &http.Transport{TLSClientConfig: &tls.Config{RootCAs: w.pki.pool, MinVersion: tls.VersionTLS12}},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

// start opens /sso/login/:orgId and answers where it sends the browser,
// keeping the state cookie.
func (b *browser) start(t testing.TB, w *world, orgID string) string {
	t.Helper()
	res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: "/api/v1/sso/login/" + orgID, RemoteAddr: b.addr})
	if res.Status != http.StatusFound {
		t.Fatalf("login: %d %s", res.Status, res.Body)
	}
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == sso.CookieName {
			if !c.Secure || !c.HttpOnly || c.Path != "/" || c.SameSite != http.SameSiteLaxMode || c.Domain != "" {
				t.Fatalf("state cookie %+v is not a __Host- cookie", c)
			}
			b.cookie = c.Value
		}
	}
	return res.Header.Get("Location")
}

// authorize lets the provider authenticate the browser (the next queued
// user) and answers the callback URL it redirects to.
func (b *browser) authorize(t testing.TB, authURL string) string {
	t.Helper()
	res, err := b.http.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusFound {
		t.Fatalf("authorize: %d", res.StatusCode)
	}
	return res.Header.Get("Location")
}

// callback brings the provider's redirect back to Gale and answers where
// Gale sends the browser.
func (b *browser) callback(t testing.TB, w *world, callbackURL string) string {
	t.Helper()
	u, err := url.Parse(callbackURL)
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Scheme + "://" + u.Host + u.Path; got != apiURL+sso.CallbackPath {
		t.Fatalf("provider redirected to %s, want the redirect URI %s", got, apiURL+sso.CallbackPath)
	}
	hdr := map[string]string{}
	if b.cookie != "" {
		hdr["Cookie"] = sso.CookieName + "=" + b.cookie
	}
	res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: u.RequestURI(), Header: hdr, RemoteAddr: b.addr})
	if res.Status != http.StatusFound {
		t.Fatalf("callback: %d %s", res.Status, res.Body)
	}
	return res.Header.Get("Location")
}

// outcome splits Gale's final redirect into the exchange code or the error code.
func outcome(t testing.TB, loc string) (code, errCode string) {
	t.Helper()
	switch {
	case strings.HasPrefix(loc, appURL+"/auth/sso/callback#ssoCode="):
		c, err := url.QueryUnescape(strings.TrimPrefix(loc, appURL+"/auth/sso/callback#ssoCode="))
		if err != nil {
			t.Fatal(err)
		}
		return c, ""
	case strings.HasPrefix(loc, appURL+"/login?error="):
		return "", strings.TrimPrefix(loc, appURL+"/login?error=")
	}
	t.Fatalf("unexpected redirect %q", loc)
	return "", ""
}

// signIn runs a whole login of user at orgID and answers the outcome.
func (w *world) signIn(t testing.TB, p *idp, orgID string, u *mockoidc.MockUser) (code, errCode string) {
	t.Helper()
	b := w.browser()
	auth := b.start(t, w, orgID)
	if u != nil {
		p.QueueUser(u)
	}
	return outcome(t, b.callback(t, w, b.authorize(t, auth)))
}

// exchange trades a code at /sso/exchange.
func (w *world) exchange(t testing.TB, code string) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/sso/exchange", Body: map[string]any{"code": code},
		RemoteAddr: w.nextAddr()})
}
