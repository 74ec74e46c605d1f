package signin_test

import (
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// customRole writes a custom role of owner granting devices:read (past the
// role service: its rules are not under test) and returns its id.
func customRole(t *testing.T, s setup, owner string, scope authz.Scope) string {
	t.Helper()
	id := uuid.NewString()
	k := role.Key(owner, id)
	r := role.Role{Keys: store.Keys{PK: k.PK, SK: k.SK}, ID: id, Owner: owner, Scope: scope, Name: "R " + id[:8],
		Permissions: []string{authz.DevicesRead.String()}, Version: 1}
	if err := s.env.Store.Do(t.Context(), store.Put(r)); err != nil {
		t.Fatal(err)
	}
	return id
}

// hintOf verifies an access token and returns its role hint.
func hintOf(t *testing.T, s setup, token string) *session.RoleHint {
	t.Helper()
	c, err := s.env.Sessions.Signer.Verify(token)
	if err != nil {
		t.Fatal(err)
	}
	return c.Role
}

func wantHint(t *testing.T, got *session.RoleHint, owner, id string) {
	t.Helper()
	if got == nil || got.Owner != owner || got.ID != id {
		t.Fatalf("role hint %+v, want %s %s", got, owner, id)
	}
}

// giveRole points alice's organization membership at role id of owner.
func giveRole(t *testing.T, s setup, owner, id string) {
	t.Helper()
	k := user.MembershipKey(s.user.UserID, authz.ScopeOrg, "", s.org)
	for attr, v := range map[string]string{"roleId": id, "roleOwner": owner} {
		if err := s.env.Store.Do(t.Context(), store.Set(k.PK, k.SK, attr, v)); err != nil {
			t.Fatal(err)
		}
	}
}

// Sign-in hints the membership's custom role (none for a system role), the
// session row keeps it, and a refresh hints the role the membership holds
// then, on the row too.
func TestSignInAndRefreshHintTheMembershipsRole(t *testing.T) {
	s := newSetup(t)
	if h := hintOf(t, s, accessOf(t, fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.70"), 200))); h != nil {
		t.Fatalf("system role hinted: %+v", h)
	}
	owner := role.OrgOwner(s.org)
	r1, r2 := customRole(t, s, owner, authz.ScopeOrg), customRole(t, s, owner, authz.ScopeOrg)
	giveRole(t, s, owner, r1)
	res := fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.71"), 200)
	wantHint(t, hintOf(t, s, accessOf(t, res)), owner, r1)
	giveRole(t, s, owner, r2)
	s.env.Clock.Advance(time.Hour)
	res = fixture.Expect(t, doRefresh(t, s, refreshCookie(t, res).Value, true), 200)
	wantHint(t, hintOf(t, s, accessOf(t, res)), owner, r2)
	var row session.Session
	uid, sid, _ := session.ParseRefresh(refreshCookie(t, res).Value)
	k := session.Key(uid, sid)
	if err := s.env.Store.Get(t.Context(), k.PK, k.SK, &row); err != nil {
		t.Fatal(err)
	}
	wantHint(t, row.Role, owner, r2)
}

// A switch hints the target membership's role; a password change keeps the
// session's.
func TestSwitchAndPasswordChangeHintTheRole(t *testing.T) {
	s := newSetup(t)
	o := orgOf(t, s)
	powner := role.PartnerOwner(o.PartnerID)
	pr := customRole(t, s, powner, authz.ScopePartner)
	fixture.Join(t, s.env, s.user.UserID, fixture.Member{Scope: authz.ScopePartner, PartnerID: o.PartnerID, RoleID: pr,
		RoleOwner: powner, OrgAccess: authz.OrgAccessAll})
	ms, err := s.env.Deps.Users.Memberships(t.Context(), s.user.UserID)
	if err != nil {
		t.Fatal(err)
	}
	target := ""
	for _, m := range ms {
		if m.Scope == authz.ScopePartner {
			target = m.ID
		}
	}
	res := fixture.Expect(t, switchTo(t, s, s.user.Token, target), 200)
	wantHint(t, hintOf(t, s, accessOf(t, res)), powner, pr)
	res = fixture.Expect(t, changePassword(t, s, accessOf(t, res), pw, "Changed-Passphrase-55"), 200)
	wantHint(t, hintOf(t, s, accessOf(t, res)), powner, pr)
}
