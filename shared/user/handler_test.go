package user_test

// Route budgets (DynamoDB calls per request, fixture.Budget), an organization
// caller's authentication being 2 (BatchGet of profile, session, membership +
// GetItem of the role):
//
//	GET    /users/me            3   auth + profile
//	PATCH  /users/me            4   auth + profile + transaction
//	GET    /users               4   auth + members query + profiles BatchGet (per 100)
//	                            +1  with ?orgId= (organization read)
//	GET    /users/{id}          3   auth + BatchGet (profile, membership)
//	GET    /users/roles         3   auth + custom roles query (system roles are code)
//	POST   /users/invite        6   auth + e-mail guard + profile (existing) + role (custom only)
//	                                + transaction + scope name; +1 BatchGet with siteIds/deviceGroupIds
//	POST   /users/resend-invite 8   auth + BatchGet + two invitation limits (1-2 each) + transaction + scope name
//	PATCH  /users/{id}          4   auth + BatchGet + transaction
//	DELETE /users/{id}          5   auth + BatchGet + the organization's API keys, queried before and after
//	                                (RemoveMembership revokes the user's) + transaction (+1 per revoked key)
//	POST   /users/{id}/role     5   auth + BatchGet + role (custom only) + transaction
//	POST   /auth/invite/preview 2   BatchGet (profile, invitation) + scope name
//	POST   /auth/accept-invite  6   rate limit + BatchGet + membership + transaction + sign-in
//	                                transaction + outbox clear (user.login event); an existing
//	                                account +1 (its attempt count), +1 when that row had expired

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

const strongPassword = "Tangerine-Kettle-42!"

// world is the fixture's tenants (partner X with organizations A and B,
// partner Y with C) served over HTTP, with admins of A and C, a member of A
// and an admin of partner X.
type world struct {
	fixture.Tenants
	env          *testenv.Env
	do           func(method, path, token string, body any) fixture.Response
	adminA       fixture.Caller
	adminC       fixture.Caller
	memberA      fixture.Caller
	partnerAdmin fixture.Caller
}

func newWorld(t *testing.T) *world {
	t.Helper()
	env := testenv.New(t)
	h := fixture.API(t, env, "users", "auth")
	w := &world{Tenants: fixture.NewTenants(t, env), env: env}
	w.do = func(method, path, token string, body any) fixture.Response {
		return fixture.Do(t, h, fixture.Request{Method: method, Path: path, Token: token, Body: body, RemoteAddr: "198.51.100.7:1234"})
	}
	w.adminA = fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	w.adminC = fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.C.ID, RoleID: role.OrgAdminID})
	w.memberA = fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgViewerID, Password: strongPassword})
	w.partnerAdmin = fixture.User(t, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID,
		RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true, MFA: true})
	return w
}

func uniqueEmail(tag string) string { return tag + "-" + uuid.NewString()[:12] + "@example.com" }

var linkRE = regexp.MustCompile(`/accept-invite\?token=([A-Za-z0-9._%\-]+)`)

// tokens returns the invitation tokens SES recorded for address, oldest first.
func tokens(t *testing.T, address string) []string {
	t.Helper()
	var out []string
	for _, m := range testenv.SentEmails(t, address) {
		for _, g := range linkRE.FindAllStringSubmatch(m.Body, -1) {
			tok, err := url.QueryUnescape(g[1])
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, tok)
		}
	}
	return out
}

func errorOf(t *testing.T, res fixture.Response) string {
	t.Helper()
	s, _ := res.JSON(t)["error"].(string)
	return s
}

func (w *world) invite(t *testing.T, token string, body map[string]any) fixture.Response {
	t.Helper()
	return w.do("POST", "/api/v1/users/invite", token, body)
}

func orgBody(email, roleID string) map[string]any {
	return map[string]any{"email": email, "name": "New Person", "roleId": roleID}
}

