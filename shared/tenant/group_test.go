package tenant_test

import (
	"net/http"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

const groups = "/api/v1/device-groups"

func TestListDeviceGroups(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cases := []struct {
		caller, query string
		want          []string
		calls         int
	}{
		{aAdmin, "", []string{w.gA1.ID, w.gA2.ID, w.gA.ID}, 3},
		{aDevicesOnly, "", []string{w.gA1.ID, w.gA2.ID, w.gA.ID}, 3}, // a custom role: read in authentication's batch
		// A site-restricted user sees groups of their sites only, not site-less ones.
		{aRestricted, "", []string{w.gA1.ID}, 3},
		{aGroupOnly, "", []string{w.gA1.ID}, 3},
		{pxAdmin, "?orgId=" + w.a.ID, []string{w.gA1.ID, w.gA2.ID, w.gA.ID}, 4},
		{pxSelected, "?orgId=" + w.a.ID, []string{w.gA1.ID, w.gA2.ID, w.gA.ID}, 4},
		{sysAdmin, "?orgId=" + w.c.ID, []string{w.gC.ID}, 4},
		{bAdmin, "", []string{w.gB.ID}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.caller+tc.query, func(t *testing.T) {
			res := w.call(t, w.sites, http.MethodGet, groups+tc.query, tc.caller, nil)
			sameIDs(t, res, tc.want...)
			exactly(t, res, tc.calls)
		})
	}
	t.Run("shape", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, groups, aAdmin, nil), http.StatusOK)
		var list struct {
			Data []map[string]any `json:"data"`
		}
		res.Decode(t, &list)
		for _, g := range list.Data {
			if g["orgId"] != w.a.ID || g["name"] == nil || g["createdAt"] == nil || len(g) != 5 {
				t.Fatalf("group %v", g)
			}
			if g["id"] == w.gA.ID && g["siteId"] != nil || g["id"] == w.gA1.ID && g["siteId"] != w.a1.ID {
				t.Fatalf("group %v", g)
			}
		}
	})
	t.Run("partner without orgId", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodGet, groups, pxAdmin, nil), "orgId")
	})
	t.Run("out of reach is 404", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"?orgId="+w.a.ID, bAdmin, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"?orgId="+w.a.ID, pyAdmin, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"?orgId="+w.b.ID, pxSelected, nil))
	})
	t.Run("without devices:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodGet, groups, aViewerWithOrgRead(t, w), nil))
	})
}

func TestCreateDeviceGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("in a site", func(t *testing.T) {
		before := w.org(t, w.a.ID).GroupCount
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPost, groups, aTech, map[string]any{"siteId": w.a2.ID, "name": "Servers"}), http.StatusCreated)
		exactly(t, res, 2)
		var g tenant.DeviceGroup
		res.Decode(t, &g)
		if g.OrgID != w.a.ID || g.SiteID == nil || *g.SiteID != w.a2.ID || g.Name != "Servers" || g.CreatedAt == "" {
			t.Fatalf("created %+v", g)
		}
		if n := w.org(t, w.a.ID).GroupCount; n != before+1 {
			t.Fatalf("org groupCount %d, want %d", n, before+1)
		}
		if st, _ := w.store().Site(t.Context(), w.a.ID, w.a2.ID); st.GroupCount != 2 {
			t.Fatalf("site groupCount %d, want 2", st.GroupCount)
		}
		audited(t, w, "ORG#"+w.a.ID, "device_group.create", g.ID)
	})
	t.Run("without a site, partner caller", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPost, groups, pxAdmin, map[string]any{"orgId": w.b.ID, "name": "Laptops"}), http.StatusCreated)
		exactly(t, res, 2)
		if res.JSON(t)["siteId"] != nil {
			t.Fatalf("created %s", res.Body)
		}
	})
	t.Run("restricted user within their site", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.sites, http.MethodPost, groups, aRestricted, map[string]any{"siteId": w.a1.ID, "name": "Mine"}), http.StatusCreated)
	})
	t.Run("restricted user without a site", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPost, groups, aRestricted, map[string]any{"name": "Loose"}))
	})
	t.Run("restricted user in another site", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodPost, groups, aRestricted, map[string]any{"siteId": w.a2.ID, "name": "Theirs"}))
	})
	t.Run("device-group-restricted user", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPost, groups, aGroupOnly, map[string]any{"siteId": w.a1.ID, "name": "More"}))
	})
	t.Run("site of another organization", func(t *testing.T) {
		before := w.org(t, w.a.ID).GroupCount
		res := w.call(t, w.sites, http.MethodPost, groups, aAdmin, map[string]any{"siteId": w.b1.ID, "name": "Cross"})
		if notFound(t, res); res.JSON(t)["error"] != "Site not found" {
			t.Fatalf("answer %s", res.Body)
		}
		notFound(t, w.call(t, w.sites, http.MethodPost, groups, pxAdmin, map[string]any{"orgId": w.a.ID, "siteId": w.c1.ID, "name": "Cross"}))
		notFound(t, w.call(t, w.sites, http.MethodPost, groups, aAdmin, map[string]any{"siteId": uuid.NewString(), "name": "Cross"}))
		if w.org(t, w.a.ID).GroupCount != before {
			t.Fatal("a refused create counted a group")
		}
	})
	t.Run("organizations out of reach are 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodPost, groups, caller, map[string]any{"orgId": w.a.ID, "name": "Intruder"})
			notFound(t, res)
			fixture.Budget(t, res, 3)
		}
		notFound(t, w.call(t, w.sites, http.MethodPost, groups, pxSelected, map[string]any{"orgId": w.b.ID, "name": "Intruder"}))
	})
	for name, tc := range map[string]struct {
		caller string
		body   any
		field  string
	}{
		"partner without orgId": {pxAdmin, map[string]any{"name": "X"}, "orgId"},
		"malformed siteId":      {aAdmin, map[string]any{"name": "X", "siteId": "abc"}, "siteId"},
		"name missing":          {aAdmin, map[string]any{"siteId": "00000000-0000-4000-8000-000000000000"}, "name"},
		"unknown field":         {aAdmin, map[string]any{"name": "X", "site": "a"}, "site"},
	} {
		t.Run(name, func(t *testing.T) {
			invalid(t, w.call(t, w.sites, http.MethodPost, groups, tc.caller, tc.body), tc.field)
		})
	}
	t.Run("without devices:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPost, groups, aViewer, map[string]any{"name": "X"}))
		forbidden(t, w.call(t, w.sites, http.MethodPost, groups, pxViewer, map[string]any{"orgId": w.a.ID, "name": "X"}))
	})
}

func TestGetDeviceGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		caller string
		calls  int
	}{{aAdmin, 2}, {aRestricted, 2}, {aGroupOnly, 2}, {sysAdmin, 2}, {pxAdmin, 3}, {pxSelected, 3}} {
		t.Run(tc.caller, func(t *testing.T) {
			res := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA1.ID, tc.caller, nil), http.StatusOK)
			exactly(t, res, tc.calls)
			if got := res.JSON(t); got["id"] != w.gA1.ID || got["siteId"] != w.a1.ID || got["deviceCount"] != nil {
				t.Fatalf("group %v", got)
			}
		})
	}
	t.Run("out of reach is 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA1.ID, caller, nil))
		}
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gB.ID, pxSelected, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA2.ID, aRestricted, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA.ID, aRestricted, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA2.ID, aGroupOnly, nil))
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodGet, groups+"/g1", sysAdmin, nil), "id")
	})
	t.Run("without devices:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA1.ID, aViewerWithOrgRead(t, w), nil))
	})
}

func TestDeleteDeviceGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("group in a site", func(t *testing.T) {
		orgBefore := w.org(t, w.a.ID).GroupCount
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gA2.ID, aTech, nil), http.StatusOK)
		exactly(t, res, 3)
		if res.JSON(t)["success"] != true {
			t.Fatalf("answer %s", res.Body)
		}
		if n := w.org(t, w.a.ID).GroupCount; n != orgBefore-1 {
			t.Fatalf("org groupCount %d, want %d", n, orgBefore-1)
		}
		if st, _ := w.store().Site(t.Context(), w.a.ID, w.a2.ID); st.GroupCount != 0 {
			t.Fatalf("site groupCount %d", st.GroupCount)
		}
		notFound(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA2.ID, aAdmin, nil))
		audited(t, w, "ORG#"+w.a.ID, "device_group.delete", w.gA2.ID)
		// The site is empty now, so it can go.
		fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+w.a2.ID, aAdmin, nil), http.StatusOK)
	})
	t.Run("partner caller", func(t *testing.T) {
		exactly(t, fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gB.ID, pxAdmin, nil), http.StatusOK), 3)
	})
	t.Run("group with devices is 409", func(t *testing.T) {
		g := w.group(t, aAdmin, w.a.ID, "", "Busy")
		if err := w.env.Store.Do(t.Context(), tenant.CountGroup(w.a.ID, g.ID, 2)); err != nil {
			t.Fatal(err)
		}
		res := w.call(t, w.sites, http.MethodDelete, groups+"/"+g.ID, aAdmin, nil)
		body := expectError(t, res, http.StatusConflict, "conflict")
		if d, _ := body["details"].(map[string]any); d["deviceCount"] != 2.0 {
			t.Fatalf("answer %s", res.Body)
		}
		exactly(t, res, 2)
	})
	t.Run("device-group-restricted user", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gA1.ID, aGroupOnly, nil))
	})
	t.Run("out of reach is 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gA.ID, caller, nil)
			notFound(t, res)
			fixture.Budget(t, res, 4)
		}
		notFound(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gA.ID, aRestricted, nil))
		notFound(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gC.ID, pxSelected, nil))
		if _, err := w.store().Group(t.Context(), w.a.ID, w.gA.ID); err != nil {
			t.Fatalf("a 404 deleted the group: %v", err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodDelete, groups+"/%20", sysAdmin, nil), "id")
	})
	t.Run("without devices:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodDelete, groups+"/"+w.gA.ID, aViewer, nil))
	})
}

