package tests

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// A caller with neither a partner nor an organization (a self-registered user
// with no membership) is refused on every tenant route with 403 `Partner or
// organization context required`, before any permission is looked at; so is a
// system caller that names no organization where a route acts in one. Users
// routes are covered with the users group.
func TestTenantRoutesNeedAContext(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	p := fixture.Partner(t, env, "P")
	o := fixture.Org(t, env, p.ID, "O")
	site := fixture.Site(t, env, o.ID, "S")
	api := fixture.API(t, env)
	// MFA: true so "+ MFA" routes reach the context check.
	nobody := fixture.User(t, env, fixture.Member{Scope: authz.ScopeNone, MFA: true})
	system := fixture.User(t, env, fixture.Member{Scope: authz.ScopeSystem, RoleID: role.SystemAdminID, MFA: true})

	const msg = "Partner or organization context required"
	cases := []struct {
		group  string
		caller fixture.Caller
		method string
		path   string
		body   any
	}{
		{"organizations", nobody, "GET", "/api/v1/organizations", nil},
		{"organizations", nobody, "POST", "/api/v1/organizations", map[string]any{"name": "Mine", "partnerId": p.ID}},
		{"organizations", nobody, "GET", "/api/v1/organizations/" + o.ID, nil},
		{"organizations", nobody, "GET", "/api/v1/organizations/" + o.ID + "/security-settings", nil},
		{"sites", nobody, "GET", "/api/v1/sites?orgId=" + o.ID, nil},
		{"sites", nobody, "POST", "/api/v1/sites", map[string]any{"orgId": o.ID, "name": "Mine"}},
		{"sites", nobody, "GET", "/api/v1/sites/" + site.ID, nil},
		{"sites", system, "GET", "/api/v1/sites", nil},
		{"sites", system, "POST", "/api/v1/sites", map[string]any{"name": "Mine"}},
		{"device-groups", nobody, "GET", "/api/v1/device-groups?orgId=" + o.ID, nil},
		{"device-groups", nobody, "POST", "/api/v1/device-groups", map[string]any{"orgId": o.ID, "name": "Mine"}},
		{"device-groups", system, "GET", "/api/v1/device-groups", nil},
		{"device-groups", system, "POST", "/api/v1/device-groups", map[string]any{"name": "Mine"}},
		{"roles", nobody, "GET", "/api/v1/roles", nil},
		{"roles", nobody, "POST", "/api/v1/roles", map[string]any{"name": "Mine", "permissions": []any{map[string]string{"resource": "devices", "action": "read"}}}},
		{"roles", nobody, "GET", "/api/v1/roles/" + role.OrgAdminID, nil},
	}
	for _, c := range cases {
		who := "no membership"
		if c.caller == system {
			who = "system without orgId"
		}
		t.Run(c.group+" "+c.method+" "+c.path+" "+who, func(t *testing.T) {
			res := fixture.Do(t, api, fixture.Request{Method: c.method, Path: c.path, Token: c.caller.Token, Body: c.body})
			if res.Status != http.StatusForbidden {
				t.Fatalf("status %d, want 403: %s", res.Status, res.Body)
			}
			if body := res.JSON(t); body["error"] != msg || body["code"] != "forbidden" {
				t.Fatalf("body %s, want %q", res.Body, msg)
			}
		})
	}
}
