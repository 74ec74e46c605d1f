package enrollment_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// world is two partners (X with organizations A and B, Y with C), sites of A,
// a device group of A and one signed-in caller per role and restriction.
type world struct {
	env    *testenv.Env
	api    http.Handler
	px, py tenant.Partner
	a, b   tenant.Organization
	c      tenant.Organization
	a1, a2 tenant.Site
	c1     tenant.Site
	gA     string // a device group of A
	tokens map[string]string
}

const (
	sysAdmin    = "system admin"
	pxAdmin     = "partner X admin"
	pxSelectedB = "partner X admin, selected B"
	pyAdmin     = "partner Y admin"
	aAdmin      = "org A admin"
	aNoMFA      = "org A admin without mfa"
	aViewer     = "org A viewer"
	aTech       = "org A technician"
	aRestricted = "org A admin restricted to site a1"
	aGroupOnly  = "org A admin restricted to group gA"
	bAdmin      = "org B admin"
	cAdmin      = "org C admin"
)

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	w := &world{env: env, tokens: map[string]string{}}
	w.api = fixture.API(t, env, "agents", "devices", "enrollment-keys")
	w.px = fixture.Partner(t, env, "Partner X")
	w.py = fixture.Partner(t, env, "Partner Y")
	w.a = fixture.Org(t, env, w.px.ID, "Alpha")
	w.b = fixture.Org(t, env, w.px.ID, "Bravo")
	w.c = fixture.Org(t, env, w.py.ID, "Charlie")
	w.a1 = fixture.Site(t, env, w.a.ID, "A one")
	w.a2 = fixture.Site(t, env, w.a.ID, "A two")
	w.c1 = fixture.Site(t, env, w.c.ID, "C one")
	w.gA = uuid.NewString()
	g := tenant.DeviceGroup{Keys: tenant.GroupKeys(w.a.ID, w.gA), ID: w.gA, OrgID: w.a.ID, Name: "Group A", CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := env.Store.Do(context.Background(), store.PutNew(g)); err != nil {
		t.Fatal(err)
	}
	users := map[string]fixture.Member{
		sysAdmin:    {Scope: authz.ScopeSystem, RoleID: role.SystemAdminID, MFA: true},
		pxAdmin:     {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		pxSelectedB: {Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{w.b.ID}, MFA: true, TOTP: true},
		pyAdmin:     {Scope: authz.ScopePartner, PartnerID: w.py.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true},
		aAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID, MFA: true},
		aNoMFA:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID},
		aViewer:     {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgViewerID, MFA: true},
		aTech:       {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgTechnicianID, MFA: true},
		aRestricted: {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID, SiteIDs: []string{w.a1.ID}, MFA: true},
		aGroupOnly:  {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.a.ID, RoleID: role.OrgAdminID, GroupIDs: []string{w.gA}, MFA: true},
		bAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.px.ID, OrgID: w.b.ID, RoleID: role.OrgAdminID, MFA: true},
		cAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.py.ID, OrgID: w.c.ID, RoleID: role.OrgAdminID, MFA: true},
	}
	for name, m := range users {
		w.tokens[name] = fixture.User(t, env, m).Token
	}
	return w
}

// call serves one request as caller ("" for none).
func (w *world) call(t *testing.T, method, path, caller string, body any) fixture.Response {
	t.Helper()
	tok := ""
	if caller != "" {
		if tok = w.tokens[caller]; tok == "" {
			t.Fatalf("no caller %q", caller)
		}
	}
	return fixture.Do(t, w.api, fixture.Request{Method: method, Path: path, Token: tok, Body: body})
}

// agentCall serves one request with an agent token, from ip.
func (w *world) agentCall(t testing.TB, method, path, token string, body any) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.api, fixture.Request{Method: method, Path: path, Token: token, Body: body})
}

// key creates an enrollment key in orgID as caller and returns id and raw key.
func (w *world) key(t *testing.T, caller string, body map[string]any) (string, string) {
	t.Helper()
	res := fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/enrollment-keys", caller, body), http.StatusCreated)
	var k struct{ ID, Key string }
	res.Decode(t, &k)
	return k.ID, k.Key
}

// enroll enrolls a device with raw from a fresh source address.
func (w *world) enroll(t testing.TB, raw, host string) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.api, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll",
		RemoteAddr: "198.51.100." + uuid.NewString()[:2] + ":1234", Body: enrollBody(raw, host)})
}

func enrollBody(raw, host string) map[string]any {
	return map[string]any{"enrollmentKey": raw, "hostname": host, "osType": "windows", "osVersion": "11",
		"architecture": "x64", "agentVersion": "1.0.0"}
}

// device enrolls one device with a fresh key of orgID (site optional) and
// returns its id and token.
func (w *world) device(t *testing.T, caller, orgID, siteID, host string) (string, string) {
	t.Helper()
	body := map[string]any{"orgId": orgID, "name": "k " + host}
	if siteID != "" {
		body["siteId"] = siteID
	}
	_, raw := w.key(t, caller, body)
	res := fixture.Expect(t, w.enroll(t, raw, host), http.StatusCreated)
	var e struct{ DeviceID, AuthToken string }
	res.Decode(t, &e)
	return e.DeviceID, e.AuthToken
}

// expectError checks status, code and, for validation failures, the fields.
func expectError(t testing.TB, res fixture.Response, status int, code string, field ...string) map[string]any {
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

func invalid(t testing.TB, res fixture.Response, field string) {
	t.Helper()
	expectError(t, res, http.StatusBadRequest, "validation_failed", field)
}

func notFound(t testing.TB, res fixture.Response) {
	t.Helper()
	expectError(t, res, http.StatusNotFound, "not_found")
}

// ids lists the ids of a {data: [...]} answer, sorted.
func ids(t testing.TB, res fixture.Response) []string {
	t.Helper()
	fixture.Expect(t, res, http.StatusOK)
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

// scan returns every item of the table as text, for secret scans.
func (w *world) scan(t testing.TB) string {
	t.Helper()
	var sb strings.Builder
	p := dynamodb.NewScanPaginator(w.env.Store.DB, &dynamodb.ScanInput{TableName: &w.env.Store.Table})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			var m map[string]any
			if err := store.Unmarshal(it, &m); err != nil {
				t.Fatal(err)
			}
			sb.WriteString(strings.ToLower(fmt.Sprintf("%v", m)))
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}
