package tenant_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

const orgs = "/api/v1/organizations"

func TestListOrganizations(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	cases := []struct {
		caller string
		want   []string
		calls  int
	}{
		{sysAdmin, []string{w.a.ID, w.b.ID, w.c.ID}, 5},
		{pxAdmin, []string{w.a.ID, w.b.ID}, 3},
		{pxViewer, []string{w.a.ID, w.b.ID}, 3},
		{pxSelected, []string{w.a.ID}, 3},
		{pxNone, nil, 1},
		{pyAdmin, []string{w.c.ID}, 3},
		{aAdmin, []string{w.a.ID}, 3},
		{bAdmin, []string{w.b.ID}, 3},
	}
	for _, tc := range cases {
		t.Run(tc.caller, func(t *testing.T) {
			res := w.call(t, w.orgs, http.MethodGet, orgs, tc.caller, nil)
			sameIDs(t, res, tc.want...)
			exactly(t, res, tc.calls)
		})
	}

	t.Run("shape and pagination", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, orgs+"?page=2&limit=2", sysAdmin, nil), http.StatusOK)
		var list struct {
			Data       []map[string]any `json:"data"`
			Pagination struct{ Page, Limit, Total int }
		}
		res.Decode(t, &list)
		if list.Pagination.Page != 2 || list.Pagination.Limit != 2 || list.Pagination.Total != 3 || len(list.Data) != 1 {
			t.Fatalf("pagination %+v with %d items", list.Pagination, len(list.Data))
		}
		// Sorted by name: Alpha, Bravo | Charlie.
		got := list.Data[0]
		if got["id"] != w.c.ID || got["partnerId"] != w.py.ID || got["name"] != "Charlie" || got["status"] != "active" ||
			got["createdAt"] == nil || got["updatedAt"] == nil || len(got) != 6 {
			t.Fatalf("organization %v", got)
		}
	})
	t.Run("bad limit", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodGet, orgs+"?limit=101", sysAdmin, nil), "limit")
	})
	t.Run("without organizations:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodGet, orgs, aTech, nil))
	})
	t.Run("without a token", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, orgs, "", nil), http.StatusUnauthorized)
	})
}