func TestInvitePreviewAcceptLogin(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("invitee")
	res := fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(strings.ToUpper(email), role.OrgTechnicianID)), 201)
	fixture.Budget(t, res, 8) // +2: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	body := res.JSON(t)
	if body["email"] != email || body["status"] != "invited" || body["roleId"] != role.OrgTechnicianID || body["inviteEmailSent"] != true {
		t.Fatalf("invite answer %v", body)
	}
	id := body["id"].(string)
	toks := tokens(t, email)
	if len(toks) != 1 || !strings.HasPrefix(toks[0], id+".") {
		t.Fatalf("tokens %v", toks)
	}
	tok := toks[0]

	// The invited user is listed in A with status invited and cannot log in.
	got := fixture.Expect(t, w.do("GET", "/api/v1/users/"+id, w.adminA.Token, nil), 200).JSON(t)
	if got["status"] != "invited" || got["orgId"] != w.A.ID {
		t.Fatalf("member %v", got)
	}

	prev := fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{"token": tok}), 200)
	fixture.Budget(t, prev, 2)
	if pv := prev.JSON(t); pv["email"] != email || pv["name"] != "New Person" || pv["scopeName"] != w.A.Name {
		t.Fatalf("preview %v", pv)
	}

	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": "short"}), 400)
	acc := fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": strongPassword, "name": "Renamed Person"}), 200)
	fixture.Budget(t, acc, 7) // +1: the address's rate-limit row is new (a count that finds no row, then the write that makes it)
	if !strings.Contains(acc.Header.Get("Set-Cookie"), "service_refresh_token=") {
		t.Fatalf("no refresh cookie: %v", acc.Header)
	}
	ab := acc.JSON(t)
	access := ab["tokens"].(map[string]any)["accessToken"].(string)
	if u := ab["user"].(map[string]any); u["status"] != "active" || u["orgId"] != w.A.ID || u["name"] != "Renamed Person" {
		t.Fatalf("accept user %v", u)
	}
	me := fixture.Expect(t, w.do("GET", "/api/v1/users/me", access, nil), 200).JSON(t)
	if me["status"] != "active" || me["email"] != email {
		t.Fatalf("me %v", me)
	}

	// Single use: the token is spent; preview refuses it too.
	if e := errorOf(t, fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": strongPassword}), 400)); e != "Invalid or expired invitation" {
		t.Fatalf("error %q", e)
	}
	fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{"token": tok}), 400)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{"token": "garbage"}), 400)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{}), 400)

	// The password works at the login route.
	login := fixture.Expect(t, w.do("POST", "/api/v1/auth/login", "", map[string]any{"email": email, "password": strongPassword}), 200).JSON(t)
	if login["tokens"] == nil {
		t.Fatalf("login %v", login)
	}
}

func TestInviteExpires(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("late")
	fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201)
	tok := tokens(t, email)[0]
	w.env.Clock.Advance(user.InviteTTL + 1)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/invite/preview", "", map[string]any{"token": tok}), 400)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": strongPassword}), 400)
}

func TestResendRevokesPreviousToken(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("again")
	id := fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201).JSON(t)["id"].(string)
	res := fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.adminA.Token, map[string]any{"userId": id}), 200)
	fixture.Budget(t, res, 8) // auth, BatchGet, two invitation limits (the address's bucket is busy: 2), transaction, scope name
	if res.JSON(t)["inviteEmailSent"] != true {
		t.Fatalf("resend %s", res.Body)
	}
	toks := tokens(t, email)
	if len(toks) != 2 || toks[0] == toks[1] {
		t.Fatalf("tokens %v", toks)
	}
	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": toks[0], "password": strongPassword}), 400)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": toks[1], "password": strongPassword}), 200)

	// Now active: nothing to resend. Another tenant's admin cannot see the user at all.
	if e := errorOf(t, fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.adminA.Token, map[string]any{"userId": id}), 400)); e != "User is not awaiting an invitation" {
		t.Fatalf("error %q", e)
	}
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.adminC.Token, map[string]any{"userId": id}), 404)
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.adminA.Token, map[string]any{"userId": "nope"}), 400)
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.memberA.Token, map[string]any{"userId": id}), 403)
}

