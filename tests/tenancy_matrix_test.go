package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestTenancyMatrix walks every documented operation of every built route
// group as callers of another partner, another organization of the same
// partner, a partner without access to the victim's organization, a
// site-restricted admin and a lower role (ATTACKS.md's cast), against objects
// of organization A, and finds no read or write that crosses: no 2xx on a
// victim's object (a 5xx is a failure too), no victim name in any answer, and
// no change to A's rows. A's own admin reading the same objects is the
// positive control. An operation added later is walked automatically, or the
// test fails until it is classified below.
func TestTenancyMatrix(t *testing.T) {
	built := []string{}
	for name := range groups.Builders() {
		built = append(built, name)
	}
	w := fixture.NewWorld(t, built...)
	v := victims(t, w)

	// Operations not walked, with the reason.
	skip := map[string]string{
		"/api/v1/agents/":                          "agent-token routes: each agent reaches only its own device (shared/agent tests)",
		"/api/v1/auth/":                            "self-service: acts on the caller's own account (switching: TestTenancyMatrixSwitch)",
		"/api/v1/users/me":                         "self-service: acts on the caller's own account",
		"/api/v1/users/me/push-targets":            "self-service: the caller's own push targets (shared/push: another user's target is 404)",
		"/api/v1/health":                           "public",
		"/api/v1/openapi.json":                     "public",
		"/api/v1/.well-known/jwks.json":            "public",
		"/api/v1/permissions/catalog":              "public catalogue of permissions, no tenant data",
		"/api/v1/roles/permissions/available":      "the caller's own grantable permissions",
		"/admin/":                                  "the same handlers as /api/v1/admin/",
		"/api/v1/webhooks/{id}/retry/{deliveryId}": "needs a delivery of the victim; covered by shared/webhook",
		"/api/v1/sso/login/":                       "public: starts a browser sign-in (shared/sso end-to-end tests)",
		"/api/v1/sso/callback":                     "public: the identity provider's return (shared/sso end-to-end tests)",
		"/api/v1/sso/exchange":                     "public: a one-time code is the credential (shared/sso end-to-end tests)",
		"/api/v1/sso/check/":                       "public: an organization's SSO status",
	}
	idOf := map[string]string{
		"/api/v1/api-keys/":               v.apiKey,
		"/api/v1/service-principals/":     v.principal,
		"/api/v1/enrollment-keys/":        v.enrollKey,
		"/api/v1/devices/":                v.device,
		"/api/v1/webhooks/":               v.webhook,
		"/api/v1/sso/providers/":          v.ssoProvider,
		"/api/v1/sites/":                  w.A2.ID,
		"/api/v1/device-groups/":          w.GA,
		"/api/v1/roles/":                  v.role,
		"/api/v1/users/":                  v.user,
		"/api/v1/organizations/":          w.A.ID,
		"/api/v1/filters/":                v.filter,
		"/api/v1/scripts/":                v.script,
		"/api/v1/alerts/":                 v.alert,
		"/api/v1/pam/elevation-requests/": v.elevation,
		"/api/v1/pam/rules/":              v.pamRule,
		"/api/v1/pam/signer-groups/":      v.signerGroup,
		"/api/v1/pam/software-policies/":  v.softwarePolicy,
		"/api/v1/admin/":                  "00000000-0000-4000-8000-00000000abcd",
		"/api/v1/access-reviews/":         v.review,
	}
	// An account administering both A and C, signed in through C's identity
	// provider: the session acts only through the membership that provider
	// serves (docs/decisions.md#sso-sessions), so it reaches nothing of A.
	const ssoInC = "SSO session in C of an admin of A and C"
	both := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID, MFA: true})
	fixture.Join(t, w.Env, both.UserID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PY.ID, OrgID: w.C.ID, RoleID: role.OrgAdminID})
	pair, sw, err := w.Env.Sessions.Start(both.UserID, session.Claims{Scope: authz.ScopeOrg, PartnerID: w.PY.ID, OrgID: w.C.ID, MFA: true,
		IdP: "00000000-0000-4000-8000-0000000000cc"}, "127.0.0.1", "matrix")
	must(t, err)
	must(t, w.Env.Store.Do(context.Background(), sw))
	w.Tokens[ssoInC] = pair.AccessToken
	attackers := []string{fixture.CAdmin, fixture.BAdmin, fixture.PYAdmin, fixture.PXSelectedB, ssoInC}

	reader := customReader(t, w)
	before := rowsOf(t, w, w.A.ID)
	walked := 0
	for _, op := range operations(t) {
		if reason := skipped(skip, op.path); reason != "" {
			continue
		}
		if g, ok := routes.Lookup(op.path); !ok || !slices.Contains(built, g.Function) {
			continue
		}
		path := op.path
		if strings.Contains(path, "{id}") {
			id := ""
			for prefix, v := range idOf {
				if strings.HasPrefix(path, prefix) {
					id = v
				}
			}
			if id == "" {
				t.Fatalf("%s %s: no victim object for its {id}; add one to the matrix", op.method, op.path)
			}
			path = strings.ReplaceAll(path, "{id}", id)
		}
		path = strings.ReplaceAll(path, "{itemId}", v.reviewItem)
		if strings.Contains(path, "{") {
			t.Fatalf("%s %s: unclassified path parameter", op.method, op.path)
		}
		hasID := path != op.path
		body := any(nil)
		if op.method != http.MethodGet && op.method != http.MethodDelete {
			body = map[string]any{"orgId": w.A.ID, "name": "attack", "siteId": w.A2.ID}
		}
		for _, caller := range attackers {
			q := path
			if !hasID && op.method == http.MethodGet {
				q = path + "?orgId=" + w.A.ID
			}
			if op.path == "/api/v1/search" {
				q = path + "?q=victim" // every victim's name holds it
			}
			res := w.Call(t, op.method, q, caller, body)
			if res.Status == http.StatusNotImplemented {
				continue // a route the group does not serve yet
			}
			walked++
			switch {
			case res.Status >= 500:
				t.Errorf("%s %s as %s: %d %s", op.method, q, caller, res.Status, res.Body)
			case hasID && res.Status < 400:
				t.Errorf("%s %s as %s crossed tenants: %d %s", op.method, q, caller, res.Status, res.Body)
			case !hasID && op.method != http.MethodGet && res.Status < 400:
				t.Errorf("%s %s as %s acted in A: %d %s", op.method, q, caller, res.Status, res.Body)
			}
			for _, secret := range v.names {
				if strings.Contains(string(res.Body), secret) {
					t.Errorf("%s %s as %s: the answer names A's %q", op.method, q, caller, secret)
				}
			}
		}
		// A lower role and a restricted admin never write A's objects.
		if hasID && op.method != http.MethodGet {
			for _, caller := range []string{fixture.AViewer, fixture.ARestricted} {
				if op.path == "/api/v1/organizations/{id}/security-settings" && caller == fixture.ARestricted {
					continue // reads by the restricted admin are allowed; its write is checked below
				}
				res := w.Call(t, op.method, path, caller, body)
				walked++
				if res.Status != http.StatusNotImplemented && (res.Status < 400 || res.Status >= 500) {
					t.Errorf("%s %s as %s: %d %s", op.method, path, caller, res.Status, res.Body)
				}
			}
		}
		// Positive control: A's admin reads its own objects, and so do a
		// custom role holding every read permission and the callers above A
		// (its partner's admin and a system admin, naming A), each within the
		// route's budget (fixture.Do).
		if op.method == http.MethodGet && !strings.HasPrefix(op.path, "/api/v1/admin/") {
			q := path
			if !hasID {
				q = path + "?orgId=" + w.A.ID
			}
			if op.path == "/api/v1/search" {
				q = path + "?q=victim"
			}
			admin := w.Call(t, http.MethodGet, q, fixture.AAdmin, nil)
			if hasID && admin.Status != http.StatusOK {
				t.Errorf("control: %s as A's admin: %d %s", q, admin.Status, admin.Body)
			}
			if admin.Status == http.StatusOK && op.path != "/api/v1/audit-logs/export" { // export needs audit:export, not a read
				if res := w.Call(t, http.MethodGet, q, reader, nil); res.Status != http.StatusOK {
					t.Errorf("control: %s as A's custom reader: %d %s (A's admin: 200)", q, res.Status, res.Body)
				}
			}
			// Reviews belong to the scope that made them, and system tokens
			// have none (docs/decisions.md, "Access reviews").
			if admin.Status == http.StatusOK && !strings.HasPrefix(op.path, "/api/v1/access-reviews") {
				qa := q
				if hasID {
					qa = path + "?orgId=" + w.A.ID
				}
				for _, above := range []string{fixture.PXAdmin, fixture.SysAdmin} {
					if res := w.Call(t, http.MethodGet, qa, above, nil); res.Status != http.StatusOK {
						t.Errorf("control: %s as %s: %d %s (A's admin: 200)", qa, above, res.Status, res.Body)
					}
				}
			}
		}
	}
	// Control: A's admin finds A's device, script and alert by their names.
	res := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/search?q=victim&limit=50", fixture.AAdmin, nil), http.StatusOK)
	for _, name := range []string{v.names[3], v.names[8], v.names[9]} {
		if !strings.Contains(string(res.Body), name) {
			t.Errorf("control: A's admin does not find %q: %s", name, res.Body)
		}
	}
	if walked < 100 {
		t.Fatalf("only %d attacks walked", walked)
	}
	if after := rowsOf(t, w, w.A.ID); after != before {
		t.Fatalf("A's rows changed under the attacks:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("%d attacks on %d organization-A objects", walked, len(idOf))
}

type operation struct{ method, path string }

// operations lists every operation of the served OpenAPI document (method
// upper-case), by path then method: the budget, contract and tenancy tests
// walk the same list.
func operations(t *testing.T) []operation {
	t.Helper()
	out := slices.Collect(maps.Keys(documentOps(t)))
	slices.SortFunc(out, func(a, b operation) int { return strings.Compare(a.path+a.method, b.path+b.method) })
	return out
}

// documentOps is every operation of the served OpenAPI document with its
// object as the document holds it.
func documentOps(t *testing.T) map[operation]json.RawMessage {
	t.Helper()
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	methods := []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}
	out := map[operation]json.RawMessage{}
	for p, ops := range doc.Paths {
		for m, op := range ops {
			if slices.Contains(methods, m) { // not "parameters" and the like
				out[operation{strings.ToUpper(m), p}] = op
			}
		}
	}
	return out
}

