package apikey

import (
	"context"
	"errors"
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

// CreatorRefs are the rows authentication reads, beside its rate-limit count,
// to check g's cached creator: the creator's profile and membership, and the
// cached custom roles.
func (g *Guard) CreatorRefs() []store.KeyRef {
	pk, mk := creatorRows(g.Creator)
	refs := []store.KeyRef{pk, mk}
	for _, p := range g.Creator.Pins {
		refs = append(refs, store.KeyRef{PK: p.PK, SK: p.SK})
	}
	return refs
}

// CreatorHolds reports whether the rows read by CreatorRefs still say what
// the guard cached: the creator entitled to act in the key's organization (the
// check rotation applies too), with the cached role, and the cached custom
// roles at their versions.
func (g *Guard) CreatorHolds(items map[string]store.Item) (bool, error) {
	c := g.Creator
	m, err := entitled(items, c, g.OrgID)
	if errors.Is(err, ErrCreatorGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if m.RoleID != c.RoleID {
		return false, nil
	}
	for _, p := range c.Pins {
		var row struct {
			Version int `dynamodbav:"version"`
		}
		it, ok := items[p.PK+"|"+p.SK]
		if !ok {
			return false, nil
		}
		if err := store.Unmarshal(it, &row); err != nil {
			return false, err
		}
		if row.Version != p.Version {
			return false, nil
		}
	}
	return true, nil
}

// RefreshCreator reads what g's creator holds now (creatorNow, as rotation
// does) and, while a key may still act for them, caches it on g and on its
// guard row (a guard changed meanwhile keeps its own); false when the key may
// no longer act.
func (s Store) RefreshCreator(ctx context.Context, roles role.Store, g *Guard) (bool, error) {
	c := g.Creator
	e, err := creatorNow(ctx, s.St, roles, c, g.OrgID)
	if errors.Is(err, ErrCreatorGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	next := &Creator{UserID: c.UserID, Scope: c.Scope, PartnerID: c.PartnerID, OrgID: c.OrgID, RoleID: e.RoleID}
	for _, p := range e.Perms.List() {
		next.Perms = append(next.Perms, p.String())
	}
	for _, p := range e.Pins {
		next.Pins = append(next.Pins, Pin{PK: p.Key.PK, SK: p.Key.SK, Version: p.Version})
	}
	if err := s.St.Do(ctx, creatorCacheWrite(g, next)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return false, err
	}
	g.Creator = next
	return true, nil
}
