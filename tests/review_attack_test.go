package tests

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

const reviewsURL = "/api/v1/access-reviews"

type reviewDetail struct {
	ID    string
	Items []struct{ ID, UserID, RoleID, Decision string }
}

func openReview(t *testing.T, w *fixture.World, caller string) reviewDetail {
	t.Helper()
	id := fixture.Expect(t, w.Call(t, http.MethodPost, reviewsURL, caller, map[string]any{"name": "quarterly"}), http.StatusCreated).JSON(t)["id"].(string)
	var d reviewDetail
	fixture.Expect(t, w.Call(t, http.MethodGet, reviewsURL+"/"+id, caller, nil), http.StatusOK).Decode(t, &d)
	return d
}

// A revocation is a decision about the role the item reviewed: a member
// promoted after it (above the decider) keeps the membership at completion.
func TestReviewRevocationDoesNotRemoveAMemberReRoledSince(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews", "roles", "users")
	rid := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "user admin",
		"permissions": []map[string]string{{"resource": "users", "action": "read"}, {"resource": "users", "action": "write"}}}), http.StatusCreated).JSON(t)["id"].(string)
	slice := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: rid, RoleOwner: "ORG#" + w.A.ID, MFA: true})
	target := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: rid, RoleOwner: "ORG#" + w.A.ID, MFA: true})
	w.Tokens["slice"] = slice.Token
	d := openReview(t, w, "slice")
	for _, it := range d.Items {
		dec := "approved"
		if it.UserID == target.UserID {
			dec = "revoked"
		}
		fixture.Expect(t, w.Call(t, http.MethodPatch, reviewsURL+"/"+d.ID+"/items/"+it.ID, "slice", map[string]any{"decision": dec}), http.StatusOK)
	}
	// Promoted to Org Admin after the decision, before the completion.
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/"+target.UserID+"/role", fixture.AAdmin, map[string]any{"roleId": role.OrgAdminID}), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPost, reviewsURL+"/"+d.ID+"/complete", "slice", nil), http.StatusOK)
	ms, err := w.Env.Users.Memberships(context.Background(), target.UserID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].RoleID != role.OrgAdminID {
		t.Fatalf("a member re-roled after the decision was removed: %+v", ms)
	}
}

// A review item of someone who is no longer a member of the tenant shows only
// the e-mail, never the account's own name or last sign-in.
func TestReviewHidesTheAccountOnceTheMembershipIsGone(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews", "users")
	victim := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.B.ID,
		RoleID: role.OrgViewerID, MFA: true, Name: "Real Owner Name"})
	pk := user.ProfileKey(victim.UserID)
	if err := w.Env.Store.Do(context.Background(), store.Set(pk.PK, pk.SK, "lastLoginAt", "2026-10-30T08:00:00.000Z")); err != nil {
		t.Fatal(err)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/users/invite", fixture.CAdmin,
		map[string]any{"email": victim.Email, "name": "Guest", "roleId": role.OrgViewerID}), http.StatusCreated)
	id := fixture.Expect(t, w.Call(t, http.MethodPost, reviewsURL, fixture.CAdmin, map[string]any{"name": "harvest"}), http.StatusCreated).JSON(t)["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+victim.UserID, fixture.CAdmin, nil), http.StatusOK)
	after := string(fixture.Expect(t, w.Call(t, http.MethodGet, reviewsURL+"/"+id, fixture.CAdmin, nil), http.StatusOK).Body)
	if strings.Contains(after, "Real Owner Name") || strings.Contains(after, "2026-10-30T08") {
		t.Fatalf("the review shows the account's own name or last sign-in: %s", after)
	}
}