func TestInviteConflictsAndExistingAccounts(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("dup")
	fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201)
	if e := errorOf(t, fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 409)); e != "User already exists in this scope" {
		t.Fatalf("error %q", e)
	}
	fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(w.memberA.Email, role.OrgViewerID)), 409)

	// The same (still invited) address may join another organization: membership and a new token.
	res := fixture.Expect(t, w.invite(t, w.adminC.Token, orgBody(email, role.OrgViewerID)), 201).JSON(t)
	if res["status"] != "invited" || res["inviteEmailSent"] != true {
		t.Fatalf("second scope %v", res)
	}

	// A registered account gets an invited membership and an invitation, the
	// same answer as a new address: nothing of the account is revealed.
	reg := fixture.User(t, w.env, fixture.Member{Email: uniqueEmail("reg"), Password: strongPassword})
	res = fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(reg.Email, role.OrgViewerID)), 201).JSON(t)
	if res["id"] != reg.UserID || res["status"] != "invited" || res["name"] != "New Person" || res["inviteEmailSent"] != true {
		t.Fatalf("existing account %v", res)
	}
	org, err := tenant.Store{St: w.env.Store}.Org(t.Context(), w.A.ID)
	if err != nil || org.MemberCount != 4 { // adminA, memberA, dup, reg
		t.Fatalf("member count %d %v", org.MemberCount, err)
	}
}

func TestInviteValidation(t *testing.T) {
	w := newWorld(t)
	site := fixture.Site(t, w.env, w.A.ID, "HQ")
	bad := []map[string]any{
		{"email": "not-an-email", "name": "X", "roleId": role.OrgViewerID},
		{"email": uniqueEmail("v"), "name": "", "roleId": role.OrgViewerID},
		{"email": uniqueEmail("v"), "name": "X", "roleId": "r"},
		{"email": uniqueEmail("v"), "name": "X", "roleId": role.OrgViewerID, "orgAccess": "all"},
		{"email": uniqueEmail("v"), "name": "X", "roleId": role.OrgViewerID, "siteIds": []string{uuid.NewString()}},
		{"email": uniqueEmail("v"), "name": "X", "roleId": role.OrgViewerID, "surprise": true},
	}
	for i, b := range bad {
		if res := w.invite(t, w.adminA.Token, b); res.Status != 400 {
			t.Fatalf("case %d: %d %s", i, res.Status, res.Body)
		}
	}
	// Up to 100 sites and 100 device groups: more keys than one BatchGet takes, a 400 (not a 500).
	many := orgBody(uniqueEmail("many"), role.OrgViewerID)
	var sites, groups []string
	for i := 0; i < 100; i++ {
		sites, groups = append(sites, uuid.NewString()), append(groups, uuid.NewString())
	}
	sites[0] = site.ID
	many["siteIds"], many["deviceGroupIds"] = sites, groups
	res := fixture.Expect(t, w.invite(t, w.adminA.Token, many), 400).JSON(t)
	fe, _ := res["details"].(map[string]any)["fieldErrors"].(map[string]any)
	if fe["siteIds.0"] != nil || fe["siteIds.99"] == nil || fe["deviceGroupIds.99"] == nil {
		t.Fatalf("field errors %v", fe)
	}
	b := orgBody(uniqueEmail("site"), role.OrgViewerID)
	b["siteIds"] = []string{site.ID}
	id := fixture.Expect(t, w.invite(t, w.adminA.Token, b), 201).JSON(t)["id"].(string)
	got := fixture.Expect(t, w.do("GET", "/api/v1/users/"+id, w.adminA.Token, nil), 200).JSON(t)
	if ids, _ := got["siteIds"].([]any); len(ids) != 1 || ids[0] != site.ID {
		t.Fatalf("member %v", got)
	}
}

