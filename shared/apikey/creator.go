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
// It is the one creator-entitlement check: API-key authentication refreshes
// a key's cached creator with it, and rotation bounds what it hands out by
// it. One BatchGetItem (profile and membership), then the role's pinned set.
func creatorNow(ctx context.Context, st *store.Store, roles role.Store, c *Creator, orgID string) (*entitlement, error) {
	pk := user.ProfileKey(c.UserID)
	mk := user.MembershipKey(c.UserID, authz.Scope(c.Scope), c.PartnerID, c.OrgID)
	items, err := st.BatchGet(ctx, pk, mk)
	if err != nil {
		return nil, err
	}
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
	set, pins, err := roles.Pinned(ctx, m.RoleOwner, m.RoleID)
	if err != nil {
		return nil, err
	}
	return &entitlement{RoleID: m.RoleID, Perms: set, Pins: pins}, nil
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
