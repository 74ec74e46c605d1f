package role_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
)

// The roles group over HTTP, served by fixture.API as its function builds it
// (rolesgroup.Roles), in Strict mode against the emulator. Budgets are the
// numbers of handler.go's table.

const (
	rolesURL   = "/api/v1/roles"
	catalogURL = "/api/v1/permissions/catalog"
)

// Callers of the HTTP world.
const (
	hAAdmin      = "org A admin"
	hAAdminBare  = "org A admin, membership without partner"
	hAViewer     = "org A viewer"
	hBAdmin      = "org B admin"
	hP1Admin     = "partner 1 admin"
	hP1Selected  = "partner 1 admin, selected A"
	hP2Admin     = "partner 2 admin"
	hSystemAdmin = "system admin"
)

// httpWorld is the service world (partner X with A and B, Y with C) served over HTTP
// with one signed-in caller per case.
type httpWorld struct {
	*world
	api     http.Handler
	tokens  map[string]string
	userIDs map[string]string
}

func newHTTPWorld(t *testing.T) *httpWorld {
	t.Helper()
	w := &httpWorld{world: newWorld(t), tokens: map[string]string{}, userIDs: map[string]string{}}
	w.api = fixture.API(t, w.env, "roles")
	for name, m := range map[string]fixture.Member{
		hAAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID},
		hAAdminBare:  {Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID},
		hAViewer:     {Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgViewerID},
		hBAdmin:      {Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.B.ID, RoleID: role.OrgAdminID},
		hP1Admin:     {Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true},
		hP1Selected:  {Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{w.A.ID}, TOTP: true},
		hP2Admin:     {Scope: authz.ScopePartner, PartnerID: w.PY.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true},
		hSystemAdmin: {Scope: authz.ScopeSystem, RoleID: role.SystemAdminID},
	} {
		c := fixture.User(t, w.env, m)
		w.tokens[name], w.userIDs[name] = c.Token, c.UserID
	}
	return w
}

// do serves one request as caller ("" for none) and checks its call budget.
func (w *httpWorld) do(t *testing.T, caller, method, path string, body any, budget int) fixture.Response {
	t.Helper()
	tok := ""
	if caller != "" {
		if tok = w.tokens[caller]; tok == "" {
			t.Fatalf("no caller %q", caller)
		}
	}
	res := fixture.Do(t, w.api, fixture.Request{Method: method, Path: path, Token: tok, Body: body})
	if budget > 0 {
		fixture.Budget(t, res, budget)
	}
	return res
}

// create posts a role as caller and returns it.
func (w *httpWorld) create(t *testing.T, caller string, body map[string]any) roleJSON {
	t.Helper()
	var r roleJSON
	fixture.Expect(t, w.do(t, caller, http.MethodPost, rolesURL, body, 0), http.StatusCreated).Decode(t, &r)
	return r
}

// roleJSON is a role as the API answers it.
type roleJSON struct {
	ID           string             `json:"id"`
	PartnerID    *string            `json:"partnerId"`
	OrgID        *string            `json:"orgId"`
	ParentRoleID *string            `json:"parentRoleId"`
	Scope        string             `json:"scope"`
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	IsSystem     bool               `json:"isSystem"`
	ForceMFA     bool               `json:"forceMfa"`
	Permissions  []authz.Permission `json:"permissions"`
	UserCount    int                `json:"userCount"`
}

type roleList struct {
	Data       []roleJSON `json:"data"`
	Pagination struct {
		Page, Limit, Total int
	} `json:"pagination"`
}

// wantError checks status and the error text (and code when given).
func wantError(t *testing.T, res fixture.Response, status int, message string) map[string]any {
	t.Helper()
	fixture.Expect(t, res, status)
	body := res.JSON(t)
	if message != "" && body["error"] != message {
		t.Fatalf("error %q, want %q: %s", body["error"], message, res.Body)
	}
	return body
}