// customRole writes a custom role of organization orgID.
func customRole(t *testing.T, env *testenv.Env, orgID string, perms ...authz.Permission) string {
	t.Helper()
	id := uuid.NewString()
	ps := make([]string, len(perms))
	for i, p := range perms {
		ps[i] = p.String()
	}
	o := orgID
	r := role.Role{Keys: store.Keys{PK: "ROLES#" + role.OrgOwner(orgID), SK: "ROLE#" + id, GSI1PK: "ROLEREF#" + id, GSI1SK: "ROLE"},
		ID: id, Owner: role.OrgOwner(orgID), OrgID: &o, Scope: authz.ScopeOrg, Name: "Custom " + id[:6], Permissions: ps, Version: 1}
	if err := env.Store.Do(t.Context(), store.PutNew(r)); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestRoleAssignabilityAndEscalation(t *testing.T) {
	w := newWorld(t)
	// A custom role that may invite and read users, nothing else.
	inviterRole := customRole(t, w.env, w.A.ID, authz.UsersInvite, authz.UsersRead, authz.UsersWrite)
	inviter := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: inviterRole, RoleOwner: role.OrgOwner(w.A.ID)})

	res := fixture.Expect(t, w.invite(t, inviter.Token, orgBody(uniqueEmail("esc"), role.OrgAdminID)), 403)
	if errorOf(t, res) != "Cannot grant permissions you do not hold" {
		t.Fatalf("escalation %s", res.Body)
	}
	// Their own role (or a weaker custom one) is fine.
	weaker := customRole(t, w.env, w.A.ID, authz.UsersRead)
	fixture.Expect(t, w.invite(t, inviter.Token, orgBody(uniqueEmail("ok"), weaker)), 201)

	// Another scope's system role: 403. Another tenant's custom role and unknown
	// ids: 404, alike, so the other tenant's role is never revealed (see the OpenAPI document's conventions).
	foreign := customRole(t, w.env, w.C.ID, authz.DevicesRead)
	for _, rid := range []string{role.PartnerAdminID, role.SystemAdminID} {
		if e := errorOf(t, fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(uniqueEmail("scope"), rid)), 403)); e != "Role cannot be assigned in this scope" {
			t.Fatalf("role %s: %q", rid, e)
		}
	}
	for _, rid := range []string{foreign, uuid.NewString()} {
		if e := errorOf(t, fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(uniqueEmail("scope"), rid)), 404)); e != "Role not found" {
			t.Fatalf("role %s: %q", rid, e)
		}
	}

	// Reassigning follows the same rules.
	path := "/api/v1/users/" + w.memberA.UserID + "/role"
	fixture.Expect(t, w.do("POST", path, inviter.Token, map[string]any{"roleId": role.OrgAdminID}), 403)
	fixture.Expect(t, w.do("POST", path, w.adminA.Token, map[string]any{"roleId": foreign}), 404)
	fixture.Expect(t, w.do("POST", path, w.adminA.Token, map[string]any{"roleId": "x"}), 400)
	fixture.Expect(t, w.do("POST", path, w.adminC.Token, map[string]any{"roleId": role.OrgTechnicianID}), 404)
	fixture.Expect(t, w.do("POST", path, w.memberA.Token, map[string]any{"roleId": role.OrgTechnicianID}), 403)
	res = fixture.Expect(t, w.do("POST", path, w.adminA.Token, map[string]any{"roleId": role.OrgTechnicianID}), 200)
	fixture.Budget(t, res, 5)
	if res.JSON(t)["roleId"] != role.OrgTechnicianID {
		t.Fatalf("assign %s", res.Body)
	}
	// The new role is in force at once: a technician has no users:read.
	fixture.Expect(t, w.do("GET", "/api/v1/users", w.memberA.Token, nil), 403)
	holders, err := w.env.Users.RoleHolders(t.Context(), role.OrgTechnicianID)
	if err != nil || len(holders) != 1 || holders[0].UserID != w.memberA.UserID {
		t.Fatalf("holders %v %v", holders, err)
	}
}

