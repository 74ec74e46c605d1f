package tests

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Membership edits (issue 34 item 3, docs/decisions.md#membership-edits): PATCH /users/:id changes a member's sites, device
// groups and partner organization access, within the caller's level and
// restriction, audited, in force on the member's next request.

// memberJSON is a member as PATCH /users/:id answers it.
type memberJSON struct {
	ID             string   `json:"id"`
	OrgAccess      string   `json:"orgAccess"`
	OrgIDs         []string `json:"orgIds"`
	SiteIDs        []string `json:"siteIds"`
	DeviceGroupIDs []string `json:"deviceGroupIds"`
}

func patchMember(t *testing.T, w *fixture.World, caller, id string, body map[string]any) fixture.Response {
	t.Helper()
	return w.Call(t, http.MethodPatch, "/api/v1/users/"+id, caller, body)
}

// storedMembership reads a membership row as the next authentication will.
func storedMembership(t *testing.T, w *fixture.World, userID string, scope authz.Scope, partnerID, orgID string) user.Membership {
	t.Helper()
	m, err := user.Store{St: w.Env.Store}.Membership(context.Background(), userID, scope, partnerID, orgID)
	if err != nil {
		t.Fatal(err)
	}
	return *m
}

// TestNarrowedTechnicianLosesSiteAtOnce: a technician narrowed to site A2
// loses site A1's devices on its next request, with the access token it was
// issued before the PATCH (tokens carry no restriction: authentication reads
// the membership row each request); lifting the restriction gives them back.
func TestNarrowedTechnicianLosesSiteAtOnce(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "devices", "enrollment-keys", "agents")
	inA1, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "host-a1")
	inA2, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A2.ID, "host-a2")
	tech := fixture.ATech
	techID := w.Users[tech]

	if got := fixture.IDs(t, w.Call(t, http.MethodGet, "/api/v1/devices", tech, nil)); !slices.Equal(got, fixture.Sorted(inA1, inA2)) {
		t.Fatalf("before: technician lists %v", got)
	}
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+inA1, tech, nil), http.StatusOK)

	var m memberJSON
	fixture.Expect(t, patchMember(t, w, fixture.AAdmin, techID, map[string]any{"siteIds": []string{w.A2.ID}}), http.StatusOK).Decode(t, &m)
	if !slices.Equal(m.SiteIDs, []string{w.A2.ID}) {
		t.Fatalf("answer siteIds %v", m.SiteIDs)
	}
	// The same token, issued before the PATCH.
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, "/api/v1/devices", tech, nil)); !slices.Equal(got, []string{inA2}) {
		t.Fatalf("after narrowing: technician lists %v, want only %s", got, inA2)
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+inA1, tech, nil))
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+inA2, tech, nil), http.StatusOK)

	// An empty list lifts the restriction.
	m = memberJSON{} // an absent field leaves a decoded one alone
	fixture.Expect(t, patchMember(t, w, fixture.AAdmin, techID, map[string]any{"siteIds": []string{}}), http.StatusOK).Decode(t, &m)
	if len(m.SiteIDs) != 0 {
		t.Fatalf("answer siteIds %v after lifting", m.SiteIDs)
	}
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+inA1, tech, nil), http.StatusOK)

	// Audited: the change in details, both ways.
	recs, err := audit.List(context.Background(), w.Env.Store, audit.Tenant(w.A.ID, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, r := range recs {
		rd, _ := r.Details["restriction"].(map[string]any)
		sites, _ := rd["siteIds"].(map[string]any)
		if r.ResourceID != techID || sites == nil {
			continue
		}
		if r.Actor.ID != w.Users[fixture.AAdmin] {
			t.Errorf("audit actor %+v", r.Actor)
		}
		seen++
	}
	if seen != 2 {
		t.Fatalf("%d audit records of the site changes, want 2", seen)
	}
}

// TestMembershipEditAttacks: ATTACKS.md's cast against restriction edits.
func TestMembershipEditAttacks(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	ctx := context.Background()
	member := func(m fixture.Member) string {
		m.Scope, m.PartnerID, m.OrgID, m.RoleID = authz.ScopeOrg, w.PX.ID, w.A.ID, role.OrgTechnicianID
		return fixture.User(t, w.Env, m).UserID
	}
	free := member(fixture.Member{})
	inA1 := member(fixture.Member{SiteIDs: []string{w.A1.ID}})
	inGA := member(fixture.Member{GroupIDs: []string{w.GA}})
	before := storedMembership(t, w, free, authz.ScopeOrg, "", w.A.ID)

	// Across tenants (path, query and body orgId) and above the caller's level.
	for _, c := range []struct {
		caller string
		status int
	}{
		{fixture.CAdmin, http.StatusNotFound}, {fixture.BAdmin, http.StatusNotFound}, {fixture.PYAdmin, http.StatusNotFound},
		{fixture.PXSelectedB, http.StatusForbidden}, {fixture.AViewer, http.StatusForbidden},
	} {
		for _, body := range []map[string]any{{"siteIds": []string{w.A1.ID}}, {"orgId": w.A.ID, "siteIds": []string{w.A1.ID}}} {
			fixture.Expect(t, patchMember(t, w, c.caller, free, body), c.status)
		}
	}
	// Out of a restriction: a restricted admin edits no one it could not
	// invite, widens no one (itself included), narrows inside its own.
	wider := "Cannot give a user wider site or device group access than your own"
	for _, c := range []struct {
		caller, id string
		body       map[string]any
		message    string
	}{
		{fixture.ARestricted, free, map[string]any{"siteIds": []string{w.A1.ID}}, user.ErrOutside.Error()},
		{fixture.ARestricted, inA1, map[string]any{"siteIds": []string{w.A1.ID, w.A2.ID}}, wider},
		{fixture.ARestricted, inA1, map[string]any{"siteIds": []string{}}, wider},
		{fixture.ARestricted, w.Users[fixture.ARestricted], map[string]any{"siteIds": []string{w.A2.ID}}, wider},
		{fixture.ARestricted, w.Users[fixture.ARestricted], map[string]any{"siteIds": []string{}}, wider},
		{fixture.AGroupOnly, inGA, map[string]any{"deviceGroupIds": []string{}}, wider},
		{fixture.AGroupOnly, w.Users[fixture.AGroupOnly], map[string]any{"deviceGroupIds": []string{}}, wider},
		{fixture.AGroupOnly, free, map[string]any{"deviceGroupIds": []string{w.GA}}, user.ErrOutside.Error()},
	} {
		body := fixture.ExpectError(t, patchMember(t, w, c.caller, c.id, c.body), http.StatusForbidden, "forbidden")
		if body["error"] != c.message {
			t.Errorf("%s on %s with %v: %v, want %q", c.caller, c.id, c.body, body["error"], c.message)
		}
	}
	var m memberJSON
	fixture.Expect(t, patchMember(t, w, fixture.ARestricted, inA1, map[string]any{"deviceGroupIds": []string{w.GA}}), http.StatusOK).Decode(t, &m)
	if !slices.Equal(m.SiteIDs, []string{w.A1.ID}) || !slices.Equal(m.DeviceGroupIDs, []string{w.GA}) {
		t.Fatalf("narrowed inside the restriction: %+v", m)
	}
	// A pending invitation's restriction is edited the same way and stays
	// pending.
	pending := member(fixture.Member{Status: user.StatusInvited})
	fixture.Expect(t, patchMember(t, w, fixture.AAdmin, pending, map[string]any{"siteIds": []string{w.A2.ID}}), http.StatusOK)
	var pv struct {
		Status  string   `json:"status"`
		SiteIDs []string `json:"siteIds"`
	}
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/users/"+pending, fixture.AAdmin, nil), http.StatusOK).Decode(t, &pv)
	if pv.Status != "invited" || !slices.Equal(pv.SiteIDs, []string{w.A2.ID}) {
		t.Fatalf("pending member after the edit: %+v", pv)
	}
	// Input: ids of another organization, unknown, malformed, null, wrong
	// types, partner fields on an organization membership.
	otherGroup := uuid.NewString()
	must(t, w.Env.Store.Do(ctx, store.PutNew(tenant.DeviceGroup{Keys: tenant.GroupKeys(w.C.ID, otherGroup), ID: otherGroup,
		OrgID: w.C.ID, Name: "Group C", CreatedAt: "2026-11-01T09:00:00.000Z"})))
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"siteIds": []string{w.C1.ID}}, "siteIds.0"},
		{map[string]any{"siteIds": []string{w.A1.ID, uuid.NewString()}}, "siteIds.1"},
		{map[string]any{"deviceGroupIds": []string{otherGroup}}, "deviceGroupIds.0"},
		{map[string]any{"siteIds": []string{"not-a-uuid"}}, "siteIds.0"},
		{map[string]any{"siteIds": nil}, "siteIds"},
		{map[string]any{"deviceGroupIds": "x"}, "deviceGroupIds"},
		{map[string]any{"orgAccess": "all"}, "orgAccess"},
		{map[string]any{"orgIds": []string{w.A.ID}}, "orgIds"},
	} {
		fixture.Invalid(t, patchMember(t, w, fixture.AAdmin, free, c.body), c.field)
	}
	if after := storedMembership(t, w, free, authz.ScopeOrg, "", w.A.ID); !slices.Equal(after.SiteIDs, before.SiteIDs) ||
		!slices.Equal(after.GroupIDs, before.GroupIDs) || after.Version != before.Version {
		t.Fatalf("refused edits changed the membership: %+v", after)
	}
}

