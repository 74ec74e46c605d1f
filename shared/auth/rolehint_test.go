package auth_test

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// hintWorld is the small world with a route answering the caller's
// permissions and two custom roles of organization A: r1 grants
// devices:read, r2 sites:read.
type hintWorld struct {
	*world
	owner  string
	r1, r2 string
}

func newHintWorld(t *testing.T) *hintWorld {
	w := &hintWorld{world: newWorld(t)}
	w.owner = role.OrgOwner(w.A.ID)
	w.r1 = putRole(t, w.world, w.owner, uuid.NewString(), authz.DevicesRead)
	w.r2 = putRole(t, w.world, w.owner, uuid.NewString(), authz.SitesRead)
	w.API.(*httpapi.Router).Add(httpapi.Route{Method: "GET", Path: "/perms", Access: httpapi.User, NoAuthz: true,
		Handle: func(rw http.ResponseWriter, r *http.Request) error {
			p, err := authz.SignedIn(r.Context())
			if err != nil {
				return err
			}
			var perms []string
			for perm := range p.Perms {
				perms = append(perms, perm.String())
			}
			slices.Sort(perms)
			httpapi.WriteJSON(rw, 200, map[string]any{"perms": perms, "roleId": p.RoleID})
			return nil
		}})
	return w
}

// putRole writes custom role id of owner granting perms (a test's shortcut
// past the role service, whose rules are not under test here).
func putRole(t *testing.T, w *world, owner, id string, perms ...authz.Permission) string {
	t.Helper()
	k := role.Key(owner, id)
	r := role.Role{Keys: store.Keys{PK: k.PK, SK: k.SK}, ID: id, Owner: owner, Scope: authz.ScopeOrg, Name: "R " + id[:8], Version: 1}
	for _, p := range perms {
		r.Permissions = append(r.Permissions, p.String())
	}
	if err := w.Env.Store.Do(context.Background(), store.Put(r)); err != nil {
		t.Fatal(err)
	}
	return id
}

// set writes attribute attr of the row at k (a test's shortcut past the
// services that own the row).
func (w *hintWorld) set(t *testing.T, k store.KeyRef, attr string, v any) {
	t.Helper()
	if err := w.Env.Store.Do(context.Background(), store.Set(k.PK, k.SK, attr, v)); err != nil {
		t.Fatal(err)
	}
}

// member is a new member of organization A holding custom role id.
func (w *hintWorld) member(t *testing.T, id string) fixture.Caller {
	t.Helper()
	return fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: id, RoleOwner: w.owner})
}

// moveTo gives the membership of c in organization A the role id of owner.
func (w *hintWorld) moveTo(t *testing.T, c fixture.Caller, owner, id string) {
	t.Helper()
	k := user.MembershipKey(c.UserID, authz.ScopeOrg, "", w.A.ID)
	w.set(t, k, "roleId", id)
	w.set(t, k, "roleOwner", owner)
}

// expect checks that token's caller holds exactly want and that
// authentication made calls DynamoDB calls (any number when calls < 0).
func (w *hintWorld) expect(t *testing.T, token string, calls int, want ...authz.Permission) {
	t.Helper()
	res := fixture.Expect(t, w.get(t, "/perms", token, ""), 200)
	got, _ := res.JSON(t)["perms"].([]any)
	var ws []any
	for _, p := range want {
		ws = append(ws, p.String())
	}
	slices.SortFunc(ws, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	if !slices.Equal(got, ws) {
		t.Fatalf("permissions %v, want %v", got, ws)
	}
	if calls >= 0 && res.DBCalls != calls {
		t.Fatalf("%d DynamoDB calls, want %d", res.DBCalls, calls)
	}
}

// A custom role's row is read in the authentication's one BatchGetItem, with
// the profile, session and membership, when the token's hint names it.
func TestCustomRoleReadInTheBatch(t *testing.T) {
	w := newHintWorld(t)
	w.expect(t, w.member(t, w.r1).Token, 1, authz.DevicesRead)
}

// The membership, not the token, says which role applies: a token issued
// while the membership held r1 gets r2's permissions once the membership
// holds r2 (r2 read after the batch), and a system role's once it holds one.
func TestHintYieldsToTheMembership(t *testing.T) {
	w := newHintWorld(t)
	c := w.member(t, w.r1)
	w.moveTo(t, c, w.owner, w.r2)
	w.expect(t, c.Token, 2, authz.SitesRead)
	w.moveTo(t, c, role.SystemOwner, role.OrgViewerID)
	viewer, _, _, err := role.Store{}.Effective(context.Background(), role.SystemOwner, role.OrgViewerID)
	if err != nil {
		t.Fatal(err)
	}
	w.expect(t, c.Token, 1, slices.Collect(maps.Keys(viewer))...)
}

// A hint naming a role of another owner is ignored even when the role ids
// are equal: the row prefetched for it is not the membership's role.
func TestHintOfAnotherOwnerIsIgnored(t *testing.T) {
	w := newHintWorld(t)
	other := role.OrgOwner(fixture.Org(t, w.Env, w.PX.ID, "Beta").ID)
	putRole(t, w.world, other, w.r2, authz.DevicesRead, authz.AlertsRead)
	c := w.member(t, w.r2)
	pair, sw, err := w.Env.Sessions.Start(c.UserID, session.Claims{Scope: authz.ScopeOrg, OrgID: w.A.ID,
		Role: &session.RoleHint{Owner: other, ID: w.r2}}, "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Env.Store.Do(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	w.expect(t, pair.AccessToken, -1, authz.SitesRead)
}

// The role's row is read on every request: an edit of r1's permissions
// applies to the next request made with a token issued before it.
func TestRoleEditAppliesToTheNextRequest(t *testing.T) {
	w := newHintWorld(t)
	c := w.member(t, w.r1)
	w.expect(t, c.Token, 1, authz.DevicesRead)
	w.set(t, role.Key(w.owner, w.r1), "permissions", []string{authz.SitesRead.String()})
	w.expect(t, c.Token, 1, authz.SitesRead)
}

// The hinted role comes with the batch; each custom parent of its chain is
// read after it (one more call), and grants what it grants.
func TestCustomParentReadAfterTheBatch(t *testing.T) {
	w := newHintWorld(t)
	child := putRole(t, w.world, w.owner, uuid.NewString(), authz.AlertsRead)
	w.set(t, role.Key(w.owner, child), "parentRoleId", w.r1)
	w.expect(t, w.member(t, child).Token, 2, authz.AlertsRead, authz.DevicesRead)
}
