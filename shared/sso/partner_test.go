package sso_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/oauth2-proxy/mockoidc"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/tests/fixture"
)

// partnerCaller adds a partner-scope caller of partnerID to the world.
func (w *world) partnerCaller(t *testing.T, name, partnerID, roleID string, access authz.OrgAccess, orgIDs ...string) {
	t.Helper()
	c := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: partnerID, RoleID: roleID, OrgAccess: access,
		OrgIDs: orgIDs, MFA: true, TOTP: true})
	w.tokens[name], w.emails[name] = c.Token, c.Email
}

// A partner's own provider: who may create, read and change it, and who
// never even sees it (another partner, an organization of the partner, a
// partner caller without access to every organization, a lower role).
func TestPartnerProviderManagement(t *testing.T) {
	w := newWorld(t)
	w.partnerCaller(t, "px technician", w.px.ID, role.PartnerTechnicianID, authz.OrgAccessAll)
	w.partnerCaller(t, "px admin of A only", w.px.ID, role.PartnerAdminID, authz.OrgAccessSelected, w.a.ID)
	body := map[string]any{"name": "Partner X IdP", "issuer": w.idpA.Issuer(), "clientId": w.idpA.ClientID,
		"clientSecret": w.idpA.ClientSecret, "autoProvision": true, "defaultRoleId": role.PartnerViewerID}

	// Refusals first: nothing of them may remain.
	fixture.Invalid(t, w.call(t, http.MethodPost, base, pxAdmin, map[string]any{"name": "x", "issuer": "https://93.184.216.34/x",
		"clientId": "x", "enforceSSO": true}), "enforceSSO")
	fixture.Invalid(t, w.call(t, http.MethodPost, base, pxAdmin, map[string]any{"name": "x", "issuer": "https://93.184.216.34/x",
		"clientId": "x", "autoProvision": true, "defaultRoleId": role.OrgViewerID}), "defaultRoleId")
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, "px admin of A only", body), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, "px technician", body), http.StatusForbidden, "forbidden")
	fixture.NotFound(t, w.call(t, http.MethodPost, base, pyAdmin, map[string]any{"partnerId": w.px.ID, "name": "x",
		"issuer": "https://93.184.216.34/x", "clientId": "x"}))
	fixture.NotFound(t, w.call(t, http.MethodPost, base, aAdmin, map[string]any{"partnerId": w.px.ID, "name": "x",
		"issuer": "https://93.184.216.34/x", "clientId": "x"}))
	fixture.Invalid(t, w.call(t, http.MethodPost, base, sysAdmin, map[string]any{"orgId": w.a.ID, "partnerId": w.px.ID,
		"name": "x", "issuer": "https://93.184.216.34/x", "clientId": "x"}), "partnerId")
	fixture.Invalid(t, w.call(t, http.MethodPost, base, sysAdmin, map[string]any{"partnerId": "nope",
		"name": "x", "issuer": "https://93.184.216.34/x", "clientId": "x"}), "partnerId")
	fixture.NotFound(t, w.call(t, http.MethodPost, base, sysAdmin, map[string]any{"partnerId": "00000000-0000-4000-8000-00000000beef",
		"name": "x", "issuer": "https://93.184.216.34/x", "clientId": "x"}))
	if strings.Contains(fixture.Scan(t, w.env), "sk:ssoprov#") {
		t.Fatal("a refused create left a provider")
	}

	// The partner's administrator with access to every organization creates it.
	res := fixture.Expect(t, w.call(t, http.MethodPost, base, pxAdmin, body), http.StatusCreated)
	fixture.Budget(t, res, 4)
	var pr sso.Provider
	res.Decode(t, &pr)
	if pr.PartnerID != w.px.ID || pr.OrgID != "" || pr.Status != sso.StatusInactive || pr.EnforceSSO {
		t.Fatalf("created %+v", pr)
	}
	path := base + "/" + pr.ID

	// Reads: the partner's callers; lists by owner.
	fixture.Expect(t, w.call(t, http.MethodGet, path, "px technician", nil), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodGet, path, "px admin of A only", nil), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodGet, path, sysAdmin, nil), http.StatusOK)
	var l struct{ Data []sso.Provider }
	fixture.Expect(t, w.call(t, http.MethodGet, base, pxAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 1 || l.Data[0].ID != pr.ID {
		t.Fatalf("partner list %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?partnerId="+w.px.ID, sysAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 1 || l.Data[0].ID != pr.ID {
		t.Fatalf("system list %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID, pxAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 0 {
		t.Fatalf("organization A's list shows the partner's provider: %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 0 {
		t.Fatalf("A's admin sees the partner's provider: %+v", l)
	}
	fixture.Invalid(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID+"&partnerId="+w.px.ID, sysAdmin, nil), "partnerId")

	// Another partner, an organization of the partner and another partner's
	// organization: 404 on every operation.
	for _, c := range []string{pyAdmin, aAdmin, bAdmin, cAdmin} {
		fixture.NotFound(t, w.call(t, http.MethodGet, path, c, nil))
		fixture.NotFound(t, w.call(t, http.MethodPatch, path, c, map[string]any{"name": "mine"}))
		fixture.NotFound(t, w.call(t, http.MethodDelete, path, c, nil))
		fixture.NotFound(t, w.call(t, http.MethodPost, path+"/status", c, map[string]any{"status": "active"}))
		fixture.NotFound(t, w.call(t, http.MethodPost, path+"/test", c, nil))
		fixture.NotFound(t, w.call(t, http.MethodGet, base+"?partnerId="+w.px.ID, c, nil))
	}
	// Lower: a role without organizations:write, and a partner caller without
	// access to every organization, see it but may not change it.
	for _, c := range []string{"px technician", "px admin of A only"} {
		fixture.ExpectError(t, w.call(t, http.MethodPatch, path, c, map[string]any{"name": "mine"}), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.call(t, http.MethodPost, path+"/status", c, map[string]any{"status": "active"}), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.call(t, http.MethodDelete, path, c, nil), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.call(t, http.MethodPost, path+"/test", c, nil), http.StatusForbidden, "forbidden")
	}
	fixture.Invalid(t, w.call(t, http.MethodPatch, path, pxAdmin, map[string]any{"enforceSSO": true}), "enforceSSO")
	fixture.Invalid(t, w.call(t, http.MethodPatch, path, pxAdmin, map[string]any{"defaultRoleId": role.OrgAdminID}), "defaultRoleId")

	// Activation, /sso/check by the partner's id; a system caller's own create.
	fixture.Expect(t, w.call(t, http.MethodPost, path+"/status", pxAdmin, map[string]any{"status": "active"}), http.StatusOK)
	var chk sso.Check
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.px.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if !chk.SSOEnabled || chk.Provider == nil || chk.Provider.ID != pr.ID || chk.EnforceSSO {
		t.Fatalf("check of the partner: %+v", chk)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.a.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if chk.SSOEnabled {
		t.Fatalf("organization A inherits its partner's provider: %+v", chk)
	}
	var sys sso.Provider
	fixture.Expect(t, w.call(t, http.MethodPost, base, sysAdmin, map[string]any{"partnerId": w.py.ID, "name": "Y",
		"issuer": "https://93.184.216.34/y", "clientId": "y"}), http.StatusCreated).Decode(t, &sys)
	if sys.PartnerID != w.py.ID {
		t.Fatalf("system create %+v", sys)
	}
	fixture.Expect(t, w.call(t, http.MethodDelete, path, pxAdmin, nil), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/sso/check/"+w.px.ID, "", nil), http.StatusOK).Decode(t, &chk)
	if chk.SSOEnabled {
		t.Fatalf("check after delete: %+v", chk)
	}
}

// A partner's provider signs in only the partner's own partner-scope members:
// never a member of one of its organizations, of another partner or of
// another partner's organization; another partner's provider never signs in
// this partner's members; nothing changes on a refusal.
func TestPartnerProviderSignsInOnlyThePartnersMembers(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, pxAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.PartnerViewerID})
	if pr.PartnerID != w.px.ID {
		t.Fatalf("provider %+v", pr)
	}

	// A new verified e-mail: a partner-scope member of X with orgAccess none.
	code, e := w.signIn(t, w.idpA, w.px.ID, verified("sub-nia", "nia@partner-x.example"))
	if e != "" {
		t.Fatalf("provisioning: %s", e)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if lr.Tokens == nil || lr.User == nil || lr.User.Email != "nia@partner-x.example" {
		t.Fatalf("exchange: %+v", lr)
	}
	_, ms := w.memberships(t, "nia@partner-x.example")
	if len(ms) != 1 || ms[0].Scope != authz.ScopePartner || ms[0].PartnerID != w.px.ID || ms[0].OrgID != "" ||
		ms[0].RoleID != role.PartnerViewerID || ms[0].OrgAccess != authz.OrgAccessNone || !ms[0].Active() {
		t.Fatalf("provisioned %+v", ms)
	}
	// An existing partner member links on a verified e-mail.
	tech := fixture.User(t, w.env, fixture.Member{Email: "tom@partner-x.example", Scope: authz.ScopePartner, PartnerID: w.px.ID,
		RoleID: role.PartnerTechnicianID, OrgAccess: authz.OrgAccessAll})
	code, e = w.signIn(t, w.idpA, w.px.ID, verified("sub-tom", "tom@partner-x.example"))
	if e != "" {
		t.Fatalf("partner member: %s", e)
	}
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if lr.User.ID != tech.UserID {
		t.Fatalf("signed in %+v", lr.User)
	}

	// Attacks: members elsewhere, asserted by X's IdP.
	fixture.User(t, w.env, fixture.Member{Email: "amy@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID,
		RoleID: role.OrgViewerID})
	fixture.User(t, w.env, fixture.Member{Email: "yan@partner-y.example", Scope: authz.ScopePartner, PartnerID: w.py.ID,
		RoleID: role.PartnerViewerID, OrgAccess: authz.OrgAccessAll})
	fixture.User(t, w.env, fixture.Member{Email: "cat@charlie.example", Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID,
		RoleID: role.OrgViewerID})
	before := fixture.Scan(t, w.env)
	for _, who := range []string{"amy@alpha.example", "yan@partner-y.example", "cat@charlie.example", w.emails[sysAdmin],
		w.emails[pyAdmin]} {
		if _, e := w.signIn(t, w.idpA, w.px.ID, verified("attacker-"+who, who)); e != sso.CodeAccountExists {
			t.Errorf("X's provider asserting %s: %q, want account_exists", who, e)
		}
	}
	// An organization of the partner does not fall back to its partner's provider.
	if loc := w.browser().Start(t, w.a.ID); !strings.HasSuffix(loc, "/login?error=provider_not_found") {
		t.Fatalf("A's login went to %s", loc)
	}
	// Partner Y's own provider cannot sign in X's members.
	w.provider(t, pyAdmin, "", w.idpB, map[string]any{"autoProvision": true, "defaultRoleId": role.PartnerAdminID})
	for _, who := range []string{"tom@partner-x.example", "nia@partner-x.example", "amy@alpha.example"} {
		if _, e := w.signIn(t, w.idpB, w.py.ID, verified("y-"+who, who)); e != sso.CodeAccountExists {
			t.Errorf("Y's provider asserting %s: %q, want account_exists", who, e)
		}
	}
	// An unverified e-mail of X's member is not linked either.
	if _, e := w.signIn(t, w.idpA, w.px.ID, &mockoidc.MockUser{Subject: "unverified-tom", Email: "tom@partner-x.example"}); e != sso.CodeUserNotFound {
		t.Errorf("unverified: %q, want user_not_found", e)
	}
	for _, l := range strings.Split(fixture.Scan(t, w.env), "\n") {
		if !strings.Contains(before, l) && !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") &&
			!strings.Contains(l, "pk:ssologin#") && !strings.Contains(l, "ssoprov") && !strings.Contains(l, "ssoclient") &&
			!strings.Contains(l, "sk:ssoactive") {
			t.Errorf("a refused login changed a row: %s", l)
		}
	}
	// The partner-scope member X provisioned never reaches an organization.
	_, ms = w.memberships(t, "nia@partner-x.example")
	if len(ms) != 1 {
		t.Fatalf("memberships %+v", ms)
	}
	// allowedDomains binds a partner provider too; and Y cannot register X's
	// IdP application (the issuer and client id pair is taken).
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+pr.ID, pxAdmin, map[string]any{"allowedDomains": []string{"partner-x.example"}}),
		http.StatusOK)
	if _, e := w.signIn(t, w.idpA, w.px.ID, verified("sub-out", "out@elsewhere.example")); e != sso.CodeDomainNotAllowed {
		t.Errorf("other domain: %q, want domain_not_allowed", e)
	}
	fixture.ExpectError(t, w.call(t, http.MethodPost, base, pyAdmin, map[string]any{"name": "copy", "issuer": w.idpA.Issuer(),
		"clientId": w.idpA.ClientID}), http.StatusConflict, "conflict")
}

// ATTACKS 3: whoever configures a provider's trust can sign in as anyone it
// links, so a provider admits no membership whose role holds a permission
// beyond what its configurers held. A caller holding only organizations
// read/write creates A's provider: A's admin cannot be signed in through it;
// a rename by A's admin does not raise the ceiling; re-anchoring it (issuer
// and clientId) as A's admin does.
func TestProviderCeilingStopsSigningInAboveItsConfigurer(t *testing.T) {
	w := newWorld(t)
	roles := fixture.API(t, w.env, "roles")
	res := fixture.Expect(t, fixture.Do(t, roles, fixture.Request{Method: http.MethodPost, Path: "/api/v1/roles", Token: w.tokens[aAdmin],
		Body: map[string]any{"name": "SSO keeper", "permissions": []map[string]string{{"resource": "organizations", "action": "read"},
			{"resource": "organizations", "action": "write"}}}}), http.StatusCreated)
	keeperRole, _ := res.JSON(t)["id"].(string)
	keeper := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: keeperRole,
		RoleOwner: "ORG#" + w.a.ID, MFA: true})
	w.tokens["keeper"] = keeper.Token
	pr := w.provider(t, "keeper", "", w.idpA, nil)

	admin := fixture.User(t, w.env, fixture.Member{Email: "boss@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID,
		OrgID: w.a.ID, RoleID: role.OrgAdminID})
	fixture.User(t, w.env, fixture.Member{Email: "peer@alpha.example", Scope: authz.ScopeOrg, PartnerID: w.px.ID,
		OrgID: w.a.ID, RoleID: keeperRole, RoleOwner: "ORG#" + w.a.ID})
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("boss", "boss@alpha.example")); e != sso.CodeNoOrgAccess {
		t.Fatalf("admin through the keeper's provider: %q, want no_org_access", e)
	}
	if strings.Contains(fixture.Scan(t, w.env), "pk:ssoident#") {
		t.Fatal("a refused login linked an identity")
	}
	// A peer within the ceiling signs in.
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("peer", "peer@alpha.example")); e != "" {
		t.Fatalf("peer: %s", e)
	}
	// A rename by A's admin keeps the keeper's ceiling.
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+pr.ID, aAdmin, map[string]any{"name": "Renamed"}), http.StatusOK)
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("boss", "boss@alpha.example")); e != sso.CodeNoOrgAccess {
		t.Fatalf("after a rename: %q, want no_org_access", e)
	}
	// Re-anchored by A's admin: the admin's ceiling.
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+pr.ID, aAdmin, map[string]any{"issuer": w.idpA.Issuer(),
		"clientId": w.idpA.ClientID}), http.StatusOK)
	code, e := w.signIn(t, w.idpA, w.a.ID, verified("boss", "boss@alpha.example"))
	if e != "" {
		t.Fatalf("after re-anchoring: %s", e)
	}
	var lr signin.Result
	fixture.Expect(t, w.exchange(t, code), http.StatusOK).Decode(t, &lr)
	if lr.User.ID != admin.UserID {
		t.Fatalf("signed in %+v", lr.User)
	}
	// The keeper lowers it again by any write (status): the admin's link no
	// longer signs in.
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/status", "keeper", map[string]any{"status": "testing"}), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+pr.ID+"/status", "keeper", map[string]any{"status": "active"}), http.StatusOK)
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("boss", "boss@alpha.example")); e != sso.CodeNoOrgAccess {
		t.Fatalf("linked admin after the keeper's write: %q, want no_org_access", e)
	}
}

// A link is bound to the issuer that vouched for it: moving a provider to
// another issuer does not let the new issuer sign in the old links' accounts
// by naming their subjects (it must pass the e-mail rules again).
func TestLinksAreBoundToTheirIssuer(t *testing.T) {
	w := newWorld(t)
	pr := w.provider(t, aAdmin, "", w.idpA, map[string]any{"autoProvision": true, "defaultRoleId": role.OrgViewerID})
	if _, e := w.signIn(t, w.idpA, w.a.ID, verified("shared-sub", "lia@alpha.example")); e != "" {
		t.Fatal(e)
	}
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+pr.ID, aAdmin, map[string]any{"issuer": w.idpB.Issuer(),
		"clientId": w.idpB.ClientID, "clientSecret": w.idpB.ClientSecret}), http.StatusOK)
	// The new issuer names the same subject with an unverified other e-mail:
	// not Lia's link; a new account is not provisioned without verification.
	if _, e := w.signIn(t, w.idpB, w.a.ID, &mockoidc.MockUser{Subject: "shared-sub", Email: "someone@alpha.example"}); e != sso.CodeUserNotFound {
		t.Fatalf("the new issuer's same subject: %q, want user_not_found", e)
	}
}
