package tests

import (
	"context"
	"net/http"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestTenancyMatrixSwitch is the tenancy matrix of POST /auth/switch and GET
// /auth/me (self-service routes the main matrix skips): every member of the
// cast, naming the memberships of others (another partner's, another
// organization's, a higher role's, the system's), gets 404 and reads none
// of them in its own membership list; and a token of a switched membership
// reaches only that membership's tenant.
func TestTenancyMatrixSwitch(t *testing.T) {
	w := fixture.NewWorld(t, "auth", "users", "organizations", "sites")
	cast := []string{fixture.SysAdmin, fixture.PXAdmin, fixture.PXSelectedB, fixture.PYAdmin, fixture.AAdmin,
		fixture.AViewer, fixture.ARestricted, fixture.BAdmin, fixture.CAdmin}
	own := map[string][]string{}
	for _, c := range cast {
		ms, err := w.Env.Deps.Users.Memberships(context.Background(), w.Users[c])
		must(t, err)
		for _, m := range ms {
			own[c] = append(own[c], m.ID)
		}
	}
	for _, caller := range cast {
		for victim, ids := range own {
			if victim == caller {
				continue
			}
			for _, id := range ids {
				res := w.Call(t, http.MethodPost, "/api/v1/auth/switch", caller, map[string]string{"membershipId": id})
				if res.Status != http.StatusNotFound {
					t.Errorf("%s switching to %s's membership: %d %s", caller, victim, res.Status, res.Body)
				}
			}
		}
		res := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/auth/me", caller, nil), http.StatusOK)
		for _, m := range res.JSON(t)["memberships"].([]any) {
			if id := m.(map[string]any)["id"].(string); !slices.Contains(own[caller], id) {
				t.Errorf("%s's /auth/me lists a membership not its own: %v", caller, m)
			}
		}
	}

	// One account administering A (partner X) and C (partner Y).
	both := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID, MFA: true})
	fixture.Join(t, w.Env, both.UserID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PY.ID, OrgID: w.C.ID, RoleID: role.OrgAdminID})
	ms, err := w.Env.Deps.Users.Memberships(context.Background(), both.UserID)
	must(t, err)
	inC := ms[slices.IndexFunc(ms, func(m user.Membership) bool { return m.OrgID == w.C.ID })].ID
	call := func(method, path, token string, body any) fixture.Response {
		return fixture.Do(t, w.API, fixture.Request{Method: method, Path: path, Token: token, Body: body})
	}
	fixture.Expect(t, call(http.MethodGet, "/api/v1/sites/"+w.A1.ID, both.Token, nil), http.StatusOK) // control
	res := fixture.Expect(t, call(http.MethodPost, "/api/v1/auth/switch", both.Token, map[string]string{"membershipId": inC}), http.StatusOK)
	tok := res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string)
	fixture.Expect(t, call(http.MethodGet, "/api/v1/sites/"+w.C1.ID, tok, nil), http.StatusOK)
	for _, path := range []string{"/api/v1/sites/" + w.A1.ID, "/api/v1/organizations/" + w.A.ID, "/api/v1/users?orgId=" + w.A.ID} {
		if res := call(http.MethodGet, path, tok, nil); res.Status < 400 || res.Status >= 500 {
			t.Errorf("GET %s in C after the switch: %d %s", path, res.Status, res.Body)
		}
	}
	// The session in A ended with the switch.
	fixture.Expect(t, call(http.MethodGet, "/api/v1/sites/"+w.A1.ID, both.Token, nil), http.StatusUnauthorized)
}