func TestCreateOrganization(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("partner admin", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPost, orgs, pxAdmin, map[string]any{"name": "  Delta  ", "status": "trial"}), http.StatusCreated)
		exactly(t, res, 2)
		var o tenant.Organization
		res.Decode(t, &o)
		if o.PartnerID != w.px.ID || o.Name != "Delta" || o.Status != "trial" || o.CreatedAt != "2026-11-01T09:00:00.000Z" {
			t.Fatalf("created %+v", o)
		}
		rec := audited(t, w, "PARTNER#"+w.px.ID, "organization.create", o.ID)
		if rec.ResourceName != "Delta" || rec.Actor.ID == "" {
			t.Fatalf("audit %+v", rec)
		}
		sameIDs(t, w.call(t, w.orgs, http.MethodGet, orgs, pxAdmin, nil), w.a.ID, w.b.ID, o.ID)
		fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+o.ID, pxAdmin, nil), http.StatusOK)
	})
	t.Run("partner admin naming its own partner", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPost, orgs, pxAdmin, map[string]any{"name": "Echo", "partnerId": w.px.ID}), http.StatusCreated)
		if res.JSON(t)["status"] != "active" {
			t.Fatalf("default status: %s", res.Body)
		}
	})
	t.Run("system admin names the partner", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPost, orgs, sysAdmin, map[string]any{"name": "Foxtrot", "partnerId": w.py.ID}), http.StatusCreated)
		exactly(t, res, 2)
		if res.JSON(t)["partnerId"] != w.py.ID {
			t.Fatalf("created %s", res.Body)
		}
	})
	t.Run("system admin without partnerId", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPost, orgs, sysAdmin, map[string]any{"name": "Golf"}), "partnerId")
	})
	t.Run("system admin with a malformed partnerId", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPost, orgs, sysAdmin, map[string]any{"name": "Golf", "partnerId": "nope"}), "partnerId")
	})
	t.Run("system admin with an unknown partner", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodPost, orgs, sysAdmin, map[string]any{"name": "Golf", "partnerId": uuid.NewString()}))
	})
	t.Run("partner admin naming another partner", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodPost, orgs, pxAdmin, map[string]any{"name": "Golf", "partnerId": w.py.ID}))
	})
	for name, body := range map[string]any{
		"name missing":   map[string]any{},
		"name blank":     map[string]any{"name": "   "},
		"name too long":  map[string]any{"name": strings.Repeat("x", 256)},
		"name not text":  map[string]any{"name": 7},
		"unknown field":  map[string]any{"name": "Golf", "nmae": "typo"},
		"bad status":     map[string]any{"name": "Golf", "status": "closed"},
		"not an object":  "[]",
		"malformed JSON": "{",
	} {
		t.Run(name, func(t *testing.T) {
			res := w.call(t, w.orgs, http.MethodPost, orgs, pxAdmin, body)
			field := map[string]string{"unknown field": "nmae", "bad status": "status", "not an object": "body", "malformed JSON": "body"}[name]
			if field == "" {
				field = "name"
			}
			invalid(t, res, field)
		})
	}
	t.Run("255 characters is fine", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.orgs, http.MethodPost, orgs, pxAdmin, map[string]any{"name": strings.Repeat("é", 255)}), http.StatusCreated)
	})
	t.Run("organization scope", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodPost, orgs, aAdmin, map[string]any{"name": "Golf"}))
	})
	t.Run("without organizations:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodPost, orgs, pxViewer, map[string]any{"name": "Golf"}))
	})
	t.Run("selected access", func(t *testing.T) {
		res := w.call(t, w.orgs, http.MethodPost, orgs, pxSelected, map[string]any{"name": "Golf"})
		if forbidden(t, res); res.JSON(t)["error"] != "Full partner organization access required" {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("without mfa", func(t *testing.T) {
		mfaRequired(t, w.call(t, w.orgs, http.MethodPost, orgs, pxNoMFA, map[string]any{"name": "Golf"}))
	})
	t.Run("force-mfa role without an authenticator", func(t *testing.T) {
		tok := fixture.User(t, w.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerAdminID,
			OrgAccess: authz.OrgAccessAll, MFA: true}).Token
		res := fixture.Do(t, w.orgs, fixture.Request{Method: http.MethodPost, Path: orgs, Token: tok, Body: map[string]any{"name": "Golf"}})
		fixture.Expect(t, res, http.StatusPreconditionRequired)
	})
}

func TestGetOrganization(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, caller := range []string{sysAdmin, pxAdmin, pxSelected, pxViewer, aAdmin} {
		t.Run(caller, func(t *testing.T) {
			res := fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+w.a.ID, caller, nil), http.StatusOK)
			exactly(t, res, 2)
			if got := res.JSON(t); got["id"] != w.a.ID || got["name"] != "Alpha" || got["siteCount"] != nil {
				t.Fatalf("organization %v", got)
			}
		})
	}
	for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
		t.Run(caller+" gets 404", func(t *testing.T) {
			res := w.call(t, w.orgs, http.MethodGet, orgs+"/"+w.a.ID, caller, nil)
			notFound(t, res)
			fixture.Budget(t, res, 3)
		})
	}
	t.Run("selected access, other organization", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+w.b.ID, pxSelected, nil))
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodGet, orgs+"/not-a-uuid", sysAdmin, nil), "id")
	})
	t.Run("without organizations:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+w.a.ID, aTech, nil))
	})
}

