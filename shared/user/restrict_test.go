package user_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/testenv"
)

// TestMembershipWritesAreCompareAndSwap: a restriction edit or a role
// assignment written from a copy of the membership that another edit has
// since moved fails its condition, so neither writes back what the other
// changed (never a lost update).
func TestMembershipWritesAreCompareAndSwap(t *testing.T) {
	env := testenv.New(t)
	ctx := t.Context()
	u := &user.User{ID: uuid.NewString(), Email: uuid.NewString()[:8] + "@example.com", Status: user.StatusActive}
	org := uuid.NewString()
	if err := env.Store.Commit(ctx, (&store.Tx{}).Add(user.CreateWrites(u)...).Add(user.AddMembershipWrite(&user.Membership{
		ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, OrgID: org, RoleID: "r", RoleOwner: "SYSTEM"}))); err != nil {
		t.Fatal(err)
	}
	read := func() *user.Membership {
		m, err := env.Users.Membership(ctx, u.ID, authz.ScopeOrg, "", org)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	site, group := uuid.NewString(), uuid.NewString()
	stale := read()
	if err := env.Store.Do(ctx, user.MemberChangeWrite(stale, "", &user.Restriction{SiteIDs: []string{site}})); err != nil {
		t.Fatal(err)
	}
	// Both copies read before the site edit lose.
	if err := env.Store.Do(ctx, user.MemberChangeWrite(stale, "", &user.Restriction{GroupIDs: []string{group}})); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale restriction edit: %v", err)
	}
	next := *stale
	next.RoleID = "r2"
	if err := env.Store.Do(ctx, user.ReplaceMembershipWrite(&next, stale)); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("stale role write: %v", err)
	}
	// A role write from a fresh copy keeps the sites and moves the version,
	// so a restriction edit read before it loses in turn.
	fresh := read()
	next = *fresh
	next.RoleID = "r2"
	if err := env.Store.Do(ctx, user.ReplaceMembershipWrite(&next, fresh)); err != nil {
		t.Fatal(err)
	}
	if err := env.Store.Do(ctx, user.MemberChangeWrite(fresh, "", &user.Restriction{})); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("restriction edit read before the role write: %v", err)
	}
	if m := read(); !slices.Equal(m.SiteIDs, []string{site}) || len(m.GroupIDs) != 0 || m.RoleID != "r2" || m.Version != 2 {
		t.Fatalf("stored %+v", m)
	}
}
