package apikey_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/usersgroup"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

const memberPassword = "Tangerine-Kettle-42!"

// inviteToken issues a fresh invitation token for userID's pending membership
// of organization orgID (what resend-invite e-mails), straight in the table.
func inviteToken(t *testing.T, w *fixture.World, userID, orgID string) string {
	t.Helper()
	ctx := context.Background()
	k := user.MembershipKey(userID, authz.ScopeOrg, "", orgID)
	var m user.Membership
	if err := w.Env.Store.Get(ctx, k.PK, k.SK, &m); err != nil {
		t.Fatal(err)
	}
	tok, inv, err := user.NewInvite(&m, "test", w.Env.Clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Env.Store.Do(ctx, store.Put(inv)); err != nil {
		t.Fatal(err)
	}
	return tok
}

func keyStatus(t *testing.T, w *fixture.World, id string) string {
	t.Helper()
	s, _ := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+id, fixture.AAdmin, nil), http.StatusOK).JSON(t)["status"].(string)
	return s
}

// Finding 4 of issue 18: a removed user's key stayed listed active and worked
// again once the same account was re-invited and accepted.
func TestRemovalRevokesKeysAndReinvitationDoesNotResurrect(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "api-keys", "devices", "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
		RoleID: role.OrgAdminID, MFA: true, Password: memberPassword})
	w.Tokens["victim"] = victim.Token
	k := w.APIKey(t, "victim", map[string]any{"orgId": w.A.ID, "name": "victim's", "scopes": []string{"devices:read"}})
	other := w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "admin's", "scopes": []string{"devices:read"}})
	fixture.Expect(t, w.WithKey(t, k.Key, ""), http.StatusOK)

	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+victim.UserID, fixture.AAdmin, nil), http.StatusOK)
	if s := keyStatus(t, w, k.ID); s != "revoked" {
		t.Fatalf("removed user's key is %s, want revoked", s)
	}
	if s := keyStatus(t, w, other.ID); s != "active" {
		t.Fatalf("another user's key is %s", s)
	}
	if scan := fixture.Scan(t, w.Env); !strings.Contains(scan, "api_key.revoke") || !strings.Contains(scan, "creator_removed") {
		t.Fatal("no api_key.revoke audit record for the removed creator's key")
	}
	fixture.Expect(t, w.WithKey(t, k.Key, ""), http.StatusUnauthorized)

	// Re-invited and accepted with the account's own password: the key stays dead.
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.AAdmin,
		map[string]any{"email": victim.Email, "name": "Back", "roleId": role.OrgAdminID}), http.StatusCreated)
	tok := inviteToken(t, w, victim.UserID, w.A.ID)
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/auth/accept-invite", "", map[string]any{"token": tok, "password": memberPassword}), http.StatusOK)
	w.Env.Clock.Advance(time.Minute)
	if s := keyStatus(t, w, k.ID); s != "revoked" {
		t.Fatalf("after re-invitation the key is %s", s)
	}
	fixture.Expect(t, w.WithKey(t, k.Key, ""), http.StatusUnauthorized)
}

// RemoveMembership is idempotent: a second run (after a crash, or by a bulk
// caller going over its list again) removes and revokes nothing more, and it
// revokes what an interrupted run left behind.
func TestRemoveMembershipIsIdempotent(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "api-keys", "devices", "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
		RoleID: role.OrgAdminID, MFA: true})
	w.Tokens["victim"] = victim.Token
	k1 := w.APIKey(t, "victim", map[string]any{"orgId": w.A.ID, "name": "one", "scopes": []string{"devices:read"}})
	k2 := w.APIKey(t, "victim", map[string]any{"orgId": w.A.ID, "name": "two"})
	svc := usersgroup.Service(w.Env.Deps)
	ctx := context.Background()
	actor := audit.Actor{ID: "review-1", Type: "system"}
	r := user.Removal{UserID: victim.UserID, Scope: authz.ScopeOrg, OrgID: w.A.ID, Details: map[string]any{"accessReviewId": "review-1"}}
	got, err := svc.RemoveMembership(ctx, actor, r)
	if err != nil || !got.Membership || got.RevokedKeys != 2 {
		t.Fatalf("first run = %+v, %v", got, err)
	}
	got, err = svc.RemoveMembership(ctx, actor, r)
	if err != nil || got.Membership || got.RevokedKeys != 0 {
		t.Fatalf("second run = %+v, %v", got, err)
	}
	for _, id := range []string{k1.ID, k2.ID} {
		if s := keyStatus(t, w, id); s != "revoked" {
			t.Fatalf("key %s is %s", id, s)
		}
	}
	// The last administrator is not removed, and keeps their keys.
	k3 := w.APIKey(t, fixture.BAdmin, map[string]any{"orgId": w.B.ID, "name": "kept"})
	got, err = svc.RemoveMembership(ctx, actor, user.Removal{UserID: w.Users[fixture.BAdmin], Scope: authz.ScopeOrg, OrgID: w.B.ID})
	if !errors.Is(err, user.ErrLastAdmin) || got.Membership || got.RevokedKeys != 0 {
		t.Fatalf("removing the last administrator of B = %+v, %v", got, err)
	}
	if s, _ := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+k3.ID, fixture.BAdmin, nil), http.StatusOK).JSON(t)["status"].(string); s != "active" {
		t.Fatalf("the last administrator's key is %s", s)
	}
	// A removal naming a membership that has since been replaced (removed and
	// invited again) leaves the new one and its keys alone.
	got, err = svc.RemoveMembership(ctx, actor, user.Removal{UserID: w.Users[fixture.BAdmin], Scope: authz.ScopeOrg, OrgID: w.B.ID,
		MembershipID: "00000000-0000-4000-8000-00000000dead"})
	if err != nil || got.Membership || got.RevokedKeys != 0 {
		t.Fatalf("removing a replaced membership = %+v, %v", got, err)
	}
	if _, err := svc.RemoveMembership(ctx, actor, user.Removal{UserID: victim.UserID}); err == nil {
		t.Fatal("a removal naming no scope was accepted")
	}
}