func TestUpdateOrganization(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	path := orgs + "/" + w.a.ID

	t.Run("rename by the organization's admin", func(t *testing.T) {
		w.env.Clock.Advance(90 * time.Second)
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPatch, path, aAdmin, map[string]any{"name": "Alpha Prime"}), http.StatusOK)
		exactly(t, res, 3)
		var o tenant.Organization
		res.Decode(t, &o)
		if o.Name != "Alpha Prime" || o.Status != "active" || o.UpdatedAt != "2026-11-01T09:01:30.000Z" || o.CreatedAt != w.a.CreatedAt {
			t.Fatalf("updated %+v", o)
		}
		if got := w.org(t, w.a.ID); got.Name != "Alpha Prime" || got.SiteCount != 2 {
			t.Fatalf("stored %+v", got)
		}
		rec := audited(t, w, "ORG#"+w.a.ID, "organization.update", w.a.ID)
		if ch, _ := rec.Details["changes"].(map[string]any); ch["name"] == nil {
			t.Fatalf("audit details %v", rec.Details)
		}
	})
	t.Run("status by the partner", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPatch, path, pxAdmin, map[string]any{"status": "suspended"}), http.StatusOK)
		if res.JSON(t)["status"] != "suspended" || w.org(t, w.a.ID).Status != "suspended" {
			t.Fatalf("answer %s", res.Body)
		}
		fixture.Expect(t, w.call(t, w.orgs, http.MethodPatch, path, sysAdmin, map[string]any{"status": "active"}), http.StatusOK)
	})
	t.Run("status by the organization itself", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodPatch, path, aAdmin, map[string]any{"status": "trial"}))
	})
	t.Run("no updates", func(t *testing.T) {
		res := w.call(t, w.orgs, http.MethodPatch, path, aAdmin, map[string]any{})
		if expectError(t, res, http.StatusBadRequest, "bad_request")["error"] != "No updates provided" {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("bad status", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPatch, path, pxAdmin, map[string]any{"status": "gone"}), "status")
	})
	t.Run("blank name", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPatch, path, pxAdmin, map[string]any{"name": ""}), "name")
	})
	t.Run("unknown field", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPatch, path, pxAdmin, map[string]any{"partnerId": w.py.ID}), "partnerId")
	})
	t.Run("other tenants get 404", func(t *testing.T) {
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			notFound(t, w.call(t, w.orgs, http.MethodPatch, path, caller, map[string]any{"name": "Mine"}))
		}
		notFound(t, w.call(t, w.orgs, http.MethodPatch, orgs+"/"+w.b.ID, pxSelected, map[string]any{"name": "Mine"}))
		if w.org(t, w.a.ID).Name != "Alpha Prime" {
			t.Fatal("a 404 changed the organization")
		}
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodPatch, orgs+"/"+uuid.NewString(), sysAdmin, map[string]any{"name": "X"}))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodPatch, orgs+"/123", sysAdmin, map[string]any{"name": "X"}), "id")
	})
	t.Run("without organizations:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodPatch, path, aViewer, map[string]any{"name": "X"}))
		forbidden(t, w.call(t, w.orgs, http.MethodPatch, path, pxViewer, map[string]any{"name": "X"}))
	})
}

