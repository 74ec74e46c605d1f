package sso_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/tests/fixture"
)

const base = "/api/v1/sso/providers"

func TestProviderLifecycle(t *testing.T) {
	w := newWorld(t)
	body := map[string]any{"name": "Alpha IdP", "issuer": w.idpA.Issuer(), "clientId": w.idpA.ClientID,
		"clientSecret": w.idpA.ClientSecret, "scopes": []string{"openid", "email"}, "allowedDomains": " Alpha.Example, ,beta.example",
		"attributeMapping": map[string]any{"name": "preferred_username"}}
	res := fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, body), http.StatusCreated)
	fixture.Budget(t, res, 4)
	if strings.Contains(string(res.Body), w.idpA.ClientSecret) {
		t.Fatal("the client secret is returned")
	}
	var pr sso.Provider
	res.Decode(t, &pr)
	if pr.OrgID != w.a.ID || pr.Status != sso.StatusInactive || !pr.HasClientSecret || pr.Type != sso.TypeOIDC ||
		pr.AllowedDomains != "alpha.example,beta.example" || pr.AttributeMapping.Name != "preferred_username" || pr.AttributeMapping.Email != "email" ||
		pr.DefaultRoleID != nil {
		t.Fatalf("created %+v", pr)
	}
	if strings.Contains(fixture.Scan(t, w.env), strings.ToLower(w.idpA.ClientSecret)) {
		t.Fatal("the client secret rests in clear")
	}
	path := base + "/" + pr.ID
	fixture.Expect(t, w.call(t, http.MethodGet, path, aRestricted, nil), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodGet, path+"?x=1", pxAdmin, nil), http.StatusOK)
	var l struct{ Data []sso.Provider }
	fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 1 || l.Data[0].ID != pr.ID {
		t.Fatalf("list %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID, sysAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 1 {
		t.Fatalf("system list %+v", l)
	}
	var presets struct{ Data []sso.Preset }
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/presets", aRestricted, nil), http.StatusOK).Decode(t, &presets)
	if len(presets.Data) != 4 || presets.Data[0].ID != "azure-ad" {
		t.Fatalf("presets %+v", presets)
	}

	// Discovery test through the outbound client.
	var tr sso.TestResult
	fixture.Expect(t, w.call(t, http.MethodPost, path+"/test", aAdmin, nil), http.StatusOK).Decode(t, &tr)
	if !tr.Success || tr.TokenEndpoint != w.idpA.TokenEndpoint() || tr.JWKSURI != w.idpA.JWKSEndpoint() {
		t.Fatalf("test %+v", tr)
	}

	// PATCH: secret removed, name changed, the pair moved to B's IdP.
	res = fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"name": "Renamed", "clientSecret": nil,
		"issuer": w.idpB.Issuer(), "clientId": w.idpB.ClientID}), http.StatusOK)
	res.Decode(t, &pr)
	if pr.Name != "Renamed" || pr.HasClientSecret || pr.Issuer != w.idpB.Issuer() {
		t.Fatalf("patched %+v", pr)
	}
	// allowedDomains: the spec's comma-separated string in and out; an array
	// in is accepted too, and the empty string allows every domain.
	for _, c := range []struct {
		in   any
		want string
	}{{[]string{"Gamma.Example", "alpha.example"}, "gamma.example,alpha.example"}, {"delta.example", "delta.example"}, {"", ""}} {
		res = fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"allowedDomains": c.in}), http.StatusOK)
		if got := res.JSON(t)["allowedDomains"]; got != c.want {
			t.Fatalf("allowedDomains %v answered %#v, want %q", c.in, got, c.want)
		}
	}
	// The old pair is free again, the new one taken.
	fixture.Expect(t, w.call(t, http.MethodPost, base, bAdmin, map[string]any{"name": "B", "issuer": w.idpA.Issuer(),
		"clientId": w.idpA.ClientID}), http.StatusCreated)
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, bAdmin, map[string]any{"name": "B2", "issuer": w.idpB.Issuer() + "/",
		"clientId": w.idpB.ClientID}), http.StatusConflict, "conflict")
	fixture.ExpectError(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")

	// Status: one active provider per organization.
	fixture.Expect(t, w.call(t, http.MethodPost, path+"/status", aAdmin, map[string]any{"status": "active"}), http.StatusOK)
	second := fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "Second",
		"issuer": "https://93.184.216.34/second", "clientId": "second"}), http.StatusCreated).JSON(t)["id"].(string)
	fixture.ExpectError(t, w.call(t, http.MethodPost, base+"/"+second+"/status", aAdmin, map[string]any{"status": "active"}),
		http.StatusConflict, "conflict")
	fixture.Expect(t, w.call(t, http.MethodPost, path+"/status", aAdmin, map[string]any{"status": "testing"}), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+second+"/status", aAdmin, map[string]any{"status": "active"}), http.StatusOK)

	// Delete removes the provider, its pair guard and its active row.
	fixture.Expect(t, w.call(t, http.MethodDelete, base+"/"+second, aAdmin, nil), http.StatusOK)
	fixture.NotFound(t, w.call(t, http.MethodGet, base+"/"+second, aAdmin, nil))
	var chk sso.Check
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.a.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if chk.SSOEnabled {
		t.Fatalf("check after deleting the active provider: %+v", chk)
	}
	fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "Again",
		"issuer": "https://93.184.216.34/second", "clientId": "second"}), http.StatusCreated)
}

