package tenant_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"testing"
	_ "time/tzdata" // site timezones are validated with time.LoadLocation

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// The tenancy routes, driven over HTTP against the emulator through the
// routers of fixture.World (the organizations and sites groups).

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// world is two partners (X with organizations A and B, Y with C), sites, device
// groups and one signed-in caller per role and restriction the tests need.
type world struct {
	env   *testenv.Env
	orgs  http.Handler
	sites http.Handler

	px, py    tenant.Partner
	a, b, c   tenant.Organization
	a1, a2    tenant.Site
	b1, c1    tenant.Site
	gA1, gA2  tenant.DeviceGroup // groups of A in sites a1 and a2
	gA, gB    tenant.DeviceGroup // site-less groups of A and B
	gC        tenant.DeviceGroup
	tokens    map[string]string
	deviceRID string // an organization role with devices:read only
}

// Callers of the world.
const (
	sysAdmin     = "system admin"
	pxAdmin      = "partner X admin"
	pxNoMFA      = "partner X admin without mfa"
	pxSelected   = "partner X admin, selected A"
	pxNone       = "partner X admin, access none"
	pxViewer     = "partner X viewer"
	pyAdmin      = "partner Y admin"
	aAdmin       = "org A admin"
	aNoMFA       = "org A admin without mfa"
	aViewer      = "org A viewer"
	aTech        = "org A technician"
	aRestricted  = "org A admin restricted to site a1"
	aGroupOnly   = "org A admin restricted to group gA"
	aDevicesOnly = "org A devices:read only"
	bAdmin       = "org B admin"
)

// newWorld builds on fixture.World (its partners, organizations, sites a1,
// a2 and c1, its device group of A as gA, and its cast, whose names the
// callers above share) and adds what the tenancy tests need besides.
func newWorld(t *testing.T) *world {
	t.Helper()
	fw := fixture.NewWorld(t, "organizations", "sites")
	env := fw.Env
	w := &world{env: env, orgs: fw.API, sites: fw.API, tokens: fw.Tokens,
		px: fw.PX, py: fw.PY, a: fw.A, b: fw.B, c: fw.C, a1: fw.A1, a2: fw.A2, c1: fw.C1}
	w.b1 = fixture.Site(t, env, w.b.ID, "B one")
	gA, err := tenant.Store{St: env.Store}.Group(context.Background(), w.a.ID, fw.GA)
	if err != nil {
		t.Fatal(err)
	}
	w.gA = *gA

	w.deviceRID = customRole(t, env, role.OrgOwner(w.a.ID), authz.ScopeOrg, authz.DevicesRead)
	users := map[string]fixture.Member{
		pxNoMFA:      {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true},
		pxSelected:   {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{w.a.ID}, MFA: true, TOTP: true},
		pxNone:       {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessNone, MFA: true, TOTP: true},
		pxViewer:     {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerViewerID, OrgAccess: authz.OrgAccessAll, MFA: true},
		aDevicesOnly: {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: w.deviceRID, RoleOwner: role.OrgOwner(w.a.ID), MFA: true},
	}
	for name, m := range users {
		w.tokens[name] = fixture.User(t, env, m).Token
	}
	w.gA1 = w.group(t, aAdmin, w.a.ID, w.a1.ID, "Group A1")
	w.gA2 = w.group(t, aAdmin, w.a.ID, w.a2.ID, "Group A2")
	w.gB = w.group(t, bAdmin, w.b.ID, "", "Group B")
	w.gC = w.group(t, pyAdmin, w.c.ID, w.c1.ID, "Group C")
	w.tokens[aGroupOnly] = fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID,
		RoleID: role.OrgAdminID, GroupIDs: []string{w.gA1.ID}, MFA: true}).Token
	return w
}

// customRole writes a custom role with perms (there is no role service yet).
func customRole(t *testing.T, env *testenv.Env, owner string, scope authz.Scope, perms ...authz.Permission) string {
	t.Helper()
	id := uuid.NewString()
	r := role.Role{Keys: store.Keys{PK: "ROLES#" + owner, SK: "ROLE#" + id, GSI1PK: "ROLEREF#" + id, GSI1SK: "ROLE"},
		ID: id, Owner: owner, Scope: scope, Name: "custom " + id[:8]}
	for _, p := range perms {
		r.Permissions = append(r.Permissions, p.String())
	}
	if err := env.Store.Do(context.Background(), store.PutNew(r)); err != nil {
		t.Fatal(err)
	}
	return id
}