func TestDeleteOrganization(t *testing.T) {
	t.Parallel()
	w := newWorld(t)

	t.Run("empty organization", func(t *testing.T) {
		o := fixture.Org(t, w.env, w.px.ID, "Temp")
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+o.ID, pxAdmin, nil), http.StatusOK)
		exactly(t, res, 3)
		if res.JSON(t)["success"] != true {
			t.Fatalf("answer %s", res.Body)
		}
		notFound(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+o.ID, pxAdmin, nil))
		audited(t, w, "PARTNER#"+w.px.ID, "organization.delete", o.ID)
		notFound(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+o.ID, pxAdmin, nil))
	})
	t.Run("removes the security settings", func(t *testing.T) {
		o := fixture.Org(t, w.env, w.py.ID, "Temp")
		fixture.Expect(t, w.call(t, w.orgs, http.MethodPut, orgs+"/"+o.ID+"/security-settings", pyAdmin,
			map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"totp"}}), http.StatusOK)
		fixture.Expect(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+o.ID, sysAdmin, nil), http.StatusOK)
		var left []map[string]any
		if err := w.env.Store.AllInto(context.Background(), store.Query{PK: "ORG#" + o.ID}, &left); err != nil || len(left) != 0 {
			t.Fatalf("left behind %v (%v)", left, err)
		}
	})
	t.Run("with sites is 409", func(t *testing.T) {
		res := w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.a.ID, pxAdmin, nil)
		body := expectError(t, res, http.StatusConflict, "conflict")
		exactly(t, res, 2)
		if d, _ := body["details"].(map[string]any); d["siteCount"] != 2.0 || d["deviceGroupCount"] != 3.0 {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("with only a device group or a member is 409", func(t *testing.T) {
		fixture.Expect(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.b.ID, pxAdmin, nil), http.StatusConflict)
		fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, "/api/v1/sites/"+w.b1.ID, pxAdmin, nil), http.StatusOK)
		fixture.Expect(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.b.ID, pxAdmin, nil), http.StatusConflict)
		fixture.Expect(t, w.call(t, w.sites, http.MethodDelete, "/api/v1/device-groups/"+w.gB.ID, pxAdmin, nil), http.StatusOK)
		// B still has its member: users are not stranded by a delete.
		res := w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.b.ID, pxAdmin, nil)
		body := expectError(t, res, http.StatusConflict, "conflict")
		if d, _ := body["details"].(map[string]any); d["memberCount"] != 1.0 || d["siteCount"] != 0.0 || d["deviceGroupCount"] != 0.0 {
			t.Fatalf("answer %s", res.Body)
		}
	})
	t.Run("organization scope", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.a.ID, aAdmin, nil))
	})
	t.Run("without mfa", func(t *testing.T) {
		mfaRequired(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.a.ID, pxNoMFA, nil))
	})
	t.Run("without organizations:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.a.ID, pxViewer, nil))
	})
	t.Run("selected access", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+w.a.ID, pxSelected, nil))
	})
	t.Run("another partner's organization", func(t *testing.T) {
		o := fixture.Org(t, w.env, w.py.ID, "Theirs")
		notFound(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+o.ID, pxAdmin, nil))
		w.org(t, o.ID)
	})
	t.Run("unknown", func(t *testing.T) {
		notFound(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/"+uuid.NewString(), sysAdmin, nil))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodDelete, orgs+"/x", sysAdmin, nil), "id")
	})
}

