package tests

import (
	"context"
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// A caller changes an account account-wide only when it covers every accepted
// membership by tenant and by level: a partner role holding users:write (but
// not *:*) cannot rename or disable its Partner Admin's account by aiming at a
// weaker organization membership of the same account.
func TestAccountWideChangeNeedsLevelOverEveryMembership(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "roles")
	rid := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.PXAdmin, map[string]any{"name": "partner user admin",
		"permissions": []map[string]string{{"resource": "users", "action": "read"}, {"resource": "users", "action": "write"},
			{"resource": "organizations", "action": "read"}}}), http.StatusCreated).JSON(t)["id"].(string)
	slice := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: rid, RoleOwner: "PARTNER#" + w.PX.ID,
		OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	w.Tokens["slice"] = slice.Token
	admin := w.Users[fixture.PXAdmin]
	weak := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "reader",
		"permissions": []map[string]string{{"resource": "users", "action": "read"}}}), http.StatusCreated).JSON(t)["id"].(string)
	// The Partner Admin also holds an accepted, weak membership of A.
	m := &user.Membership{ID: "11111111-1111-4111-8111-111111111111", UserID: admin, Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
		RoleID: weak, RoleOwner: "ORG#" + w.A.ID, Status: user.MemberActive, CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := w.Env.Store.Do(context.Background(), user.AddMembershipWrite(m)); err != nil {
		t.Fatal(err)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, "/api/v1/users/"+admin, "slice", map[string]any{"status": "disabled"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, "/api/v1/users/"+admin, "slice", map[string]any{"orgId": w.A.ID, "name": "Renamed by slice"}),
		http.StatusForbidden, "forbidden")
	// A status change through A suspends only that membership, never the account.
	w.Call(t, http.MethodPatch, "/api/v1/users/"+admin, "slice", map[string]any{"orgId": w.A.ID, "status": "disabled"})
	u, err := w.Env.Users.Get(context.Background(), admin)
	if err != nil {
		t.Fatal(err)
	}
	if u.Status != user.StatusActive || u.Name == "Renamed by slice" {
		t.Fatalf("the Partner Admin's account changed: %s %q", u.Status, u.Name)
	}
}