// wantInvalid checks a 400 validation failure naming field.
func wantInvalid(t *testing.T, res fixture.Response, field string) {
	t.Helper()
	body := wantError(t, res, http.StatusBadRequest, "Validation failed")
	details, _ := body["details"].(map[string]any)
	fe, _ := details["fieldErrors"].(map[string]any)
	if _, ok := fe[field]; !ok {
		t.Fatalf("no field error for %q: %s", field, res.Body)
	}
}

func listIDs(t *testing.T, res fixture.Response) []string {
	t.Helper()
	var l roleList
	fixture.Expect(t, res, http.StatusOK).Decode(t, &l)
	var ids []string
	for _, r := range l.Data {
		ids = append(ids, r.ID)
	}
	return ids
}

func perm(resource, action string) map[string]string {
	return map[string]string{"resource": resource, "action": action}
}

func TestHTTPRoleLifecycle(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)

	// POST /roles
	res := fixture.Expect(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{
		"name": "Helpdesk", "description": "First line", "parentRoleId": role.OrgViewerID,
		"permissions": []any{perm("devices", "execute"), perm("alerts", "acknowledge")},
	}, 4), http.StatusCreated)
	var helpdesk roleJSON
	res.Decode(t, &helpdesk)
	if helpdesk.ID == "" || helpdesk.Name != "Helpdesk" || helpdesk.Description != "First line" || helpdesk.IsSystem ||
		helpdesk.Scope != "organization" || helpdesk.OrgID == nil || *helpdesk.OrgID != w.A.ID ||
		helpdesk.ParentRoleID == nil || *helpdesk.ParentRoleID != role.OrgViewerID || len(helpdesk.Permissions) != 2 {
		t.Fatalf("created role: %s", res.Body)
	}
	byID := rolesURL + "/" + helpdesk.ID

	// GET /roles/:id, before and after a user holds the role.
	var got roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID, nil, 4), http.StatusOK).Decode(t, &got)
	if got.ID != helpdesk.ID || got.UserCount != 0 || len(got.Permissions) != 2 {
		t.Fatalf("get: %+v", got)
	}
	holder := fixture.User(t, w.env, fixture.Member{Email: "holder@example.com", Name: "Holder", Scope: authz.ScopeOrg,
		OrgID: w.A.ID, RoleID: helpdesk.ID, RoleOwner: role.OrgOwner(w.A.ID)})
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID, nil, 4), http.StatusOK).Decode(t, &got)
	if got.UserCount != 1 {
		t.Fatalf("userCount %d, want 1", got.UserCount)
	}

	// GET /roles: the organization's system roles in seed order, then custom roles, with counts.
	var list roleList
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, rolesURL, nil, 5), http.StatusOK).Decode(t, &list)
	var names []string
	for _, r := range list.Data {
		names = append(names, r.Name)
		if r.Name == "Org Admin" && r.UserCount != 2 { // hAAdmin and hAAdminBare
			t.Errorf("Org Admin userCount %d, want 2", r.UserCount)
		}
		if r.ID == helpdesk.ID && r.UserCount != 1 {
			t.Errorf("Helpdesk userCount %d, want 1", r.UserCount)
		}
	}
	if strings.Join(names, ",") != "Org Admin,Org Technician,Org Viewer,Helpdesk" || list.Pagination.Total != 4 ||
		list.Pagination.Page != 1 || list.Pagination.Limit != 50 {
		t.Fatalf("list: %s", names)
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"?page=2&limit=3", nil, 5), http.StatusOK).Decode(t, &list)
	if len(list.Data) != 1 || list.Data[0].ID != helpdesk.ID || list.Pagination.Total != 4 {
		t.Fatalf("page 2 of 3: %+v", list)
	}
	wantInvalid(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"?limit=101", nil, 0), "limit")

	// GET /roles/:id/effective-permissions: direct and inherited, with sources.
	var eff struct {
		Data []struct {
			Resource, Action, SourceRoleID, SourceRoleName string
			Inherited                                      bool
		} `json:"data"`
		Pagination struct{ Page, Limit, Total int } `json:"pagination"`
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID+"/effective-permissions", nil, 5), http.StatusOK).Decode(t, &eff)
	sources := map[string]string{}
	for _, g := range eff.Data {
		sources[g.Resource+":"+g.Action] = g.SourceRoleName
		if g.Inherited != (g.SourceRoleID == role.OrgViewerID) {
			t.Errorf("%s:%s inherited=%v from %s", g.Resource, g.Action, g.Inherited, g.SourceRoleName)
		}
	}
	if sources["devices:execute"] != "Helpdesk" || sources["devices:read"] != "Org Viewer" || len(sources) != 6 ||
		eff.Pagination != (struct{ Page, Limit, Total int }{1, 50, 6}) {
		t.Fatalf("effective: %v %+v", sources, eff.Pagination)
	}
	// The {data, pagination} envelope pages like every list.
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID+"/effective-permissions?page=2&limit=4", nil, 5), http.StatusOK).Decode(t, &eff)
	if len(eff.Data) != 2 || eff.Pagination.Total != 6 {
		t.Fatalf("effective page 2 of 4: %+v", eff)
	}

	// GET /roles/:id/users
	var holders struct {
		Data []struct {
			ID, Email, Name, Status, Scope, OrgID string
		} `json:"data"`
		Pagination struct{ Total int } `json:"pagination"`
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID+"/users", nil, 5), http.StatusOK).Decode(t, &holders)
	if len(holders.Data) != 1 || holders.Data[0].ID != holder.UserID || holders.Data[0].Email != "holder@example.com" ||
		holders.Data[0].Name != "Holder" || holders.Data[0].Status != "active" || holders.Pagination.Total != 1 {
		t.Fatalf("holders: %+v", holders)
	}

	// PATCH /roles/:id: rename, drop the parent (null), replace permissions.
	var upd roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{
		"name": "Helpdesk L1", "parentRoleId": nil, "permissions": []any{perm("devices", "read")},
	}, 6), http.StatusOK).Decode(t, &upd)
	// The answer counts the role's holders as GET does (one user holds it).
	if upd.Name != "Helpdesk L1" || upd.ParentRoleID != nil || len(upd.Permissions) != 1 || upd.Permissions[0] != authz.DevicesRead ||
		upd.UserCount != 1 {
		t.Fatalf("updated: %+v", upd)
	}
	// A PATCH without parentRoleId leaves the parent alone.
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"parentRoleId": role.OrgViewerID}, 6), http.StatusOK)
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"description": "L1"}, 5), http.StatusOK).Decode(t, &upd)
	if upd.ParentRoleID == nil || *upd.ParentRoleID != role.OrgViewerID || upd.Description != "L1" {
		t.Fatalf("description-only PATCH changed the parent: %+v", upd)
	}

	// POST /roles/:id/clone copies effective permissions into a new custom role.
	var clone roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPost, byID+"/clone", map[string]any{"name": "Helpdesk copy"}, 6),
		http.StatusCreated).Decode(t, &clone)
	if clone.ID == helpdesk.ID || clone.Name != "Helpdesk copy" || clone.IsSystem || clone.ParentRoleID != nil || len(clone.Permissions) != 4 {
		t.Fatalf("clone: %+v", clone)
	}
	wantError(t, w.do(t, hAAdmin, http.MethodPost, byID+"/clone", map[string]any{"name": "helpdesk COPY"}, 0),
		http.StatusConflict, "A role with this name already exists")

	// DELETE /roles/:id: blocked while held, with the counts.
	body := wantError(t, w.do(t, hAAdmin, http.MethodDelete, byID, nil, 4), http.StatusBadRequest, "Cannot delete role with assigned users")
	if d, _ := body["details"].(map[string]any); d["userCount"] != float64(1) || d["childRoleCount"] != float64(0) {
		t.Fatalf("details: %s", body)
	}
	var ok map[string]any
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodDelete, rolesURL+"/"+clone.ID, nil, 5), http.StatusOK).Decode(t, &ok)
	if ok["success"] != true {
		t.Fatalf("delete answer %v", ok)
	}
	wantError(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/"+clone.ID, nil, 0), http.StatusNotFound, "Role not found")
}