func TestTenancyIsolation(t *testing.T) {
	w := newWorld(t)
	list := fixture.Expect(t, w.do("GET", "/api/v1/users", w.adminC.Token, nil), 200)
	fixture.Budget(t, list, 4)
	var page struct {
		Data       []map[string]any `json:"data"`
		Pagination map[string]any   `json:"pagination"`
	}
	list.Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0]["id"] != w.adminC.UserID || page.Pagination["total"] != float64(1) {
		t.Fatalf("B's list %s", list.Body)
	}
	a := fixture.Expect(t, w.do("GET", "/api/v1/users?limit=1&page=2", w.adminA.Token, nil), 200)
	a.Decode(t, &page)
	if len(page.Data) != 1 || page.Pagination["total"] != float64(2) {
		t.Fatalf("A's page 2 %s", a.Body)
	}
	one := fixture.Expect(t, w.do("GET", "/api/v1/users/"+w.memberA.UserID, w.adminA.Token, nil), 200)
	fixture.Budget(t, one, 3)

	id := "/api/v1/users/" + w.memberA.UserID
	fixture.Expect(t, w.do("GET", id, w.adminC.Token, nil), 404)
	fixture.Expect(t, w.do("PATCH", id, w.adminC.Token, map[string]any{"name": "x"}), 404)
	fixture.Expect(t, w.do("DELETE", id, w.adminC.Token, nil), 404)
	fixture.Expect(t, w.do("GET", "/api/v1/users?orgId="+w.A.ID, w.adminC.Token, nil), 404)
	fixture.Expect(t, w.do("GET", "/api/v1/users/not-a-uuid", w.adminA.Token, nil), 400)
	fixture.Expect(t, w.do("GET", "/api/v1/users/"+uuid.NewString(), w.adminA.Token, nil), 404)
	fixture.Expect(t, w.do("GET", "/api/v1/users", w.memberA.Token, nil), 403)
	fixture.Expect(t, w.do("GET", "/api/v1/users", "", nil), 401)
}

func TestPartnerCallers(t *testing.T) {
	w := newWorld(t)
	// orgId addresses an organization of the partner.
	res := fixture.Expect(t, w.do("GET", "/api/v1/users?orgId="+w.A.ID, w.partnerAdmin.Token, nil), 200)
	fixture.Budget(t, res, 5)
	if !strings.Contains(string(res.Body), w.adminA.UserID) {
		t.Fatalf("partner's view of A %s", res.Body)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users?orgId="+w.C.ID, w.partnerAdmin.Token, nil), 404)
	fixture.Expect(t, w.do("GET", "/api/v1/users?orgId=bad", w.partnerAdmin.Token, nil), 400)
	b := orgBody(uniqueEmail("porg"), role.OrgTechnicianID)
	b["orgId"] = w.A.ID
	fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, b), 201)

	// Partner body: orgAccess selected needs orgIds of the partner.
	pb := map[string]any{"email": uniqueEmail("tech"), "name": "Tech", "roleId": role.PartnerTechnicianID, "orgAccess": "selected"}
	fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, pb), 400)
	pb["orgIds"] = []string{w.C.ID}
	fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, pb), 400)
	pb["orgIds"] = []string{w.A.ID}
	id := fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, pb), 201).JSON(t)["id"].(string)
	got := fixture.Expect(t, w.do("GET", "/api/v1/users/"+id, w.partnerAdmin.Token, nil), 200).JSON(t)
	if got["orgAccess"] != "selected" || got["scope"] != "partner" {
		t.Fatalf("partner member %v", got)
	}
	// Default orgAccess is none; an organization role is not assignable at partner scope.
	none := fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, map[string]any{"email": uniqueEmail("nn"), "name": "N", "roleId": role.PartnerViewerID}), 201).JSON(t)
	if m, _ := w.env.Users.Memberships(t.Context(), none["id"].(string)); len(m) != 1 || m[0].OrgAccess != authz.OrgAccessNone {
		t.Fatalf("memberships %v", m)
	}
	fixture.Expect(t, w.invite(t, w.partnerAdmin.Token, map[string]any{"email": uniqueEmail("x"), "name": "N", "roleId": role.OrgViewerID}), 403)

	// A partner user with selected access administers no users.
	sel := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID,
		OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{w.A.ID}, TOTP: true})
	if e := errorOf(t, fixture.Expect(t, w.do("GET", "/api/v1/users?orgId="+w.A.ID, sel.Token, nil), 403)); e != "Full partner organization access required" {
		t.Fatalf("error %q", e)
	}
	fixture.Expect(t, w.invite(t, sel.Token, b), 403)

	// No scope at all: the context error of shared/authz, before the permission.
	lone := fixture.User(t, w.env, fixture.Member{})
	if e := errorOf(t, fixture.Expect(t, w.do("GET", "/api/v1/users/roles", lone.Token, nil), 403)); e != "Partner or organization context required" {
		t.Fatalf("error %q", e)
	}
	sys := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeSystem, RoleID: role.SystemAdminID})
	fixture.Expect(t, w.do("GET", "/api/v1/users?orgId="+w.C.ID, sys.Token, nil), 200)
}