func skipped(skip map[string]string, path string) string {
	for prefix, reason := range skip {
		if path == prefix || strings.HasPrefix(path, prefix) {
			return reason
		}
	}
	return ""
}

// victimSet is organization A's objects.
type victimSet struct {
	apiKey, principal, enrollKey, device, webhook, role, user, filter, script, alert, ssoProvider string
	review, reviewItem                                                                            string
	elevation, pamRule, signerGroup, softwarePolicy                                               string
	names                                                                                         []string
}

func victims(t *testing.T, w *fixture.World) victimSet {
	t.Helper()
	var v victimSet
	id := func(res fixture.Response) string {
		t.Helper()
		if res.Status >= 300 {
			t.Fatalf("victim setup: %d %s", res.Status, res.Body)
		}
		got, _ := res.JSON(t)["id"].(string)
		return got
	}
	v.names = []string{"victim-key-7f3", "victim-sp-7f3", "victim-ekey-7f3", "victim-host-7f3", "victim-hook-7f3", "victim-role-7f3", "victim-user-7f3", "victim-filter-7f3", "victim-script-7f3", "victim-alert-7f3", "victim-sso-7f3",
		"victim-signers-7f3", "victim-pamrule-7f3", "victim-subject-7f3", "victim-swpolicy-7f3"}
	v.apiKey = id(w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": v.names[0], "scopes": []string{"devices:read"}}))
	v.principal = id(w.Call(t, http.MethodPost, "/api/v1/service-principals", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": v.names[1], "scopes": []string{"devices:read"}}))
	ek := w.Call(t, http.MethodPost, "/api/v1/enrollment-keys", fixture.AAdmin, map[string]any{"name": v.names[2], "siteId": w.A2.ID, "maxUsage": 5})
	v.enrollKey = id(ek)
	raw, _ := ek.JSON(t)["key"].(string)
	enr := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll", RemoteAddr: "198.51.100.77:1",
		Body: map[string]any{"enrollmentKey": raw, "hostname": v.names[3], "osType": "windows", "osVersion": "11", "architecture": "x64", "agentVersion": "1.0.0"}})
	if enr.Status != http.StatusCreated {
		t.Fatalf("enroll: %d %s", enr.Status, enr.Body)
	}
	v.device, _ = enr.JSON(t)["deviceId"].(string)
	v.webhook = id(w.Call(t, http.MethodPost, "/api/v1/webhooks", fixture.AAdmin, map[string]any{"name": v.names[4],
		"url": "https://93.184.216.34/in", "events": []string{"device.offline"}}))
	v.role = id(w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": v.names[5],
		"permissions": []map[string]string{{"resource": "devices", "action": "read"}}}))
	v.user = id(w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.AAdmin, map[string]any{"email": "victim-7f3@example.com",
		"name": v.names[6], "roleId": "00000000-0000-4000-8000-000000000007"}))
	v.filter = id(w.Call(t, http.MethodPost, "/api/v1/filters", fixture.AAdmin, map[string]any{"name": v.names[7],
		"conditions": map[string]any{"operator": "AND", "conditions": []any{map[string]any{"field": "hostname", "operator": "contains", "value": "victim"}}}}))
	v.script = id(w.Call(t, http.MethodPost, "/api/v1/scripts", fixture.AAdmin, map[string]any{"name": v.names[8],
		"language": "powershell", "content": "Get-Process"}))
	v.alert = id(w.Call(t, http.MethodPost, "/api/v1/alerts", fixture.AAdmin, map[string]any{"title": v.names[9],
		"severity": "high", "deviceId": v.device}))
	sg := w.Call(t, http.MethodPost, "/api/v1/pam/signer-groups", fixture.AAdmin, map[string]any{"name": v.names[11], "signers": []string{"Victim Corp"}})
	if sg.Status != http.StatusCreated {
		t.Fatalf("signer group: %d %s", sg.Status, sg.Body)
	}
	v.signerGroup, _ = sg.JSON(t)["signerGroups"].([]any)[0].(map[string]any)["id"].(string)
	rule := w.Call(t, http.MethodPost, "/api/v1/pam/rules", fixture.AAdmin, map[string]any{"name": v.names[12], "verdict": "require_approval",
		"matchSignerGroupId": v.signerGroup, "siteId": w.A2.ID})
	if rule.Status != http.StatusCreated {
		t.Fatalf("pam rule: %d %s", rule.Status, rule.Body)
	}
	v.pamRule, _ = rule.JSON(t)["rule"].(map[string]any)["id"].(string)
	swp := w.Call(t, http.MethodPost, "/api/v1/pam/software-policies", fixture.AAdmin, map[string]any{"name": v.names[14], "mode": "allowlist",
		"executables": []map[string]any{{"signer": "Victim Corp"}}})
	if swp.Status != http.StatusCreated {
		t.Fatalf("software policy: %d %s", swp.Status, swp.Body)
	}
	v.softwarePolicy, _ = swp.JSON(t)["softwarePolicy"].(map[string]any)["id"].(string)
	token, _ := enr.JSON(t)["authToken"].(string)
	v.elevation = id(w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+v.device+"/elevation-requests", token,
		map[string]any{"subject_username": v.names[13], "target_executable_path": `C:\\victim\\setup.exe`}))
	v.ssoProvider = id(w.Call(t, http.MethodPost, "/api/v1/sso/providers", fixture.AAdmin, map[string]any{"name": v.names[10],
		"issuer": "https://93.184.216.34/victim", "clientId": "victim-client", "clientSecret": "victim-secret-7f3"}))
	v.review = id(w.Call(t, http.MethodPost, "/api/v1/access-reviews", fixture.AAdmin, map[string]any{"name": "victim-review-7f3"}))
	var rd struct{ Items []struct{ ID string } }
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/access-reviews/"+v.review, fixture.AAdmin, nil), http.StatusOK).Decode(t, &rd)
	v.reviewItem = rd.Items[0].ID
	v.names = append(v.names, "victim-review-7f3")
	return v
}

// rowsOf is every row that names organization orgID, except the ones the
// attacks may legitimately add (audit records of refusals, rate-limit cells).
func rowsOf(t *testing.T, w *fixture.World, orgID string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(fixture.Scan(t, w.Env), "\n") {
		if strings.Contains(l, strings.ToLower(orgID)) && !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") {
			keep = append(keep, l)
		}
	}
	slices.Sort(keep)
	return fmt.Sprintf("%d rows\n%s", len(keep), strings.Join(keep, "\n"))
}

// customReader signs in a member of A whose custom role holds every read
// permission A's admin holds (and so may grant), and returns its cast name.
func customReader(t *testing.T, w *fixture.World) string {
	t.Helper()
	var perms []authz.Permission
	for _, e := range authz.Catalog {
		if e.Action == "read" && roleSet(role.OrgAdminID).Has(e.Permission) {
			perms = append(perms, e.Permission)
		}
	}
	cr := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "Reader", "permissions": perms}),
		http.StatusCreated).JSON(t)
	const name = "org A reader (custom role: every read)"
	c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: cr["id"].(string),
		RoleOwner: "ORG#" + w.A.ID, MFA: true})
	w.Tokens[name], w.Users[name] = c.Token, c.UserID
	return name
}
