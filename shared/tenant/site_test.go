package tenant_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

const sites = "/api/v1/sites"

func TestListSites(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cases := []struct {
		caller, query string
		want          []string
		calls         int
	}{
		{aAdmin, "", []string{w.a1.ID, w.a2.ID}, 3},
		{aViewer, "?orgId=" + w.a.ID, []string{w.a1.ID, w.a2.ID}, 3},
		{aRestricted, "", []string{w.a1.ID}, 3},
		{pxAdmin, "?orgId=" + w.a.ID, []string{w.a1.ID, w.a2.ID}, 4},
		{pxSelected, "?orgId=" + w.a.ID, []string{w.a1.ID, w.a2.ID}, 4},
		{pxViewer, "?orgId=" + w.b.ID, []string{w.b1.ID}, 4},
		{sysAdmin, "?orgId=" + w.c.ID, []string{w.c1.ID}, 4},
		{pyAdmin, "?orgId=" + w.c.ID, []string{w.c1.ID}, 4},
	}
	for _, tc := range cases {
		t.Run(tc.caller+tc.query, func(t *testing.T) {
			res := w.call(t, w.sites, http.MethodGet, sites+tc.query, tc.caller, nil)
			sameIDs(t, res, tc.want...)
			exactly(t, res, tc.calls)
		})
	}
	t.Run("shape", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites+"?limit=1", aAdmin, nil), http.StatusOK)
		var list struct {
			Data       []map[string]any `json:"data"`
			Pagination struct{ Page, Limit, Total int }
		}
		res.Decode(t, &list)
		got := list.Data[0]
		if list.Pagination.Total != 2 || got["id"] != w.a1.ID || got["orgId"] != w.a.ID || got["name"] != "A one" ||
			got["timezone"] != "UTC" || got["createdAt"] == nil || got["updatedAt"] == nil || len(got) != 6 {
			t.Fatalf("list %+v", list)
		}
	})
	t.Run("partner without orgId", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodGet, sites, pxAdmin, nil), "orgId")
	})
	t.Run("system without orgId", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites, sysAdmin, nil), http.StatusForbidden)
		if res.JSON(t)["error"] != "Partner or organization context required" {
			t.Fatalf("body %s", res.Body)
		}
	})
	t.Run("malformed orgId", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId=abc", aAdmin, nil), "orgId")
	})
	t.Run("system without orgId", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPost, sites, sysAdmin, map[string]any{"name": "X"}), http.StatusForbidden)
		if res.JSON(t)["error"] != "Partner or organization context required" {
			t.Fatalf("body %s", res.Body)
		}
	})
	t.Run("organizations out of reach are 404", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+w.a.ID, bAdmin, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+w.a.ID, pyAdmin, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+w.b.ID, pxSelected, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+w.a.ID, pxNone, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("without sites:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodGet, sites, aDevicesOnly, nil))
	})
}