func TestContextRequired(t *testing.T) {
	w := newWorld(t)
	// A partner-scope session whose membership names no partner has no context.
	c := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, RoleID: role.OrgAdminID})
	if e := errorOf(t, fixture.Expect(t, w.do("GET", "/api/v1/users", c.Token, nil), 403)); e != "Partner or organization context required" {
		t.Fatalf("error %q", e)
	}
}

func TestUpdateAndDisable(t *testing.T) {
	w := newWorld(t)
	path := "/api/v1/users/" + w.memberA.UserID
	fixture.Expect(t, w.do("PATCH", path, w.adminA.Token, map[string]any{}), 400)
	fixture.Expect(t, w.do("PATCH", path, w.adminA.Token, map[string]any{"status": "invited"}), 400)
	fixture.Expect(t, w.do("PATCH", path, w.memberA.Token, map[string]any{"name": "x"}), 403)
	res := fixture.Expect(t, w.do("PATCH", path, w.adminA.Token, map[string]any{"name": "  Dana  "}), 200)
	fixture.Budget(t, res, 4)
	if res.JSON(t)["name"] != "Dana" {
		t.Fatalf("update %s", res.Body)
	}
	if e := errorOf(t, fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.adminA.UserID, w.adminA.Token, map[string]any{"status": "disabled"}), 400)); e != "You cannot disable your own account" {
		t.Fatalf("error %q", e)
	}

	fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 200)
	w.env.Clock.Advance(time.Second) // the fake clock stands still; sessions are older than the revocation
	fixture.Expect(t, w.do("PATCH", path, w.adminA.Token, map[string]any{"status": "disabled"}), 200)
	// Refused at once, not when the access token expires; login refused too.
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 401)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/login", "", map[string]any{"email": w.memberA.Email, "password": strongPassword}), 401)
	u, err := w.env.Users.Get(t.Context(), w.memberA.UserID)
	if err != nil || u.Status != user.StatusDisabled || u.TokensValidAfter == "" {
		t.Fatalf("user %+v %v", u, err)
	}
	// Re-enabled: the old session stays revoked, a new login works.
	fixture.Expect(t, w.do("PATCH", path, w.adminA.Token, map[string]any{"status": "active"}), 200)
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 401)
	fixture.Expect(t, w.do("POST", "/api/v1/auth/login", "", map[string]any{"email": w.memberA.Email, "password": strongPassword}), 200)

	// An invited user becomes active only by accepting.
	id := fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(uniqueEmail("inv"), role.OrgViewerID)), 201).JSON(t)["id"].(string)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+id, w.adminA.Token, map[string]any{"status": "active"}), 400)
}