// Deleting a provider deletes its linked identities; the accounts stay.
func TestDeleteRemovesLinkedIdentities(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	for _, who := range []string{"one", "two", "three"} {
		if _, e := w.signIn(t, w.idpA, w.a.ID, verified("sub-"+who, who+"@alpha.example")); e != "" {
			t.Fatal(e)
		}
	}
	if n := strings.Count(fixture.Scan(t, w.env), "pk:ssoident#"); n != 3 {
		t.Fatalf("%d identities, want 3", n)
	}
	fixture.Expect(t, w.call(t, http.MethodDelete, base+"/"+pr.ID, aAdmin, nil), http.StatusOK)
	scan := fixture.Scan(t, w.env)
	if strings.Contains(scan, "pk:ssoident#") || strings.Contains(scan, "pk:ssoclient#") || strings.Contains(scan, "sk:ssoactive") {
		t.Fatal("rows of the deleted provider remain")
	}
	if u, _ := w.memberships(t, "two@alpha.example"); u == nil {
		t.Fatal("deleting the provider deleted an account")
	}
}

// Who may manage providers: organizations:read to read, organizations:write
// with MFA and no restriction to write; other tenants get 404.
func TestProviderAccess(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, nil)
	path := base + "/" + pr.ID
	create := map[string]any{"name": "x", "issuer": "https://93.184.216.34/x", "clientId": "x"}
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, aViewer, create), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, aNoMFA, create), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, aRestricted, create), http.StatusForbidden, "forbidden")
	// A system caller names the owner (a partner caller without orgId creates a
	// partner provider: see TestPartnerProviderManagement).
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, sysAdmin, create), http.StatusBadRequest, "bad_request")
	for _, c := range []string{bAdmin, cAdmin, pyAdmin} {
		fixture.NotFound(t, w.call(t, http.MethodGet, path, c, nil))
		fixture.NotFound(t, w.call(t, http.MethodPatch, path, c, map[string]any{"name": "mine"}))
		fixture.NotFound(t, w.call(t, http.MethodDelete, path, c, nil))
		fixture.NotFound(t, w.call(t, http.MethodPost, path+"/status", c, map[string]any{"status": "inactive"}))
		fixture.NotFound(t, w.call(t, http.MethodPost, path+"/test", c, nil))
		fixture.NotFound(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID, c, nil))
		create["orgId"] = w.a.ID
		fixture.NotFound(t, w.call(t, http.MethodPost, base, c, create))
		delete(create, "orgId")
	}
	for _, c := range []string{aViewer, aRestricted} {
		res := w.call(t, http.MethodPatch, path, c, map[string]any{"name": "mine"})
		if res.Status != http.StatusForbidden {
			t.Errorf("PATCH as %s: %d", c, res.Status)
		}
	}
	// A partner admin names the organization.
	create["orgId"] = w.a.ID
	create["issuer"] = "https://93.184.216.34/px"
	fixture.Expect(t, w.call(t, http.MethodPost, base, pxAdmin, create), http.StatusCreated)
	// The default role: an organization role the caller holds every permission of.
	fixture.Invalid(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "r", "issuer": "https://93.184.216.34/r",
		"clientId": "r", "autoProvision": true, "defaultRoleId": role.PartnerAdminID}), "defaultRoleId")
	fixture.Invalid(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "r", "issuer": "https://93.184.216.34/r",
		"clientId": "r", "autoProvision": true, "defaultRoleId": "00000000-0000-4000-8000-0000000000ff"}), "defaultRoleId")
	fixture.Invalid(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "r", "issuer": "https://93.184.216.34/r",
		"clientId": "r", "autoProvision": true}), "defaultRoleId")
}