func TestHTTPChildBlocksDeleteAndCycles(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	parent := w.create(t, hAAdmin, map[string]any{"name": "Parent", "permissions": []any{perm("devices", "read")}})
	child := w.create(t, hAAdmin, map[string]any{"name": "Child", "parentRoleId": parent.ID})
	grandchild := w.create(t, hAAdmin, map[string]any{"name": "Grandchild", "parentRoleId": child.ID})

	body := wantError(t, w.do(t, hAAdmin, http.MethodDelete, rolesURL+"/"+parent.ID, nil, 0), http.StatusBadRequest,
		"Cannot delete role inherited by other roles")
	if d, _ := body["details"].(map[string]any); d["userCount"] != float64(0) || d["childRoleCount"] != float64(1) {
		t.Fatalf("details: %s", body)
	}
	for _, p := range []string{child.ID, grandchild.ID, parent.ID} {
		wantError(t, w.do(t, hAAdmin, http.MethodPatch, rolesURL+"/"+parent.ID, map[string]any{"parentRoleId": p}, 0),
			http.StatusBadRequest, "Circular role inheritance")
	}
	// A parent may only be a role of the same owner or a system role of its scope:
	// one the caller can see is 400, one they cannot 404.
	wantInvalid(t, w.do(t, hP1Admin, http.MethodPost, rolesURL, map[string]any{"name": "P", "parentRoleId": role.OrgViewerID}, 0), "parentRoleId")
	wantError(t, w.do(t, hAAdmin, http.MethodPatch, rolesURL+"/"+parent.ID, map[string]any{"parentRoleId": role.PartnerViewerID}, 0),
		http.StatusNotFound, "Role not found")
}