func TestRemoveMembership(t *testing.T) {
	w := newWorld(t)
	path := "/api/v1/users/" + w.memberA.UserID
	fixture.Expect(t, w.do("DELETE", path, w.memberA.Token, nil), 403)
	fixture.Expect(t, w.do("DELETE", "/api/v1/users/"+w.adminA.UserID, w.adminA.Token, nil), 400)
	res := fixture.Expect(t, w.do("DELETE", path, w.adminA.Token, nil), 200)
	fixture.Budget(t, res, 5)
	fixture.Expect(t, w.do("GET", path, w.adminA.Token, nil), 404)
	fixture.Expect(t, w.do("DELETE", path, w.adminA.Token, nil), 404)
	// The account survives; the organization counts one member fewer; the removed
	// member's session lost its membership at once.
	if _, err := w.env.Users.Get(t.Context(), w.memberA.UserID); err != nil {
		t.Fatal(err)
	}
	org, _ := tenant.Store{St: w.env.Store}.Org(t.Context(), w.A.ID)
	if org.MemberCount != 1 {
		t.Fatalf("member count %d", org.MemberCount)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 401)
	// They can be invited again.
	fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(w.memberA.Email, role.OrgViewerID)), 201)

	// Removing an invited user revokes their invitation for this scope.
	email := uniqueEmail("gone")
	id := fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201).JSON(t)["id"].(string)
	fixture.Expect(t, w.do("DELETE", "/api/v1/users/"+id, w.adminA.Token, nil), 200)
	tok := tokens(t, email)[0]
	fixture.Expect(t, w.do("POST", "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": strongPassword}), 400)
}

func TestMeAndRoles(t *testing.T) {
	w := newWorld(t)
	res := fixture.Expect(t, w.do("GET", "/api/v1/users/me", w.memberA.Token, nil), 200)
	fixture.Budget(t, res, 3)
	me := res.JSON(t)
	if me["id"] != w.memberA.UserID || me["passwordHash"] != nil || me["mfaSecret"] != nil {
		t.Fatalf("me %v", me)
	}
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.memberA.Token, map[string]any{}), 400)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.memberA.Token, map[string]any{"avatarUrl": "javascript:alert(1)"}), 400)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.memberA.Token, map[string]any{"name": ""}), 400)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.memberA.Token, map[string]any{"email": "x@example.com"}), 400)
	res = fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.memberA.Token, map[string]any{"name": "Me", "avatarUrl": "https://cdn.example.com/a.png"}), 200)
	fixture.Budget(t, res, 4)
	if b := res.JSON(t); b["name"] != "Me" || b["avatarUrl"] != "https://cdn.example.com/a.png" {
		t.Fatalf("patch me %v", b)
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", "", nil), 401)

	// Force MFA: a partner admin without TOTP may use /users/me but nothing else.
	pa := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
	fixture.Expect(t, w.do("GET", "/api/v1/users/me", pa.Token, nil), 200)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", pa.Token, map[string]any{"name": "PA"}), 200)
	fixture.Expect(t, w.do("GET", "/api/v1/users", pa.Token, nil), 428)

	custom := customRole(t, w.env, w.A.ID, authz.DevicesRead)
	roles := fixture.Expect(t, w.do("GET", "/api/v1/users/roles", w.adminA.Token, nil), 200)
	fixture.Budget(t, roles, 3)
	body := string(roles.Body)
	var page struct {
		Data       []struct{ ID string } `json:"data"`
		Pagination struct{ Total int }   `json:"pagination"`
	}
	roles.Decode(t, &page)
	if page.Pagination.Total != len(page.Data) || len(page.Data) < 4 {
		t.Fatalf("roles envelope: %s", body)
	}
	for _, want := range []string{role.OrgAdminID, role.OrgTechnicianID, role.OrgViewerID, custom} {
		if !strings.Contains(body, want) {
			t.Fatalf("roles lack %s: %s", want, body)
		}
	}
	if strings.Contains(body, role.PartnerAdminID) {
		t.Fatalf("partner role offered to an organization: %s", body)
	}
	if strings.Contains(string(fixture.Expect(t, w.do("GET", "/api/v1/users/roles", w.adminC.Token, nil), 200).Body), custom) {
		t.Fatal("org B sees org A's custom role")
	}
	fixture.Expect(t, w.do("GET", "/api/v1/users/roles", w.memberA.Token, nil), 403)
}