func TestUpdateDeviceGroup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	siteGroups := func(t *testing.T, orgID, siteID string) int {
		t.Helper()
		st, err := w.store().Site(t.Context(), orgID, siteID)
		if err != nil {
			t.Fatal(err)
		}
		return st.GroupCount
	}

	t.Run("rename and move between sites, counts follow", func(t *testing.T) {
		a1, a2 := siteGroups(t, w.a.ID, w.a1.ID), siteGroups(t, w.a.ID, w.a2.ID)
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA2.ID, aAdmin,
			map[string]any{"name": "  Moved  ", "siteId": w.a1.ID}), http.StatusOK)
		exactly(t, res, 3)
		var g tenant.DeviceGroup
		res.Decode(t, &g)
		if g.ID != w.gA2.ID || g.Name != "Moved" || g.SiteID == nil || *g.SiteID != w.a1.ID || g.OrgID != w.a.ID {
			t.Fatalf("updated %+v", g)
		}
		if siteGroups(t, w.a.ID, w.a1.ID) != a1+1 || siteGroups(t, w.a.ID, w.a2.ID) != a2-1 {
			t.Fatal("site groupCounts did not follow the move")
		}
		got := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, groups+"/"+w.gA2.ID, aAdmin, nil), http.StatusOK).JSON(t)
		if got["name"] != "Moved" || got["siteId"] != w.a1.ID {
			t.Fatalf("stored %v", got)
		}
		audited(t, w, "ORG#"+w.a.ID, "device_group.update", w.gA2.ID)
	})
	t.Run("detach from its site with null, attach again", func(t *testing.T) {
		a1 := siteGroups(t, w.a.ID, w.a1.ID)
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA1.ID, aAdmin, map[string]any{"siteId": nil}), http.StatusOK)
		if res.JSON(t)["siteId"] != nil || siteGroups(t, w.a.ID, w.a1.ID) != a1-1 {
			t.Fatalf("detached %s", res.Body)
		}
		fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA1.ID, aAdmin, map[string]any{"siteId": w.a1.ID}), http.StatusOK)
		if siteGroups(t, w.a.ID, w.a1.ID) != a1 {
			t.Fatal("attach did not count the group")
		}
	})
	t.Run("partner caller", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gB.ID, pxAdmin, map[string]any{"name": "B laptops"}), http.StatusOK)
		exactly(t, res, 3)
	})
	t.Run("validation", func(t *testing.T) {
		res := w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{})
		if fixture.Expect(t, res, http.StatusBadRequest); res.JSON(t)["error"] != "No updates provided" {
			t.Fatalf("answer %s", res.Body)
		}
		invalid(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"name": ""}), "name")
		invalid(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"siteId": "nope"}), "siteId")
		invalid(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"siteId": 7}), "siteId")
		invalid(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"orgId": w.a.ID}), "orgId")
		invalid(t, w.call(t, w.sites, http.MethodPatch, groups+"/nope", aAdmin, map[string]any{"name": "x"}), "id")
	})
	t.Run("tenancy", func(t *testing.T) {
		// Another tenant's group, a site of another organization, an unknown site: 404.
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gB.ID, aAdmin, map[string]any{"name": "Mine"}))
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gC.ID, pxAdmin, map[string]any{"name": "Mine"}))
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, pxSelected, map[string]any{"siteId": w.b1.ID}))
		res := w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"siteId": w.b1.ID})
		if notFound(t, res); res.JSON(t)["error"] != "Site not found" {
			t.Fatalf("answer %s", res.Body)
		}
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aAdmin, map[string]any{"siteId": uuid.NewString()}))
		if g, _ := w.store().Group(t.Context(), w.a.ID, w.gA.ID); g.SiteID != nil {
			t.Fatalf("a refused move changed the group: %+v", g)
		}
	})
	t.Run("restrictions and permissions", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aGroupOnly, map[string]any{"name": "x"}))
		forbidden(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aDevicesOnly, map[string]any{"name": "x"}))
		// A site-restricted user sees only groups of their sites, and cannot move one out of them.
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA.ID, aRestricted, map[string]any{"name": "x"}))
		notFound(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA1.ID, aRestricted, map[string]any{"siteId": w.a2.ID}))
		forbidden(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA1.ID, aRestricted, map[string]any{"siteId": nil}))
		fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA1.ID, aRestricted, map[string]any{"name": "Mine"}), http.StatusOK)
	})
}