func TestHTTPSystemRolesAreImmutable(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	sys := rolesURL + "/" + role.OrgViewerID
	wantError(t, w.do(t, hAAdmin, http.MethodPatch, sys, map[string]any{"name": "Mine"}, 3), http.StatusForbidden, "Cannot modify system roles")
	wantError(t, w.do(t, hAAdmin, http.MethodDelete, sys, nil, 3), http.StatusForbidden, "Cannot delete system roles")

	var clone roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPost, sys+"/clone", map[string]any{"name": "Viewer copy"}, 5),
		http.StatusCreated).Decode(t, &clone)
	if clone.IsSystem || clone.Scope != "organization" || len(clone.Permissions) != 4 {
		t.Fatalf("clone of a system role: %+v", clone)
	}
	// An organization caller whose membership lacks the partner pays one read of the organization.
	fixture.Expect(t, w.do(t, hAAdminBare, http.MethodPost, sys+"/clone", map[string]any{"name": "Viewer copy 2"}, 6), http.StatusCreated)
	fixture.Expect(t, w.do(t, hAAdminBare, http.MethodPost, rolesURL, map[string]any{"name": "Bare"}, 4), http.StatusCreated)
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "With partner"}, 3), http.StatusCreated)

	var got roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, sys, nil, 4), http.StatusOK).Decode(t, &got)
	if !got.IsSystem || got.Name != "Org Viewer" || len(got.Permissions) != 4 {
		t.Fatalf("system role: %+v", got)
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, sys+"/effective-permissions", nil, 4), http.StatusOK)
}

