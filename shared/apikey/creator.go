package apikey

import (
	"context"
	"slices"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// creatorNow reads what creator c holds now in organization orgID, or ErrCreatorGone when a key may no longer act for them: the
// account or the membership is not active, the membership is restricted to
// sites or device groups, or a partner membership no longer reaches orgID.
// With entitled, it is the one creator-entitlement check: API-key
// authentication refreshes a key's cached creator with it, and rotation bounds
// what it hands out by it. One BatchGetItem (profile and membership), then the
// role's pinned set.
func creatorNow(ctx context.Context, st *store.Store, roles role.Store, c *Creator, orgID string) (*entitlement, error) {
	pk, mk := creatorRows(c)
	items, err := st.BatchGet(ctx, pk, mk)
	if err != nil {
		return nil, err
	}
	m, err := entitled(items, c, orgID)
	if err != nil {
		return nil, err
	}
	set, pins, err := roles.Pinned(ctx, m.RoleOwner, m.RoleID)
	if err != nil {
		return nil, err
	}
	return &entitlement{RoleID: m.RoleID, Perms: set, Pins: pins}, nil
}

// creatorRows are the keys of creator c's profile and of the membership the
// key was created through.
func creatorRows(c *Creator) (profile, membership store.KeyRef) {
	return user.ProfileKey(c.UserID), user.MembershipKey(c.UserID, authz.Scope(c.Scope), c.PartnerID, c.OrgID)
}

// entitled answers creator c's membership, from items holding the rows of
// creatorRows, when it lets a key c created act in organization orgID (see
// entitles), and ErrCreatorGone otherwise. Authentication applies it to the
// rows it read beside the rate-limit count, creatorNow to the rows it reads
// itself: one rule, whichever read found the rows.
func entitled(items map[string]store.Item, c *Creator, orgID string) (*user.Membership, error) {
	pk, mk := creatorRows(c)
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	mi, ok2 := items[mk.PK+"|"+mk.SK]
	if !ok1 || !ok2 {
		return nil, ErrCreatorGone
	}
	var u user.User
	var m user.Membership
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, err
	}
	if err := store.Unmarshal(mi, &m); err != nil {
		return nil, err
	}
	if !entitles(&u, &m, orgID) {
		return nil, ErrCreatorGone
	}
	return &m, nil
}

// entitlement is what a key's creator holds now: the role its membership
// names, that role's permissions and the role rows they were read from.
type entitlement struct {
	RoleID string
	Perms  authz.Set
	Pins   []role.Pin
}

// entitles reports whether account u's membership m lets a key it created act
// in organization orgID: both active, the membership unrestricted (no sites,
// no device groups), and a partner membership reaching orgID.
func entitles(u *user.User, m *user.Membership, orgID string) bool {
	if u.Status != user.StatusActive || m.State(u) != user.MemberActive || len(m.SiteIDs) > 0 || len(m.GroupIDs) > 0 {
		return false
	}
	return m.Scope != authz.ScopePartner || m.OrgAccess == authz.OrgAccessAll || slices.Contains(m.OrgIDs, orgID)
}