func TestSecuritySettings(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	path := orgs + "/" + w.a.ID + "/security-settings"

	t.Run("defaults", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, path, aViewerWithOrgRead(t, w), nil), http.StatusOK)
		exactly(t, res, 2) // a custom role: its row comes in authentication's batch (session.RoleHint)
		if got := strings.TrimSpace(string(res.Body)); got != `{"requireMfa":false,"allowedMfaMethods":["totp","sms","passkey"]}` {
			t.Fatalf("defaults %s", got)
		}
		sec, err := tenant.Store{St: w.env.Store}.SecuritySettings(context.Background(), w.a.ID)
		if err != nil || sec.RequireMFA || len(sec.AllowedMFAMethods) != 3 {
			t.Fatalf("store defaults %+v %v", sec, err)
		}
	})
	t.Run("put and read back", func(t *testing.T) {
		res := fixture.Expect(t, w.call(t, w.orgs, http.MethodPut, path, aAdmin,
			map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"passkey", "totp"}}), http.StatusOK)
		exactly(t, res, 2)
		want := `{"requireMfa":true,"allowedMfaMethods":["totp","passkey"]}`
		if got := strings.TrimSpace(string(res.Body)); got != want {
			t.Fatalf("put answered %s", got)
		}
		if got := strings.TrimSpace(string(fixture.Expect(t, w.call(t, w.orgs, http.MethodGet, path, pxSelected, nil), http.StatusOK).Body)); got != want {
			t.Fatalf("read back %s", got)
		}
		sec, err := tenant.Store{St: w.env.Store}.SecuritySettings(context.Background(), w.a.ID)
		if err != nil || !sec.RequireMFA || strings.Join(sec.AllowedMFAMethods, ",") != "totp,passkey" {
			t.Fatalf("store %+v %v", sec, err)
		}
		rec := audited(t, w, "ORG#"+w.a.ID, "organization.security_settings.update", w.a.ID)
		if rec.Details["requireMfa"] != true {
			t.Fatalf("audit %+v", rec)
		}
	})
	t.Run("partner and system callers", func(t *testing.T) {
		body := map[string]any{"requireMfa": false, "allowedMfaMethods": []string{"sms"}}
		exactly(t, fixture.Expect(t, w.call(t, w.orgs, http.MethodPut, path, pxAdmin, body), http.StatusOK), 2)
		fixture.Expect(t, w.call(t, w.orgs, http.MethodPut, path, sysAdmin, body), http.StatusOK)
	})
	for name, tc := range map[string]struct {
		body  any
		field string
	}{
		"no methods":        {map[string]any{"requireMfa": true, "allowedMfaMethods": []string{}}, "allowedMfaMethods"},
		"methods missing":   {map[string]any{"requireMfa": true}, "allowedMfaMethods"},
		"unknown method":    {map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"totp", "email"}}, "allowedMfaMethods.1"},
		"repeated method":   {map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"sms", "sms"}}, "allowedMfaMethods.1"},
		"requireMfa absent": {map[string]any{"allowedMfaMethods": []string{"sms"}}, "requireMfa"},
		"requireMfa string": {map[string]any{"requireMfa": "yes", "allowedMfaMethods": []string{"sms"}}, "requireMfa"},
		"unknown field":     {map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"sms"}, "x": 1}, "x"},
	} {
		t.Run(name, func(t *testing.T) {
			invalid(t, w.call(t, w.orgs, http.MethodPut, path, aAdmin, tc.body), tc.field)
		})
	}
	t.Run("put without mfa", func(t *testing.T) {
		mfaRequired(t, w.call(t, w.orgs, http.MethodPut, path, aNoMFA, map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"sms"}}))
	})
	t.Run("put without organizations:write", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodPut, path, pxViewer, map[string]any{"requireMfa": true, "allowedMfaMethods": []string{"sms"}}))
	})
	t.Run("get without organizations:read", func(t *testing.T) {
		forbidden(t, w.call(t, w.orgs, http.MethodGet, path, aTech, nil))
	})
	t.Run("other tenants get 404", func(t *testing.T) {
		body := map[string]any{"requireMfa": false, "allowedMfaMethods": []string{"totp"}}
		for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
			notFound(t, w.call(t, w.orgs, http.MethodGet, path, caller, nil))
			res := w.call(t, w.orgs, http.MethodPut, path, caller, body)
			notFound(t, res)
			fixture.Budget(t, res, 3)
		}
		notFound(t, w.call(t, w.orgs, http.MethodPut, orgs+"/"+w.b.ID+"/security-settings", pxSelected, body))
		sec, _ := tenant.Store{St: w.env.Store}.SecuritySettings(context.Background(), w.a.ID)
		if strings.Join(sec.AllowedMFAMethods, ",") != "sms" {
			t.Fatalf("a 404 changed the settings: %+v", sec)
		}
	})
	t.Run("unknown organization", func(t *testing.T) {
		id := uuid.NewString()
		notFound(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+id+"/security-settings", sysAdmin, nil))
		notFound(t, w.call(t, w.orgs, http.MethodPut, orgs+"/"+id+"/security-settings", sysAdmin,
			map[string]any{"requireMfa": false, "allowedMfaMethods": []string{"totp"}}))
	})
	t.Run("malformed id", func(t *testing.T) {
		invalid(t, w.call(t, w.orgs, http.MethodGet, orgs+"/zz/security-settings", sysAdmin, nil), "id")
		invalid(t, w.call(t, w.orgs, http.MethodPut, orgs+"/zz/security-settings", sysAdmin,
			map[string]any{"requireMfa": false, "allowedMfaMethods": []string{"totp"}}), "id")
	})
}