// Bad input on every route: 4xx naming the field, never a 500, nothing changed.
func TestBadInputNamesTheField(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, nil)
	before := fixture.Scan(t, w.env)
	path := base + "/" + pr.ID
	ok := map[string]any{"name": "n", "issuer": "https://93.184.216.34/n", "clientId": "c"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for kk, vv := range ok {
			m[kk] = vv
		}
		m[k] = v
		return m
	}
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, base, with("name", 5), "name"},
		{http.MethodPost, base, with("name", ""), "name"},
		{http.MethodPost, base, with("name", strings.Repeat("n", 256)), "name"},
		{http.MethodPost, base, with("nmae", "typo"), "nmae"},
		{http.MethodPost, base, with("clientId", ""), "clientId"},
		{http.MethodPost, base, with("clientSecret", strings.Repeat("s", 1025)), "clientSecret"},
		{http.MethodPost, base, with("type", "ldap"), "type"},
		{http.MethodPost, base, with("scopes", []string{"email"}), "scopes"},
		{http.MethodPost, base, with("scopes", []string{"openid", "a b"}), "scopes.1"},
		{http.MethodPost, base, with("scopes", make([]string, 21)), "scopes"},
		{http.MethodPost, base, with("allowedDomains", []string{"not a domain"}), "allowedDomains.0"},
		{http.MethodPost, base, with("allowedDomains", 5), "allowedDomains"},
		{http.MethodPost, base, with("allowedDomains", "example.com, not a domain"), "allowedDomains.1"},
		{http.MethodPost, base, with("attributeMapping", map[string]any{"emial": "x"}), "attributeMapping.emial"},
		{http.MethodPost, base, with("autoProvision", "yes"), "autoProvision"},
		{http.MethodPost, base, with("defaultRoleId", "not-a-uuid"), "defaultRoleId"},
		{http.MethodPost, base, with("orgId", "not-a-uuid"), "orgId"},
		{http.MethodPost, base, with("issuer", "http://93.184.216.34/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://10.0.0.1/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://169.254.169.254/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://[::ffff:0:127.0.0.2]/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://[64:ff9b::a9fe:a9fe]/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://[2001:0:a9fe:a9fe::f7f7:f7f7]/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://localhost/"), "issuer"},
		{http.MethodPost, base, with("issuer", "https://93.184.216.34/?tenant=x"), "issuer"},
		{http.MethodPost, base, with("issuer", ""), "issuer"},
		{http.MethodPatch, path, map[string]any{"name": 7}, "name"},
		{http.MethodPatch, path, map[string]any{"type": "oidc"}, "type"},
		{http.MethodPatch, path, map[string]any{"issuer": "https://127.0.0.2/"}, "issuer"},
		{http.MethodPatch, path, map[string]any{"scopes": nil}, "scopes"},
		{http.MethodPatch, path, map[string]any{"autoProvision": true}, "defaultRoleId"},
		{http.MethodPost, path + "/status", map[string]any{"status": "on"}, "status"},
		{http.MethodPost, path + "/status", map[string]any{}, "status"},
		{http.MethodPost, path + "/status", map[string]any{"status": "active", "x": 1}, "x"},
		{http.MethodPost, path + "/test", map[string]any{"x": 1}, "x"},
		{http.MethodGet, base + "/not-a-uuid", nil, "id"},
		{http.MethodPatch, base + "/not-a-uuid", map[string]any{"name": "x"}, "id"},
		{http.MethodDelete, base + "/not-a-uuid", nil, "id"},
		{http.MethodPost, base + "/not-a-uuid/status", map[string]any{"status": "active"}, "id"},
		{http.MethodPost, base + "/not-a-uuid/test", nil, "id"},
		{http.MethodPost, base, with("Name", "case"), "Name"},
		{http.MethodPost, base, with("name", "tab\tname"), "name"},
		{http.MethodPost, base, with("scopes", "openid"), "scopes"},
		{http.MethodPost, base, with("partnerId", "not-a-uuid"), "partnerId"},
		{http.MethodPatch, path, map[string]any{"allowedDomains": []any{5}}, "allowedDomains.0"},
		{http.MethodPatch, path, map[string]any{"Name": "case"}, "Name"},
		{http.MethodPatch, path, map[string]any{"orgId": "00000000-0000-4000-8000-000000000abc"}, "orgId"},
		{http.MethodPatch, path, map[string]any{"clientId": strings.Repeat("c", 256)}, "clientId"},
		{http.MethodGet, base + "?orgId=nope", nil, "orgId"},
		{http.MethodGet, base + "?partnerId=nope", nil, "partnerId"},
		{http.MethodGet, base + "?page=0", nil, "page"},
		{http.MethodGet, "/api/v1/sso/presets?limit=1000", nil, "limit"},
	} {
		res := w.call(t, c.method, c.path, aAdmin, c.body)
		if res.Status >= 500 {
			t.Errorf("%s %s %v: %d %s", c.method, c.path, c.body, res.Status, res.Body)
			continue
		}
		fixture.Invalid(t, res, c.field)
	}
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, aAdmin, with("type", "saml")), http.StatusBadRequest, "bad_request")
	if body := w.call(t, http.MethodPost, base, aAdmin, with("type", "saml")).JSON(t); body["error"] != "SAML is not implemented" {
		t.Errorf("saml: %v", body)
	}
	// Public routes.
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodGet, "/api/v1/sso/login/not-a-uuid", nil, "orgId"},
		{http.MethodGet, "/api/v1/sso/login/" + w.a.ID + "?next=x", nil, "next"},
		{http.MethodGet, "/api/v1/sso/check/not-a-uuid", nil, "orgId"},
		{http.MethodGet, "/api/v1/sso/check/" + w.a.ID + "?x=1", nil, "x"},
		{http.MethodGet, "/api/v1/sso/callback", nil, "state"},
		{http.MethodGet, "/api/v1/sso/callback?state=s", nil, "code"},
		{http.MethodGet, "/api/v1/sso/callback?state=s&state=t&code=c", nil, "state"},
		{http.MethodGet, "/api/v1/sso/callback?code=c&state=" + strings.Repeat("s", 2049), nil, "state"},
		{http.MethodPost, "/api/v1/sso/exchange", map[string]any{}, "code"},
		{http.MethodPost, "/api/v1/sso/exchange", map[string]any{"code": 5}, "code"},
		{http.MethodPost, "/api/v1/sso/exchange", map[string]any{"code": ""}, "code"},
		{http.MethodPost, "/api/v1/sso/exchange", map[string]any{"code": "c", "extra": 1}, "extra"},
		{http.MethodPost, "/api/v1/sso/exchange", map[string]any{"code": strings.Repeat("c", 257)}, "code"},
	} {
		res := w.call(t, c.method, c.path, "", c.body)
		if res.Status >= 500 {
			t.Errorf("%s %s: %d %s", c.method, c.path, res.Status, res.Body)
			continue
		}
		fixture.Invalid(t, res, c.field)
	}
	fixture.ExpectError(t, w.exchange(t, "never-issued"), http.StatusBadRequest, "bad_request")
	after := fixture.Scan(t, w.env)
	var changed []string
	for _, l := range strings.Split(after, "\n") {
		if !strings.Contains(before, l) && !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") {
			changed = append(changed, l)
		}
	}
	if len(changed) > 0 {
		t.Fatalf("bad input changed rows:\n%s", strings.Join(changed, "\n"))
	}
}

