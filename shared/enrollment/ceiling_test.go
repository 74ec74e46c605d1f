package enrollment_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Issue 18, item 5: enrollment keys accepted any expiresAt (year 9999); now
// at most 365 days ahead, on create and rotate.
func TestExpiresAtAtMostAYearAhead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	now := w.Env.Clock.Now()
	at := func(d time.Duration) string { return clock.Format(now.Add(d)) }
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "far", "expiresAt": "9999-12-31T23:59:59Z"}), "expiresAt")
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "far", "expiresAt": at(366 * 24 * time.Hour)}), "expiresAt")
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "year", "expiresAt": at(365 * 24 * time.Hour)}), http.StatusCreated)
	id := res.JSON(t)["id"].(string)
	fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/"+id+"/rotate", fixture.AAdmin, map[string]any{"expiresAt": "9999-12-31T23:59:59Z"}), "expiresAt")
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/rotate", fixture.AAdmin, map[string]any{"expiresAt": at(24 * time.Hour)}), http.StatusOK)
}

// Issue 18, item 1: enrollment key create and rotate apply the credential
// ceiling: the key enrols devices, so the caller must hold devices:write; a
// device-group-restricted caller cannot rotate what it could not create.
func TestEnrollmentKeyCeiling(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "agents", "devices", "enrollment-keys", "roles")
	cr := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "Org writer",
		"permissions": []map[string]string{{"resource": "organizations", "action": "write"}, {"resource": "devices", "action": "read"}}}),
		http.StatusCreated).JSON(t)
	c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: cr["id"].(string),
		RoleOwner: "ORG#" + w.A.ID, MFA: true})
	w.Tokens["slice"] = c.Token
	res := w.Call(t, http.MethodPost, base, "slice", map[string]any{"name": "mine"})
	fixture.ExpectError(t, res, http.StatusForbidden, "forbidden")
	if res.JSON(t)["error"] != "Cannot grant scopes you do not hold" {
		t.Fatalf("create: %s", res.Body)
	}
	id := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "admin's"}), http.StatusCreated).JSON(t)["id"].(string)
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/rotate", "slice", map[string]any{}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/rotate", fixture.AGroupOnly, map[string]any{}), http.StatusForbidden, "forbidden")
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/rotate", fixture.AAdmin, map[string]any{}), http.StatusOK)
}
