package auth_test

import (
	"context"
	"net/http"
	"os"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// keyAuth is a stand-in for the API-key authenticator (our own interface, not AWS).
type keyAuth struct{ seen string }

func (k *keyAuth) AuthenticateKey(_ context.Context, _ http.ResponseWriter, _ *http.Request, key string) (*authz.Principal, error) {
	k.seen = key
	return &authz.Principal{Kind: authz.KindAPIKey, APIKeyID: "k1", Scope: authz.ScopeOrg, OrgID: "o1",
		KeyScopes: []string{"*"}, Perms: authz.NewSet(authz.AdminAll)}, nil
}

// world is fixture's small world (one partner, one organization) with an
// organization admin, the stand-in key authenticator and a router of one
// route per access kind.
type world struct {
	*fixture.World
	keys   *keyAuth
	caller fixture.Caller
}

func newWorld(t *testing.T) *world {
	w := &world{World: fixture.NewSmallWorld(t, nil), keys: &keyAuth{}}
	w.Env.Auth.Keys = w.keys
	w.caller = fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	who := func(w http.ResponseWriter, r *http.Request) error {
		p, err := authz.Require(r.Context(), authz.DevicesRead)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, 200, map[string]any{"kind": p.Kind, "user": p.UserID, "mfa": p.MFA})
		return nil
	}
	rt := w.Env.Router()
	rt.Add(
		httpapi.Route{Method: "GET", Path: "/user", Access: httpapi.User, Handle: who},
		httpapi.Route{Method: "GET", Path: "/mfa", Access: httpapi.User, MFA: true, Handle: who},
		httpapi.Route{Method: "GET", Path: "/dual", Access: httpapi.UserOrKey, Handle: who},
		httpapi.Route{Method: "GET", Path: "/agent", Access: httpapi.Agent, Handle: who},
	)
	w.API = rt
	return w
}

func (w *world) get(t *testing.T, path, token, key string) fixture.Response {
	return fixture.Do(t, w.API, fixture.Request{Method: "GET", Path: path, Token: token, APIKey: key})
}

func TestBearer(t *testing.T) {
	w := newWorld(t)
	res := fixture.Expect(t, w.get(t, "/user", w.caller.Token, ""), 200)
	fixture.Budget(t, res, 2)
	if res.JSON(t)["user"] != w.caller.UserID {
		t.Fatalf("body %s", res.Body)
	}
	fixture.Expect(t, w.get(t, "/user", "", ""), 401)
	fixture.Expect(t, w.get(t, "/user", w.caller.Token+"x", ""), 401)
	// An API key cannot call a user-session route.
	res = fixture.Expect(t, w.get(t, "/user", "", "svc_abcdefgh12345678"), 401)
	if w.keys.seen != "" {
		t.Fatal("key authenticator consulted on a user route")
	}
}

func TestAPIKeyWinsOnDualRoutes(t *testing.T) {
	w := newWorld(t)
	res := fixture.Expect(t, w.get(t, "/dual", w.caller.Token, "svc_key"), 200)
	if res.JSON(t)["kind"] != "api_key" || w.keys.seen != "svc_key" {
		t.Fatalf("body %s", res.Body)
	}
	res = fixture.Expect(t, w.get(t, "/dual", w.caller.Token, ""), 200)
	if res.JSON(t)["kind"] != "user" {
		t.Fatalf("body %s", res.Body)
	}
	if got := fixture.Expect(t, w.get(t, "/dual", "", ""), 401).JSON(t)["error"]; got != "Missing X-API-Key header" {
		t.Fatalf("error %v", got)
	}
}

func TestMFARoutesNeedTheClaim(t *testing.T) {
	w := newWorld(t)
	body := fixture.Expect(t, w.get(t, "/mfa", w.caller.Token, ""), 403).JSON(t)
	if body["error"] != "MFA required" || body["code"] != "MFA_REQUIRED" {
		t.Fatalf("body %v", body)
	}
	strong := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID, MFA: true})
	fixture.Expect(t, w.get(t, "/mfa", strong.Token, ""), 200)
	// API keys never satisfy MFA: the route is user-only anyway.
	fixture.Expect(t, w.get(t, "/mfa", "", "svc_key"), 401)
}

func TestForceMFA428(t *testing.T) {
	w := newWorld(t)
	p := fixture.Partner(t, w.Env, "MSP")
	c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
	body := fixture.Expect(t, w.get(t, "/user", c.Token, ""), 428).JSON(t)
	if body["error"] != "mfa_enrollment_required" || body["code"] != "mfa_enrollment_required" || body["enrollUrl"] != "/api/v1/auth/mfa/setup" {
		t.Fatalf("body %v", body)
	}
	enrolled := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true})
	fixture.Expect(t, w.get(t, "/user", enrolled.Token, ""), 200)
}

func TestRevocationTakesEffectAtOnce(t *testing.T) {
	ctx := context.Background()
	t.Run("disabled user", func(t *testing.T) {
		w := newWorld(t)
		k := user.ProfileKey(w.caller.UserID)
		if err := w.Env.Store.Do(ctx, store.Set(k.PK, k.SK, "status", user.StatusDisabled)); err != nil {
			t.Fatal(err)
		}
		fixture.Expect(t, w.get(t, "/user", w.caller.Token, ""), 401)
	})
	t.Run("membership removed", func(t *testing.T) {
		w := newWorld(t)
		k := user.MembershipKey(w.caller.UserID, authz.ScopeOrg, "", w.A.ID)
		if err := w.Env.Store.Do(ctx, store.Delete(k.PK, k.SK)); err != nil {
			t.Fatal(err)
		}
		fixture.Expect(t, w.get(t, "/user", w.caller.Token, ""), 401)
	})
	t.Run("session revoked", func(t *testing.T) {
		w := newWorld(t)
		if err := w.Env.Sessions.Revoke(ctx, w.caller.UserID, w.caller.SessionID); err != nil {
			t.Fatal(err)
		}
		fixture.Expect(t, w.get(t, "/user", w.caller.Token, ""), 401)
	})
}

func TestAgentRoutesWithoutAgentsBuilt(t *testing.T) {
	w := newWorld(t)
	res := fixture.Do(t, w.API, fixture.Request{Method: "GET", Path: "/agent", Header: map[string]string{"Authorization": "Bearer agt_x"}})
	fixture.Expect(t, res, 401)
}

// System roles are resolved from their Go definition: a bearer request of a
// system-role holder costs one BatchGetItem (profile, session, membership) and
// nothing more, and works on a table where no role row was ever written.
func TestSystemRoleCostsOneCall(t *testing.T) {
	w := newWorld(t)
	for _, id := range []string{role.OrgAdminID, role.OrgTechnicianID, role.OrgViewerID} {
		c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: id})
		res := fixture.Expect(t, w.get(t, "/user", c.Token, ""), 200)
		if res.DBCalls != 1 {
			t.Fatalf("role %s: %d DynamoDB calls, want 1", id, res.DBCalls)
		}
	}
	items, err := w.Env.Store.All(context.Background(), store.Query{PK: "ROLES#" + role.SystemOwner})
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 0 {
		t.Fatalf("%d system role rows in the table, want none", len(items))
	}
}