// A login at an organization without an active provider goes to the
// application's login page; a discovery failure is provider_error.
func TestLoginWithoutProviderRedirects(t *testing.T) {
	w := newWorld(t)
	for _, org := range []string{w.a.ID, "00000000-0000-4000-8000-000000000abc"} {
		res := fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/login/"+org, "", nil), http.StatusFound)
		if loc := res.Header.Get("Location"); loc != appURL+"/login?error=provider_not_found" {
			t.Fatalf("login of %s went to %s", org, loc)
		}
	}
	pr := w.provider(t, aAdmin, "", w.idpA, nil)
	_ = w.idpA.Shutdown()
	res := fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/login/"+w.a.ID, "", nil), http.StatusFound)
	if loc := res.Header.Get("Location"); loc != appURL+"/login?error=provider_error" {
		t.Fatalf("login with the provider down went to %s", loc)
	}
	var tr sso.TestResult
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/test", aAdmin, nil), http.StatusOK).Decode(t, &tr)
	if tr.Success || tr.Error == "" {
		t.Fatalf("test with the provider down: %+v", tr)
	}
}

// ATTACKS 11: a discovery document naming a plain-HTTP, local or
// internal endpoint is refused (the test reports it; a login would answer
// provider_error), even from an issuer the guard accepts.
func TestDiscoveryEndpointsPassTheGuard(t *testing.T) {
	w := newWorld(t)
	var bad atomic.Value
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		iss := "https://" + r.Host
		doc := map[string]any{"issuer": iss, "authorization_endpoint": iss + "/authorize", "token_endpoint": iss + "/token",
			"jwks_uri": iss + "/jwks", "userinfo_endpoint": iss + "/userinfo"}
		for k, v := range bad.Load().(map[string]string) {
			doc[k] = v
		}
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(doc)
	}))
	srv.TLS = w.pki.Server
	srv.StartTLS()
	defer srv.Close()
	bad.Store(map[string]string{})
	var pr sso.Provider
	fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "Odd", "issuer": srv.URL, "clientId": "odd"}),
		http.StatusCreated).Decode(t, &pr)
	var tr sso.TestResult
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/test", aAdmin, nil), http.StatusOK).Decode(t, &tr)
	if !tr.Success {
		t.Fatalf("control: %+v", tr)
	}
	for field, u := range map[string]string{"token_endpoint": "http://127.0.0.1:1/token", "jwks_uri": "https://169.254.169.254/jwks",
		"userinfo_endpoint": "https://localhost/userinfo", "authorization_endpoint": "https://[::ffff:0:a00:1]/authorize"} {
		bad.Store(map[string]string{field: u})
		fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/test", aAdmin, nil), http.StatusOK).Decode(t, &tr)
		if tr.Success || !strings.Contains(tr.Error, field) {
			t.Errorf("%s = %s: %+v", field, u, tr)
		}
	}
	// A login against it answers provider_error.
	bad.Store(map[string]string{"token_endpoint": "http://127.0.0.1:1/token"})
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/status", aAdmin, map[string]any{"status": "active"}), http.StatusOK)
	res := fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/login/"+w.a.ID, "", nil), http.StatusFound)
	if loc := res.Header.Get("Location"); loc != appURL+"/login?error=provider_error" {
		t.Fatalf("login went to %s", loc)
	}
}