func TestCreateSite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("organization admin, own organization by default", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPost, sites, aAdmin, map[string]any{"name": "HQ", "timezone": "Europe/Berlin"}), http.StatusCreated)
		exactly(t, res, 2)
		var st tenant.Site
		res.Decode(t, &st)
		if st.OrgID != w.a.ID || st.Name != "HQ" || st.Timezone != "Europe/Berlin" || st.CreatedAt != "2026-11-01T09:00:00.000Z" {
			t.Fatalf("created %+v", st)
		}
		if n := w.org(t, w.a.ID).SiteCount; n != 3 {
			t.Fatalf("siteCount %d, want 3", n)
		}
		audited(t, w, "ORG#"+w.a.ID, "site.create", st.ID)
		fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites+"/"+st.ID, aAdmin, nil), http.StatusOK)
	})
	t.Run("timezone defaults to UTC", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPost, sites, pxAdmin, map[string]any{"orgId": w.b.ID, "name": "Depot"}), http.StatusCreated)
		exactly(t, res, 2)
		if res.JSON(t)["timezone"] != "UTC" || res.JSON(t)["orgId"] != w.b.ID {
			t.Fatalf("created %s", res.Body)
		}
	})
	t.Run("system admin", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.sites, http.MethodPost, sites, sysAdmin, map[string]any{"orgId": w.c.ID, "name": "Lab"}), http.StatusCreated)
	})
	for name, tc := range map[string]struct {
		caller string
		body   any
		field  string
	}{
		"partner without orgId":  {pxAdmin, map[string]any{"name": "X"}, "orgId"},
		"malformed orgId":        {aAdmin, map[string]any{"orgId": "1", "name": "X"}, "orgId"},
		"name missing":           {aAdmin, map[string]any{}, "name"},
		"name too long":          {aAdmin, map[string]any{"name": strings.Repeat("n", 256)}, "name"},
		"unknown timezone":       {aAdmin, map[string]any{"name": "X", "timezone": "Mars/Olympus"}, "timezone"},
		"empty timezone":         {aAdmin, map[string]any{"name": "X", "timezone": ""}, "timezone"},
		"Local is not a zone":    {aAdmin, map[string]any{"name": "X", "timezone": "Local"}, "timezone"},
		"path is not a zone":     {aAdmin, map[string]any{"name": "X", "timezone": "../../etc/passwd"}, "timezone"},
		"unknown field":          {aAdmin, map[string]any{"name": "X", "tz": "UTC"}, "tz"},
		"timezone of wrong type": {aAdmin, map[string]any{"name": "X", "timezone": 2}, "timezone"},
	} {
		t.Run(name, func(t *testing.T) {
			invalid(t, w.call(t, w.sites, http.MethodPost, sites, tc.caller, tc.body), tc.field)
		})
	}
	t.Run("organizations out of reach are 404", func(t *testing.T) {
		before := w.org(t, w.a.ID).SiteCount
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodPost, sites, caller, map[string]any{"orgId": w.a.ID, "name": "Intruder"})
			notFound(t, res)
			fixture.Budget(t, res, 3)
		}
		notFound(t, w.call(t, w.sites, http.MethodPost, sites, pxSelected, map[string]any{"orgId": w.b.ID, "name": "Intruder"}))
		notFound(t, w.call(t, w.sites, http.MethodPost, sites, sysAdmin, map[string]any{"orgId": uuid.NewString(), "name": "Nowhere"}))
		if w.org(t, w.a.ID).SiteCount != before {
			t.Fatal("a refused create counted a site")
		}
	})
	t.Run("site-restricted user", func(t *testing.T) {
		res := w.call(t, w.sites, http.MethodPost, sites, aRestricted, map[string]any{"name": "Mine"})
		forbidden(t, res)
		if res.JSON(t)["error"] != tenant.ErrSiteRestricted.Message {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("without sites:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPost, sites, aTech, map[string]any{"name": "X"}))
		forbidden(t, w.call(t, w.sites, http.MethodPost, sites, pxViewer, map[string]any{"orgId": w.a.ID, "name": "X"}))
	})
}

func TestGetSite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, tc := range []struct {
		caller string
		calls  int
	}{{aAdmin, 2}, {aViewer, 2}, {aRestricted, 2}, {sysAdmin, 2}, {pxAdmin, 3}, {pxSelected, 3}} {
		t.Run(tc.caller, func(t *testing.T) {
			res := fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites+"/"+w.a1.ID, tc.caller, nil), http.StatusOK)
			exactly(t, res, tc.calls)
			if got := res.JSON(t); got["id"] != w.a1.ID || got["orgId"] != w.a.ID || got["groupCount"] != nil {
				t.Fatalf("site %v", got)
			}
		})
	}
	t.Run("out of reach is 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodGet, sites+"/"+w.a1.ID, caller, nil)
			notFound(t, res)
			fixture.Budget(t, res, 4)
		}
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"/"+w.b1.ID, pxSelected, nil))
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"/"+w.a2.ID, aRestricted, nil))
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodGet, sites+"/nope", sysAdmin, nil), "id")
	})
	t.Run("without sites:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodGet, sites+"/"+w.a1.ID, aDevicesOnly, nil))
	})
}

