package device_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Issue 18, item 5: a site-restricted admin put a device of its site into a
// device group of another site, which it cannot even list.
func TestGroupMembershipChecksTheGroupsReach(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a2Site := w.A2.ID
	other := uuid.NewString()
	g := tenant.DeviceGroup{Keys: tenant.GroupKeys(w.A.ID, other), ID: other, OrgID: w.A.ID, SiteID: &a2Site, Name: "A two group",
		CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := w.Env.Store.Do(context.Background(), store.PutNew(g)); err != nil {
		t.Fatal(err)
	}
	id, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "front-desk")
	path := "/api/v1/devices/" + id
	// Out of reach: a group of site A2, and a group of no site.
	fixture.Invalid(t, w.Call(t, http.MethodPatch, path, fixture.ARestricted, map[string]any{"groupId": other}), "groupId")
	fixture.Invalid(t, w.Call(t, http.MethodPatch, path, fixture.ARestricted, map[string]any{"groupId": w.GA}), "groupId")
	d := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if len(d["groupIds"].([]any)) != 0 {
		t.Fatalf("the device joined a group out of the caller's reach: %v", d["groupIds"])
	}
	// An unrestricted admin reaches both.
	fixture.Expect(t, w.Call(t, http.MethodPatch, path, fixture.AAdmin, map[string]any{"groupId": other}), http.StatusOK)
}