// TestPartnerMemberOrgAccessEdit: a partner membership's orgAccess and orgIds,
// checked as an invitation checks them; only the partner's organizations.
func TestPartnerMemberOrgAccessEdit(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	id := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerTechnicianID,
		OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{w.A.ID}}).UserID
	var m memberJSON
	fixture.Expect(t, patchMember(t, w, fixture.PXAdmin, id, map[string]any{"orgIds": []string{w.B.ID}}), http.StatusOK).Decode(t, &m)
	if m.OrgAccess != "selected" || !slices.Equal(m.OrgIDs, []string{w.B.ID}) {
		t.Fatalf("orgIds alone keep orgAccess selected: %+v", m)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"orgIds": []string{w.C.ID}}, "orgIds.0"},
		{map[string]any{"orgIds": []string{uuid.NewString()}}, "orgIds.0"},
		{map[string]any{"orgAccess": "selected", "orgIds": []string{}}, "orgIds"},
		{map[string]any{"orgAccess": "some"}, "orgAccess"},
		{map[string]any{"orgAccess": "all", "orgIds": []string{w.A.ID}}, "orgIds"},
		{map[string]any{"siteIds": []string{w.A1.ID}}, "siteIds"},
		{map[string]any{"orgAccess": nil}, "orgAccess"},
	} {
		fixture.Invalid(t, patchMember(t, w, fixture.PXAdmin, id, c.body), c.field)
	}
	// Another partner and a partner admin without full access reach nothing.
	fixture.NotFound(t, patchMember(t, w, fixture.PYAdmin, id, map[string]any{"orgAccess": "all"}))
	fixture.Expect(t, patchMember(t, w, fixture.PXSelectedB, id, map[string]any{"orgAccess": "all"}), http.StatusForbidden)

	m = memberJSON{}
	fixture.Expect(t, patchMember(t, w, fixture.PXAdmin, id, map[string]any{"orgAccess": "all"}), http.StatusOK).Decode(t, &m)
	if m.OrgAccess != "all" || len(m.OrgIDs) != 0 {
		t.Fatalf("orgAccess all: %+v", m)
	}
	fixture.Invalid(t, patchMember(t, w, fixture.PXAdmin, id, map[string]any{"orgIds": []string{w.A.ID}}), "orgIds")
	fixture.Expect(t, patchMember(t, w, fixture.PXAdmin, id, map[string]any{"orgAccess": "none"}), http.StatusOK).Decode(t, &m)
	if stored := storedMembership(t, w, id, authz.ScopePartner, w.PX.ID, ""); stored.OrgAccess != authz.OrgAccessNone || len(stored.OrgIDs) != 0 {
		t.Fatalf("stored %+v", stored)
	}
}