func TestHTTPValidation(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	r := w.create(t, hAAdmin, map[string]any{"name": "Valid"})
	byID := rolesURL + "/" + r.ID

	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": strings.Repeat("n", 101)}, 0), "name")
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": strings.Repeat("n", 100)}, 0), http.StatusCreated)
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{}, 0), "name")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "X", "colour": "red"}, 0), "colour")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "X",
		"permissions": []any{map[string]any{"resource": "devices", "action": "read", "scope": "all"}}}, 0), "permissions.0.scope")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "X",
		"permissions": []any{perm("devices", "fly")}}, 0), "permissions.0")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "X", "parentRoleId": "nope"}, 0), "parentRoleId")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, "[]", 0), "body")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"parentRoleId": 7}, 0), "parentRoleId")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"name": strings.Repeat("n", 101)}, 0), "name")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"isSystem": true}, 0), "isSystem")
	wantError(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{}, 0), http.StatusBadRequest, "No updates provided")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, byID+"/clone", map[string]any{"name": "Y", "permissions": []any{}}, 0), "permissions")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, byID+"/clone", map[string]any{}, 0), "name")
	wantError(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "valid"}, 0), http.StatusConflict, "A role with this name already exists")
	// *:* only from a holder of *:*; other permissions only from their holder.
	wantError(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "All", "permissions": []any{perm("*", "*")}}, 0),
		http.StatusForbidden, "Only a holder of *:* can assign the *:* permission")
	wantError(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "Billing", "permissions": []any{perm("billing", "manage")}}, 0),
		http.StatusForbidden, "Cannot grant permissions you do not hold")

	// A malformed id is 400 on every :id route; a well-formed unknown one 404.
	for _, c := range []struct{ method, suffix string }{
		{http.MethodGet, ""}, {http.MethodPatch, ""}, {http.MethodDelete, ""}, {http.MethodPost, "/clone"},
		{http.MethodGet, "/users"}, {http.MethodGet, "/effective-permissions"},
	} {
		var body any
		if c.method == http.MethodPatch || c.method == http.MethodPost {
			body = map[string]any{"name": "Z"}
		}
		wantInvalid(t, w.do(t, hAAdmin, c.method, rolesURL+"/not-a-uuid"+c.suffix, body, 0), "id")
		wantError(t, w.do(t, hAAdmin, c.method, rolesURL+"/7a1e0a4e-1c3b-4f59-9d61-1f8a4c1f0b2e"+c.suffix, body, 0),
			http.StatusNotFound, "Role not found")
	}
}

func TestHTTPRouting(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)

	// The literal path wins over /roles/{id}/... and is not read as a role id.
	var avail struct{ Resources, Actions []string }
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/permissions/available", nil, 2), http.StatusOK).Decode(t, &avail)
	if !slices.Equal(avail.Resources, authz.CatalogResources) || len(avail.Resources) != 12 ||
		strings.Join(avail.Actions, ",") != "read,write,delete,execute,acknowledge,invite,accept_risk,access,export,manage,admin" {
		t.Fatalf("available: %+v", avail)
	}
	// Every listed action names a grantable permission, and every action the
	// catalogue uses is listed.
	used := map[string]bool{}
	for _, c := range authz.Catalog {
		if c.Action != "*" {
			used[c.Action] = true
		}
	}
	for _, a := range avail.Actions {
		if !used[a] {
			t.Errorf("available action %q is no permission of the catalogue", a)
		}
		delete(used, a)
	}
	if len(used) != 0 {
		t.Errorf("catalogue actions not listed: %v", used)
	}
	// /roles/permissions is /roles/{id} with a malformed id.
	wantInvalid(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/permissions", nil, 0), "id")
	wantError(t, w.do(t, hAAdmin, http.MethodPost, rolesURL+"/permissions/available", nil, 0), http.StatusMethodNotAllowed, "")
	wantError(t, w.do(t, hAAdmin, http.MethodPut, rolesURL, nil, 0), http.StatusMethodNotAllowed, "")
	wantError(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/"+role.OrgViewerID+"/nothing", nil, 0), http.StatusNotFound, "Not Found")
	wantError(t, w.do(t, hAAdmin, http.MethodGet, "/api/v1/permissions", nil, 0), http.StatusNotFound, "Not Found")

	var cat struct {
		Permissions []struct{ Resource, Action, Description string } `json:"permissions"`
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, catalogURL, nil, 2), http.StatusOK).Decode(t, &cat)
	if len(cat.Permissions) != len(authz.Catalog) {
		t.Fatalf("catalog has %d entries, want %d", len(cat.Permissions), len(authz.Catalog))
	}
	seen := map[string]bool{}
	for _, p := range cat.Permissions {
		if p.Resource == "" || p.Action == "" || p.Description == "" {
			t.Fatalf("catalog entry %+v", p)
		}
		seen[p.Resource+":"+p.Action] = true
	}
	for _, want := range []string{"users:read", "*:*", "settings:write", "billing:manage", "sso:admin", "vulnerabilities:accept_risk"} {
		if !seen[want] {
			t.Errorf("catalog lacks %s", want)
		}
	}

	// Every route needs a session and users:read (or write, delete).
	r := w.create(t, hAAdmin, map[string]any{"name": "Guarded"})
	for _, c := range []struct{ method, path string }{
		{http.MethodGet, rolesURL}, {http.MethodPost, rolesURL}, {http.MethodGet, rolesURL + "/permissions/available"},
		{http.MethodGet, catalogURL}, {http.MethodGet, rolesURL + "/" + r.ID}, {http.MethodPatch, rolesURL + "/" + r.ID},
		{http.MethodDelete, rolesURL + "/" + r.ID}, {http.MethodPost, rolesURL + "/" + r.ID + "/clone"},
		{http.MethodGet, rolesURL + "/" + r.ID + "/users"}, {http.MethodGet, rolesURL + "/" + r.ID + "/effective-permissions"},
	} {
		var body any
		if c.method == http.MethodPost || c.method == http.MethodPatch {
			body = map[string]any{"name": "Nope"}
		}
		wantError(t, w.do(t, "", c.method, c.path, body, 0), http.StatusUnauthorized, "")
		wantError(t, w.do(t, hAViewer, c.method, c.path, body, 0), http.StatusForbidden, "Insufficient permissions")
		wantError(t, w.do(t, hP1Selected, c.method, c.path, body, 0), http.StatusForbidden, "Full partner organization access required")
	}
}