func TestUpdateSite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	path := sites + "/" + w.a1.ID

	t.Run("rename and move timezone", func(t *testing.T) {
		w.env.Clock.Advance(61 * time.Second)
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, path, aAdmin,
			map[string]any{"name": "A first", "timezone": "America/New_York"}), http.StatusOK)
		exactly(t, res, 3)
		var st tenant.Site
		res.Decode(t, &st)
		if st.Name != "A first" || st.Timezone != "America/New_York" || st.UpdatedAt != "2026-11-01T09:01:01.000Z" || st.CreatedAt != w.a1.CreatedAt {
			t.Fatalf("updated %+v", st)
		}
		got, err := w.store().Site(t.Context(), w.a.ID, w.a1.ID)
		if err != nil || got.Name != "A first" || got.Timezone != "America/New_York" {
			t.Fatalf("stored %+v %v", got, err)
		}
		audited(t, w, "ORG#"+w.a.ID, "site.update", w.a1.ID)
	})
	t.Run("partner caller", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, path, pxAdmin, map[string]any{"timezone": "Asia/Tokyo"}), http.StatusOK)
		exactly(t, res, 3)
		if res.JSON(t)["name"] != "A first" {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("restricted user on their own site", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, path, aRestricted, map[string]any{"name": "A one"}), http.StatusOK)
	})
	t.Run("no updates", func(t *testing.T) {
		expectError(t, w.call(t, w.sites, http.MethodPatch, path, aAdmin, map[string]any{}), http.StatusBadRequest, "bad_request")
	})
	t.Run("bad timezone", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodPatch, path, aAdmin, map[string]any{"timezone": "Nowhere/Town"}), "timezone")
	})
	t.Run("bad name", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodPatch, path, aAdmin, map[string]any{"name": strings.Repeat("a", 300)}), "name")
	})
	t.Run("unknown field", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodPatch, path, aAdmin, map[string]any{"orgId": w.b.ID}), "orgId")
	})
	t.Run("out of reach is 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodPatch, path, caller, map[string]any{"name": "Taken"})
			notFound(t, res)
			fixture.Budget(t, res, 4)
		}
		notFound(t, w.call(t, w.sites, http.MethodPatch, sites+"/"+w.b1.ID, pxSelected, map[string]any{"name": "Taken"}))
		notFound(t, w.call(t, w.sites, http.MethodPatch, sites+"/"+w.a2.ID, aRestricted, map[string]any{"name": "Taken"}))
		if got, _ := w.store().Site(t.Context(), w.a.ID, w.a1.ID); got.Name != "A one" {
			t.Fatalf("a 404 changed the site: %+v", got)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodPatch, sites+"/"+uuid.NewString(), sysAdmin, map[string]any{"name": "X"}))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodPatch, sites+"/1", sysAdmin, map[string]any{"name": "X"}), "id")
	})
	t.Run("without sites:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodPatch, path, aTech, map[string]any{"name": "X"}))
	})
}

func TestDeleteSite(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("empty site", func(t *testing.T) {
		st := fixture.Site(t, w.env, w.a.ID, "Temp")
		before := w.org(t, w.a.ID).SiteCount
		res := fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+st.ID, aAdmin, nil), http.StatusOK)
		exactly(t, res, 3)
		if res.JSON(t)["success"] != true {
			t.Fatalf("answer %s", res.Body)
		}
		if n := w.org(t, w.a.ID).SiteCount; n != before-1 {
			t.Fatalf("siteCount %d, want %d", n, before-1)
		}
		notFound(t, w.call(t, w.sites, http.MethodGet, sites+"/"+st.ID, aAdmin, nil))
		audited(t, w, "ORG#"+w.a.ID, "site.delete", st.ID)
	})
	t.Run("partner caller", func(t *testing.T) {
		st := fixture.Site(t, w.env, w.b.ID, "Temp")
		exactly(t, fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+st.ID, pxAdmin, nil), http.StatusOK), 3)
	})
	t.Run("site with device groups is 409", func(t *testing.T) {
		res := w.call(t, w.sites, http.MethodDelete, sites+"/"+w.a1.ID, aAdmin, nil)
		body := expectError(t, res, http.StatusConflict, "conflict")
		if d, _ := body["details"].(map[string]any); d["deviceGroupCount"] != 1.0 {
			t.Fatalf("answer %s", res.Body)
		}
		exactly(t, res, 2)
	})
	t.Run("site with devices is 409", func(t *testing.T) {
		st := fixture.Site(t, w.env, w.a.ID, "Devices")
		if err := w.env.Store.Do(t.Context(), tenant.CountSite(w.a.ID, st.ID, tenant.CountDevices, 1)); err != nil {
			t.Fatal(err)
		}
		expectError(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+st.ID, aAdmin, nil), http.StatusConflict, "conflict")
	})
	t.Run("site-restricted user", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+w.a1.ID, aRestricted, nil))
	})
	t.Run("out of reach is 404", func(t *testing.T) {
		st := fixture.Site(t, w.env, w.a.ID, "Keep")
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			res := w.call(t, w.sites, http.MethodDelete, sites+"/"+st.ID, caller, nil)
			notFound(t, res)
			fixture.Budget(t, res, 4)
		}
		notFound(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+w.b1.ID, pxSelected, nil))
		if _, err := w.store().Site(t.Context(), w.a.ID, st.ID); err != nil {
			t.Fatalf("a 404 deleted the site: %v", err)
		}
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.sites, http.MethodDelete, sites+"/x", sysAdmin, nil), "id")
	})
	t.Run("without sites:delete", func(t *testing.T) {
		forbidden(t, w.call(t, w.sites, http.MethodDelete, sites+"/"+w.a2.ID, aTech, nil))
	})
}

func (w *world) store() tenant.Store { return tenant.Store{St: w.env.Store} }