func TestAcceptInviteRateLimit(t *testing.T) {
	w := newWorld(t)
	h := fixture.API(t, w.env, "auth")
	body := map[string]any{"token": uuid.NewString() + "." + strings.Repeat("A", 43), "password": strongPassword}
	for i := 0; i < 10; i++ {
		fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/accept-invite", Body: body, RemoteAddr: "203.0.113.9:1"}), 400)
	}
	res := fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/accept-invite", Body: body, RemoteAddr: "203.0.113.9:1"}), 429)
	if res.JSON(t)["retryAfter"] == nil {
		t.Fatalf("429 %s", res.Body)
	}
	// Another address is unaffected.
	fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/accept-invite", Body: body, RemoteAddr: "203.0.113.10:1"}), 400)
}

func TestAuditTrail(t *testing.T) {
	w := newWorld(t)
	email := uniqueEmail("audit")
	id := fixture.Expect(t, w.invite(t, w.adminA.Token, orgBody(email, role.OrgViewerID)), 201).JSON(t)["id"].(string)
	fixture.Expect(t, w.do("POST", "/api/v1/users/resend-invite", w.adminA.Token, map[string]any{"userId": id}), 200)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/"+w.memberA.UserID, w.adminA.Token, map[string]any{"name": "N"}), 200)
	fixture.Expect(t, w.do("POST", "/api/v1/users/"+w.memberA.UserID+"/role", w.adminA.Token, map[string]any{"roleId": role.OrgTechnicianID}), 200)
	fixture.Expect(t, w.do("PATCH", "/api/v1/users/me", w.adminA.Token, map[string]any{"name": "Admin"}), 200)
	fixture.Expect(t, w.do("DELETE", "/api/v1/users/"+id, w.adminA.Token, nil), 200)
	recs, err := audit.List(t.Context(), w.env.Store, audit.Tenant(w.A.ID, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range recs {
		if r.Actor.ID == w.adminA.UserID {
			seen[r.Action] = true
		}
	}
	for _, a := range []string{"user.invite", "user.invite.resend", "user.update", "user.role.assign", "user.profile.update", "user.remove"} {
		if !seen[a] {
			t.Fatalf("no %s record by the admin: %v", a, seen)
		}
	}
}

// PATCH /users/:id and /users/me refuse null (no field of theirs can be
// cleared by it; "" clears the avatar) and wrong types by the field's name.
func TestPatchRefusesNullByName(t *testing.T) {
	w := newWorld(t)
	path := "/api/v1/users/" + w.memberA.UserID
	for _, c := range []struct {
		path  string
		body  map[string]any
		field string
	}{
		{path, map[string]any{"name": nil}, "name"},
		{path, map[string]any{"status": nil}, "status"},
		{path, map[string]any{"name": 3}, "name"},
		{"/api/v1/users/me", map[string]any{"avatarUrl": nil}, "avatarUrl"},
		{"/api/v1/users/me", map[string]any{"name": nil}, "name"},
		{"/api/v1/users/me", map[string]any{"name": []string{"x"}}, "name"},
	} {
		fixture.Invalid(t, w.do("PATCH", c.path, w.adminA.Token, c.body), c.field)
	}
}

// Issue 30 (low): the invitation body the OpenAPI document requires is what
// the code requires (the spec lists email, name and roleId; only siteIds and
// deviceGroupIds are optional): a body of just the documented required fields
// is accepted, and each of them left out is refused by name.
func TestInviteRequiredFieldsAreTheDocumentedOnes(t *testing.T) {
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	required := doc.Components.Schemas["UserInviteRequest"].Value.Required
	w := newWorld(t)
	full := orgBody(uniqueEmail("req"), role.OrgViewerID)
	body := map[string]any{}
	for _, k := range required {
		body[k] = full[k]
	}
	fixture.Expect(t, w.invite(t, w.adminA.Token, body), 201)
	for _, k := range required {
		b := orgBody(uniqueEmail("req"), role.OrgViewerID)
		delete(b, k)
		res := fixture.Expect(t, w.invite(t, w.adminA.Token, b), 400).JSON(t)
		fe, _ := res["details"].(map[string]any)["fieldErrors"].(map[string]any)
		if fe[k] == nil {
			t.Errorf("without %s: %v", k, res)
		}
	}
}