// call serves one request as caller ("" for none).
func (w *world) call(t *testing.T, h http.Handler, method, path, caller string, body any) fixture.Response {
	t.Helper()
	tok := ""
	if caller != "" {
		tok = w.tokens[caller]
		if tok == "" {
			t.Fatalf("no caller %q", caller)
		}
	}
	return fixture.Do(t, h, fixture.Request{Method: method, Path: path, Token: tok, Body: body})
}

func (w *world) group(t *testing.T, caller, orgID, siteID, name string) tenant.DeviceGroup {
	t.Helper()
	body := map[string]any{"orgId": orgID, "name": name}
	if siteID != "" {
		body["siteId"] = siteID
	}
	var g tenant.DeviceGroup
	fixture.Expect(t, w.call(t, w.sites, http.MethodPost, "/api/v1/device-groups", caller, body), http.StatusCreated).Decode(t, &g)
	return g
}

// org reads an organization as stored.
func (w *world) org(t *testing.T, id string) *tenant.Organization {
	t.Helper()
	o, err := tenant.Store{St: w.env.Store}.Org(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// expectError checks status, code and, for validation failures, the field.
func expectError(t *testing.T, res fixture.Response, status int, code string, field ...string) map[string]any {
	t.Helper()
	fixture.Expect(t, res, status)
	body := res.JSON(t)
	if body["code"] != code {
		t.Fatalf("code %v, want %s: %s", body["code"], code, res.Body)
	}
	for _, f := range field {
		details, _ := body["details"].(map[string]any)
		fe, _ := details["fieldErrors"].(map[string]any)
		if _, ok := fe[f]; !ok {
			t.Fatalf("no field error for %q: %s", f, res.Body)
		}
	}
	return body
}

func notFound(t *testing.T, res fixture.Response) {
	t.Helper()
	expectError(t, res, http.StatusNotFound, "not_found")
}

func forbidden(t *testing.T, res fixture.Response) {
	t.Helper()
	expectError(t, res, http.StatusForbidden, "forbidden")
}

func mfaRequired(t *testing.T, res fixture.Response) {
	t.Helper()
	expectError(t, res, http.StatusForbidden, "MFA_REQUIRED")
}

func invalid(t *testing.T, res fixture.Response, field string) {
	t.Helper()
	expectError(t, res, http.StatusBadRequest, "validation_failed", field)
}

// exactly fails unless res made exactly n DynamoDB calls (fixture.Budget bounds
// from above; an equal count keeps the documented numbers honest).
func exactly(t *testing.T, res fixture.Response, n int) {
	t.Helper()
	fixture.Budget(t, res, n)
	if res.DBCalls != n {
		t.Fatalf("made %d DynamoDB calls, documented %d", res.DBCalls, n)
	}
}

// ids lists the ids of a {data: [...]} answer.
func ids(t *testing.T, res fixture.Response) []string {
	t.Helper()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	res.Decode(t, &list)
	out := []string{}
	for _, d := range list.Data {
		out = append(out, d.ID)
	}
	slices.Sort(out)
	return out
}

func sorted(s ...string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}

func sameIDs(t *testing.T, res fixture.Response, want ...string) {
	t.Helper()
	fixture.Expect(t, res, http.StatusOK)
	if got := ids(t, res); !slices.Equal(got, sorted(want...)) {
		t.Fatalf("ids %v, want %v", got, sorted(want...))
	}
}

// audited fails unless tenant's audit log holds action for resourceID.
func audited(t *testing.T, w *world, tenantKey, action, resourceID string) audit.Record {
	t.Helper()
	recs, err := audit.List(context.Background(), w.env.Store, tenantKey, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Action == action && r.ResourceID == resourceID {
			if r.At != clock.Format(w.env.Clock.Now()) {
				t.Fatalf("audit %s at %s, want the injected clock's %s", action, r.At, clock.Format(w.env.Clock.Now()))
			}
			return r
		}
	}
	t.Fatalf("no audit record %s for %s in %s", action, resourceID, tenantKey)
	return audit.Record{}
}