// aViewerWithOrgRead is an organization caller holding only organizations:read.
func aViewerWithOrgRead(t *testing.T, w *world) string {
	t.Helper()
	rid := customRole(t, w.env, role.OrgOwner(w.a.ID), authz.ScopeOrg, authz.OrgsRead)
	w.tokens["org A reader"] = fixture.User(t, w.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.a.ID, RoleID: rid,
		RoleOwner: role.OrgOwner(w.a.ID)}).Token
	return "org A reader"
}

// TestTenancyListsPageByCursor: the organizations, sites and device-group
// lists read one page from their list index (name order, case-insensitive,
// then id) and follow pagination.nextCursor to the last page; a rename moves
// its row, as the list sorted in memory did.
func TestTenancyListsPageByCursor(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	walk := func(h http.Handler, path, who string) []string {
		t.Helper()
		var got []string
		for q := path + "limit=1"; ; {
			var list struct {
				Data []struct {
					ID string `json:"id"`
				} `json:"data"`
				Pagination struct {
					NextCursor string `json:"nextCursor"`
				} `json:"pagination"`
			}
			res := fixture.Expect(t, w.call(t, h, http.MethodGet, q, who, nil), http.StatusOK)
			res.Decode(t, &list)
			for _, d := range list.Data {
				got = append(got, d.ID)
			}
			if list.Pagination.NextCursor == "" {
				return got
			}
			if len(got) > 10 {
				t.Fatalf("%s as %s does not end: %v", path, who, got)
			}
			q = path + "limit=1&cursor=" + url.QueryEscape(list.Pagination.NextCursor)
		}
	}
	same := func(got []string, want ...string) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Fatalf("pages gave %v, want %v", got, want)
		}
	}
	same(walk(w.orgs, orgs+"?", sysAdmin), w.a.ID, w.b.ID, w.c.ID)
	same(walk(w.orgs, orgs+"?", pxAdmin), w.a.ID, w.b.ID)
	same(walk(w.orgs, orgs+"?", pxSelected), w.a.ID)
	same(walk(w.orgs, orgs+"?", aAdmin), w.a.ID)
	same(walk(w.sites, sites+"?orgId="+w.a.ID+"&", pxAdmin), w.a1.ID, w.a2.ID)
	same(walk(w.sites, sites+"?", aRestricted), w.a1.ID)
	same(walk(w.sites, groups+"?", aAdmin), w.gA.ID, w.gA1.ID, w.gA2.ID)
	same(walk(w.sites, groups+"?", aRestricted), w.gA1.ID)

	fixture.Expect(t, w.call(t, w.orgs, http.MethodPatch, orgs+"/"+w.b.ID, pxAdmin, map[string]any{"name": "aardvark"}), http.StatusOK)
	fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, sites+"/"+w.a2.ID, aAdmin, map[string]any{"name": "a ONE"}), http.StatusOK)
	fixture.Expect(t, w.call(t, w.sites, http.MethodPatch, groups+"/"+w.gA2.ID, aAdmin, map[string]any{"name": "Group 0"}), http.StatusOK)
	same(walk(w.orgs, orgs+"?", pxAdmin), w.b.ID, w.a.ID)
	want := []string{w.a1.ID, w.a2.ID} // "a one" twice: by id
	slices.Sort(want)
	same(walk(w.sites, sites+"?", aAdmin), want...)
	same(walk(w.sites, groups+"?", aAdmin), w.gA2.ID, w.gA.ID, w.gA1.ID)
}