func TestHTTPTenancy(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	aRole := w.create(t, hAAdmin, map[string]any{"name": "A only", "permissions": []any{perm("devices", "read")}})
	byID := rolesURL + "/" + aRole.ID

	// Organization B's admin: 404 on every route naming A's role, absent from B's list.
	for _, c := range []struct {
		method, suffix string
		body           any
		budget         int
	}{
		{http.MethodGet, "", nil, 3}, {http.MethodPatch, "", map[string]any{"name": "Mine"}, 3}, {http.MethodDelete, "", nil, 3},
		{http.MethodPost, "/clone", map[string]any{"name": "Mine"}, 3}, {http.MethodGet, "/users", nil, 3},
		{http.MethodGet, "/effective-permissions", nil, 3},
	} {
		wantError(t, w.do(t, hBAdmin, c.method, byID+c.suffix, c.body, c.budget), http.StatusNotFound, "Role not found")
	}
	if ids := listIDs(t, w.do(t, hBAdmin, http.MethodGet, rolesURL, nil, 5)); slices.Contains(ids, aRole.ID) {
		t.Fatal("organization B lists A's role")
	}
	wantError(t, w.do(t, hBAdmin, http.MethodGet, rolesURL+"?orgId="+w.A.ID, nil, 0), http.StatusNotFound, "Organization not found")
	// B cannot make A's role its parent either.
	wantError(t, w.do(t, hBAdmin, http.MethodPost, rolesURL, map[string]any{"name": "Sub", "parentRoleId": aRole.ID}, 0),
		http.StatusNotFound, "Role not found")

	// Partner 2 sees nothing of partner 1's organizations.
	wantError(t, w.do(t, hP2Admin, http.MethodGet, byID, nil, 0), http.StatusNotFound, "Role not found")
	wantError(t, w.do(t, hP2Admin, http.MethodGet, rolesURL+"?orgId="+w.A.ID, nil, 3), http.StatusNotFound, "Organization not found")
	wantError(t, w.do(t, hP2Admin, http.MethodPost, rolesURL, map[string]any{"name": "X", "orgId": w.A.ID}, 0),
		http.StatusNotFound, "Organization not found")
	if ids := listIDs(t, w.do(t, hP2Admin, http.MethodGet, rolesURL, nil, 5)); slices.Contains(ids, aRole.ID) {
		t.Fatal("partner 2 lists A's role")
	}

	// Partner 1 (full access) addresses A with orgId; without it, its own partner roles.
	ids := listIDs(t, w.do(t, hP1Admin, http.MethodGet, rolesURL+"?orgId="+w.A.ID, nil, 6))
	if !slices.Contains(ids, aRole.ID) || !slices.Contains(ids, role.OrgAdminID) || slices.Contains(ids, role.PartnerAdminID) {
		t.Fatalf("partner 1 list of A: %v", ids)
	}
	wantInvalid(t, w.do(t, hP1Admin, http.MethodGet, rolesURL+"?orgId=nope", nil, 0), "orgId")
	fixture.Expect(t, w.do(t, hP1Admin, http.MethodGet, byID, nil, 4), http.StatusOK)
	var inA, own roleJSON
	fixture.Expect(t, w.do(t, hP1Admin, http.MethodPost, rolesURL, map[string]any{"name": "From partner", "orgId": w.A.ID}, 4),
		http.StatusCreated).Decode(t, &inA)
	if inA.OrgID == nil || *inA.OrgID != w.A.ID || inA.Scope != "organization" {
		t.Fatalf("partner-made role of A: %+v", inA)
	}
	fixture.Expect(t, w.do(t, hP1Admin, http.MethodPost, rolesURL, map[string]any{"name": "Partner role"}, 3),
		http.StatusCreated).Decode(t, &own)
	if own.PartnerID == nil || *own.PartnerID != w.PX.ID || own.OrgID != nil || own.Scope != "partner" {
		t.Fatalf("partner role: %+v", own)
	}
	ids = listIDs(t, w.do(t, hP1Admin, http.MethodGet, rolesURL, nil, 5))
	if !slices.Contains(ids, own.ID) || !slices.Contains(ids, role.PartnerAdminID) || slices.Contains(ids, aRole.ID) {
		t.Fatalf("partner 1 list: %v", ids)
	}
	// Organization A sees neither the partner's roles nor partner 2's.
	wantError(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/"+own.ID, nil, 0), http.StatusNotFound, "Role not found")
	if ids := listIDs(t, w.do(t, hAAdmin, http.MethodGet, rolesURL, nil, 0)); !slices.Contains(ids, inA.ID) || slices.Contains(ids, own.ID) {
		t.Fatalf("organization A list: %v", ids)
	}

	// The system administrator reaches any organization.
	if ids := listIDs(t, w.do(t, hSystemAdmin, http.MethodGet, rolesURL+"?orgId="+w.A.ID, nil, 6)); !slices.Contains(ids, aRole.ID) {
		t.Fatalf("system list of A: %v", ids)
	}

	// Holders of a system role are the caller's own tenant's only.
	var holders struct {
		Data []struct{ ID string } `json:"data"`
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, rolesURL+"/"+role.OrgAdminID+"/users", nil, 5), http.StatusOK).Decode(t, &holders)
	var got []string
	for _, h := range holders.Data {
		got = append(got, h.ID)
	}
	want := []string{w.userIDs[hAAdmin], w.userIDs[hAAdminBare]}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("holders of Org Admin seen by A: %v, want %v (never B's %s)", got, want, w.userIDs[hBAdmin])
	}
	// No holders: no profile read.
	var none struct {
		Data []any `json:"data"`
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID+"/users", nil, 4), http.StatusOK).Decode(t, &none)
	if none.Data == nil || len(none.Data) != 0 {
		t.Fatalf("holders of an unheld role: %v", none.Data)
	}
}