// A removal revokes the keys its user created in batches: 40 keys cost two
// transactions, not forty, and every one of them is revoked and audited.
func TestRemovalRevokesManyKeysInBatches(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "api-keys", "users", "auth")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
		RoleID: role.OrgAdminID, MFA: true, Password: memberPassword})
	w.Tokens["victim"] = victim.Token
	var ids []string
	for i := range 40 {
		ids = append(ids, w.APIKey(t, "victim", map[string]any{"orgId": w.A.ID, "name": fmt.Sprintf("k%02d", i), "scopes": []string{"devices:read"}}).ID)
	}
	res := fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+victim.UserID, fixture.AAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 10) // 8, then two revocation transactions (33 + 7 keys)
	for _, id := range ids {
		if s := keyStatus(t, w, id); s != "revoked" {
			t.Fatalf("key %s is %s after its creator's removal", id, s)
		}
	}
}

// TestPartnerRemovalCallsDoNotGrowWithOrganizations: removing a partner
// member revokes the keys it created in every organization of the partner,
// found in one Query of the creator's index, so a partner with six
// organizations costs what one with two costs. (Before, it read each
// organization's keys twice: 12 calls for two organizations, two more for
// each further one.)
func TestPartnerRemovalCallsDoNotGrowWithOrganizations(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "api-keys", "users", "auth")
	remove := func(orgIDs []string) int {
		t.Helper()
		victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID,
			OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true, Password: memberPassword})
		w.Tokens["victim"] = victim.Token
		var ids []string
		for _, o := range orgIDs {
			ids = append(ids, w.APIKey(t, "victim", map[string]any{"orgId": o, "name": "k", "scopes": []string{"devices:read"}}).ID)
		}
		res := fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+victim.UserID, fixture.PXAdmin, nil), http.StatusOK)
		for _, id := range ids {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+id, fixture.PXAdmin, nil), http.StatusOK)
			if s := res.JSON(t)["status"]; s != "revoked" {
				t.Fatalf("key %s is %v after its creator's removal from the partner", id, s)
			}
		}
		return res.DBCalls
	}
	two := remove([]string{w.A.ID, w.B.ID})
	orgs := []string{w.A.ID, w.B.ID}
	for i := range 4 {
		orgs = append(orgs, fixture.Org(t, w.Env, w.PX.ID, fmt.Sprintf("More %d", i)).ID)
	}
	if six := remove(orgs); six != two || two != 9 {
		t.Fatalf("removing a partner member costs %d calls with two organizations and %d with six; want 9 both", two, six)
	}
}

// TestRemovalRevokesOnlyThatTenantsKeys: one account with memberships in A
// and B (partner X) and in C (partner Y), a key in each. Its removal from B
// revokes B's key only; its removal from partner X's organization A leaves
// C's key (another partner's) alone.
func TestRemovalRevokesOnlyThatTenantsKeys(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "api-keys", "users", "auth")
	admin := func(partnerID, orgID string) fixture.Member {
		return fixture.Member{Scope: authz.ScopeOrg, PartnerID: partnerID, OrgID: orgID, RoleID: role.OrgAdminID, MFA: true}
	}
	inA := fixture.User(t, w.Env, admin(w.PX.ID, w.A.ID))
	inB, inC := fixture.Join(t, w.Env, inA.UserID, admin(w.PX.ID, w.B.ID)), fixture.Join(t, w.Env, inA.UserID, admin(w.PY.ID, w.C.ID))
	keys := map[string]string{}
	for name, c := range map[string]struct {
		tok, org string
	}{"A": {inA.Token, w.A.ID}, "B": {inB.Token, w.B.ID}, "C": {inC.Token, w.C.ID}} {
		res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: keysURL, Token: c.tok,
			Body: map[string]any{"orgId": c.org, "name": "k" + name, "scopes": []string{"devices:read"}}})
		keys[name], _ = fixture.Expect(t, res, http.StatusCreated).JSON(t)["id"].(string)
	}
	status := func(name, caller string) any {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+keys[name], caller, nil), http.StatusOK)
		return res.JSON(t)["status"]
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+inA.UserID+"?orgId="+w.B.ID, fixture.PXAdmin, nil), http.StatusOK)
	if a, b, c := status("A", fixture.AAdmin), status("B", fixture.BAdmin), status("C", fixture.CAdmin); a != "active" || b != "revoked" || c != "active" {
		t.Fatalf("after the removal from B: A %v, B %v, C %v; want active, revoked, active", a, b, c)
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+inA.UserID, fixture.AAdmin, nil), http.StatusOK)
	if a, c := status("A", fixture.AAdmin), status("C", fixture.CAdmin); a != "revoked" || c != "active" {
		t.Fatalf("after the removal from A: A %v, C %v; want revoked, active", a, c)
	}
}