// ATTACKS 9: of providers of one organization activated concurrently,
// exactly one becomes active; the others answer 409.
func TestOneActiveProviderUnderConcurrency(t *testing.T) {
	w := newWorld(t)
	var ids []string
	for i := range 8 {
		res := fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"name": "P", "clientId": "c",
			"issuer": "https://93.184.216.34/p" + string(rune('a'+i))}), http.StatusCreated)
		ids = append(ids, res.JSON(t)["id"].(string))
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won, lost := 0, 0
	for _, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := w.call(t, http.MethodPost, base+"/"+id+"/status", aAdmin, map[string]any{"status": "active"})
			mu.Lock()
			defer mu.Unlock()
			switch res.Status {
			case http.StatusOK:
				won++
			case http.StatusConflict:
				lost++
			default:
				t.Errorf("status: %d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if won != 1 || lost != len(ids)-1 {
		t.Fatalf("%d activations won, %d lost", won, lost)
	}
	var l struct{ Data []sso.Provider }
	fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK).Decode(t, &l)
	active := 0
	for _, p := range l.Data {
		if p.Status == sso.StatusActive {
			active++
		}
	}
	if active != 1 {
		t.Fatalf("%d providers active", active)
	}
}

// ATTACKS 13: the public routes are limited per source IP (30 per 5 minutes
// each): the 31st answers 429 rate_limited with retryAfter and Retry-After,
// changes nothing, and another address is not affected.
func TestPublicRoutesAreRateLimited(t *testing.T) {
	w := newWorld(t)
	const ip = "203.0.113.7:4000"
	for _, c := range []struct {
		name, method, path string
		body               any
		under              int
	}{
		{"login", http.MethodGet, "/api/v1/sso/login/" + w.a.ID, nil, http.StatusFound},
		{"callback", http.MethodGet, "/api/v1/sso/callback?state=s&code=c", nil, http.StatusFound},
		{"exchange", http.MethodPost, "/api/v1/sso/exchange", map[string]any{"code": "never-issued"}, http.StatusBadRequest},
	} {
		t.Run(c.name, func(t *testing.T) {
			do := func(addr string) fixture.Response {
				return fixture.Do(t, w.api, fixture.Request{Method: c.method, Path: c.path, Body: c.body, RemoteAddr: addr})
			}
			for i := range sso.LoginLimit.Limit {
				if res := do(ip); res.Status != c.under {
					t.Fatalf("request %d: %d %s", i+1, res.Status, res.Body)
				}
			}
			before := fixture.Scan(t, w.env)
			res := do(ip)
			body := fixture.ExpectError(t, res, http.StatusTooManyRequests, "rate_limited")
			if res.Header.Get("Retry-After") == "" {
				t.Fatal("429 without Retry-After")
			}
			if ra, _ := body["retryAfter"].(float64); ra < 1 {
				t.Fatalf("retryAfter %v", body["retryAfter"])
			}
			if res.Header.Get("Location") != "" || res.Header.Get("Set-Cookie") != "" {
				t.Fatalf("a refused request still redirected or set a cookie: %v", res.Header)
			}
			for _, l := range strings.Split(fixture.Scan(t, w.env), "\n") {
				if !strings.Contains(before, l) && !strings.Contains(l, "pk:rl#") && !strings.Contains(l, "pk:audit") {
					t.Fatalf("a refused request changed a row: %s", l)
				}
			}
			if res := do("203.0.113.8:4000"); res.Status != c.under {
				t.Fatalf("another address: %d %s", res.Status, res.Body)
			}
		})
	}
}

// ATTACKS 13: a burst of 64 concurrent exchanges from one address on one
// limit: each answered 400 (the code is unknown) or 429, never a 5xx, and
// exactly the limit's number get through.
func TestExchangeBurstIsLimitedExactly(t *testing.T) {
	w := newWorld(t)
	var wg sync.WaitGroup
	var passed, limited atomic.Int32
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/sso/exchange",
				Body: map[string]any{"code": "never-issued"}, RemoteAddr: "203.0.113.64:1"})
			switch res.Status {
			case http.StatusBadRequest:
				passed.Add(1)
			case http.StatusTooManyRequests:
				limited.Add(1)
			default:
				t.Errorf("exchange: %d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if int(passed.Load()) != sso.ExchangeLimit.Limit || passed.Load()+limited.Load() != 64 {
		t.Fatalf("%d passed, %d limited; want %d passed", passed.Load(), limited.Load(), sso.ExchangeLimit.Limit)
	}
}