// PATCH /roles/:id refuses null for the fields that cannot be cleared, and a
// wrong type, by the field's name (parentRoleId null removes the parent).
func TestHTTPPatchNullAndWrongTypes(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	byID := rolesURL + "/" + w.create(t, hAAdmin, map[string]any{"name": "Nulls"}).ID
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": nil}, "name"},
		{map[string]any{"description": nil}, "description"},
		{map[string]any{"permissions": nil}, "permissions"},
		{map[string]any{"name": 5}, "name"},
		{map[string]any{"permissions": "devices:read"}, "permissions"},
		{map[string]any{"permissions": []any{map[string]any{"resource": 1, "action": "read"}}}, "permissions.0.resource"},
		{map[string]any{"permissions": []any{map[string]any{"resource": "devices", "action": "read", "scope": "x"}}}, "permissions.0.scope"},
	} {
		wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, c.body, 0), c.field)
	}
}

// TestHTTPCustomRoleForceMFA: a custom role created with forceMfa sends its
// holders without an authenticator to enrolment (428 with enrollUrl) as the
// built-in roles do, a role inheriting from it does too, and a PATCH turning
// it off or on is felt on the holder's next request with the token it holds.
func TestHTTPCustomRoleForceMFA(t *testing.T) {
	t.Parallel()
	w := newHTTPWorld(t)
	locked := w.create(t, hAAdmin, map[string]any{"name": "Locked", "forceMfa": true,
		"permissions": []any{perm("users", "read")}})
	if !locked.ForceMFA {
		t.Fatalf("created role forceMfa false: %+v", locked)
	}
	child := w.create(t, hAAdmin, map[string]any{"name": "Locked child", "parentRoleId": locked.ID})
	if child.ForceMFA {
		t.Fatalf("child's own forceMfa: %+v", child)
	}
	holder := func(roleID string, totp bool) string {
		return fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
			RoleID: roleID, RoleOwner: role.OrgOwner(w.A.ID), TOTP: totp}).Token
	}
	bare, inherits, enrolled := holder(locked.ID, false), holder(child.ID, false), holder(locked.ID, true)
	wantEnrol := func(tok string) {
		t.Helper()
		res := fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: rolesURL, Token: tok})
		body := wantError(t, res, http.StatusPreconditionRequired, "mfa_enrollment_required")
		if body["enrollUrl"] != "/api/v1/auth/mfa/setup" {
			t.Fatalf("428 without enrollUrl: %s", res.Body)
		}
	}
	wantOK := func(tok string) {
		t.Helper()
		fixture.Expect(t, fixture.Do(t, w.api, fixture.Request{Method: http.MethodGet, Path: rolesURL, Token: tok}), http.StatusOK)
	}
	wantEnrol(bare)
	wantEnrol(inherits)
	wantOK(enrolled)

	byID := rolesURL + "/" + locked.ID
	var upd roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"forceMfa": false}, 5), http.StatusOK).Decode(t, &upd)
	if upd.ForceMFA {
		t.Fatalf("PATCH forceMfa false answered %+v", upd)
	}
	wantOK(bare)
	// A holder of a child role costs one more read at authentication (its
	// chain) than the route's budget counts: served without the budget check.
	if res := fixture.Serve(t, w.api, fixture.Request{Method: http.MethodGet, Path: rolesURL, Token: inherits}); res.Status != http.StatusOK {
		t.Fatalf("child role's holder after forceMfa off: %d %s", res.Status, res.Body)
	}
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"forceMfa": true}, 5), http.StatusOK).Decode(t, &upd)
	if !upd.ForceMFA {
		t.Fatalf("PATCH forceMfa true answered %+v", upd)
	}
	wantEnrol(bare)
	wantEnrol(inherits)
	wantOK(enrolled)

	// GET shows it; wrong types and null are refused by name.
	var got roleJSON
	fixture.Expect(t, w.do(t, hAAdmin, http.MethodGet, byID, nil, 0), http.StatusOK).Decode(t, &got)
	if !got.ForceMFA {
		t.Fatalf("GET forceMfa false: %+v", got)
	}
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"forceMfa": nil}, 0), "forceMfa")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPatch, byID, map[string]any{"forceMfa": "yes"}, 0), "forceMfa")
	wantInvalid(t, w.do(t, hAAdmin, http.MethodPost, rolesURL, map[string]any{"name": "Typed", "forceMfa": 1}, 0), "forceMfa")

	// Both changes are audited with the value they set.
	recs, err := audit.List(context.Background(), w.env.Store, audit.Tenant(w.A.ID, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, rec := range recs {
		if rec.Action == "role.update" && rec.ResourceID == locked.ID {
			fm, _ := rec.Details["forceMfa"].(map[string]any)
			seen[fmt.Sprint(fm["from"], "->", fm["to"])]++
		}
	}
	if len(seen) != 2 || seen["true->false"] != 1 || seen["false->true"] != 1 {
		t.Fatalf("role.update forceMfa audit %v, want one true->false and one false->true", seen)
	}
}