// TestConcurrentMembershipEdits: edits of different restriction fields and
// the role of one member, raced, each answered 200 or 409 race_lost; every field an answered
// 200 set is in the final row (one winner or both applied in order, never a
// lost update).
func TestConcurrentMembershipEdits(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	for round := 0; round < 3; round++ {
		id := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgTechnicianID}).UserID
		// The other edits are role assignments back and forth (whole-row
		// writes of the membership): none may write back the restriction it read.
		bodies := []map[string]any{{"siteIds": []string{w.A1.ID}}, {"deviceGroupIds": []string{w.GA}},
			{"roleId": role.OrgViewerID}, {"roleId": role.OrgTechnicianID}}
		paths := []string{"/api/v1/users/" + id, "/api/v1/users/" + id, "/api/v1/users/" + id + "/role", "/api/v1/users/" + id + "/role"}
		methods := []string{http.MethodPatch, http.MethodPatch, http.MethodPost, http.MethodPost}
		won := make([]bool, 4)
		var mu sync.Mutex
		var wg sync.WaitGroup
		for i := 0; i < 24; i++ {
			wg.Add(1)
			go func(k int) {
				defer wg.Done()
				res := fixture.Do(t, w.API, fixture.Request{Method: methods[k], Path: paths[k],
					Token: w.Tokens[fixture.AAdmin], Body: bodies[k], Raced: true})
				switch res.Status {
				case http.StatusOK:
					mu.Lock()
					won[k] = true
					mu.Unlock()
				case http.StatusConflict:
					if res.JSON(t)["code"] != "race_lost" {
						t.Errorf("409 without race_lost: %s", res.Body)
					}
				default:
					t.Errorf("raced edit: %d %s", res.Status, res.Body)
				}
			}(i % 4)
		}
		wg.Wait()
		m := storedMembership(t, w, id, authz.ScopeOrg, "", w.A.ID)
		if won[0] != slices.Equal(m.SiteIDs, []string{w.A1.ID}) || won[1] != slices.Equal(m.GroupIDs, []string{w.GA}) {
			t.Fatalf("round %d: answered %v, stored sites %v groups %v role %s", round, won, m.SiteIDs, m.GroupIDs, m.RoleID)
		}
	}
}
