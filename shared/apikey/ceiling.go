package apikey

import (
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// The credential ceiling of shared/authz, as the key routes apply it:
//
//   - create and PATCH scopes: the caller holds every scope it grants;
//   - rotate of a user-created key: the key keeps acting as its creator, who
//     must still be entitled to act in the key's organization (an active
//     account with an active, unrestricted membership reaching it; 409
//     otherwise); a caller other than the creator must hold every permission
//     the key acts with (its scopes bounded by the creator's current
//     permissions), 403 `Cannot grant scopes you do not hold` otherwise;
//   - rotate or PATCH of a principal's key: the principal is active, the
//     caller holds what the key acts with, new scopes stay within the
//     principal's; the change bumps the principal's version, so it and
//     disable, rotate and migrate-key of that principal serialise.

// rotatable applies the ceiling to rotating user-created key k whose guard
// caches creator c.
func (s *Service) rotatable(ctx context.Context, p *authz.Principal, k *Key, c *Creator) error {
	if c == nil {
		return ErrCreatorGone
	}
	perms, err := s.creatorNow(ctx, k, c)
	if err != nil {
		return err
	}
	if p.UserID == c.UserID && p.Kind == authz.KindUser {
		return nil // the creator: the key acts within what they hold
	}
	return authz.Ceiling(p, authz.Acting(k.Scopes, perms))
}

// creatorNow reads what creator c holds now in k's organization, or
// ErrCreatorGone when the key may no longer act for them.
func (s *Service) creatorNow(ctx context.Context, k *Key, c *Creator) (authz.Set, error) {
	pk := user.ProfileKey(c.UserID)
	mk := user.MembershipKey(c.UserID, authz.Scope(c.Scope), c.PartnerID, c.OrgID)
	items, err := s.St.St.BatchGet(ctx, pk, mk)
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
	if u.Status != user.StatusActive || m.State(&u) != user.MemberActive || len(m.SiteIDs) > 0 || len(m.GroupIDs) > 0 {
		return nil, ErrCreatorGone
	}
	if m.Scope == authz.ScopePartner && m.OrgAccess != authz.OrgAccessAll && !slices.Contains(m.OrgIDs, k.OrgID) {
		return nil, ErrCreatorGone
	}
	set, _, err := s.Roles.Pinned(ctx, m.RoleOwner, m.RoleID)
	return set, err
}

// activePrincipal reads the principal owning key k; a disabled one is
// ErrSPDisabled.
func (s *Service) activePrincipal(ctx context.Context, k *Key) (*Principal, error) {
	sp, err := s.St.Principal(ctx, k.OrgID, k.PrincipalID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrSPDisabled
	}
	if err != nil {
		return nil, err
	}
	if sp.Status != SPActive {
		return nil, ErrSPDisabled
	}
	return sp, nil
}

// within reports whether every scope is allowed by the principal's scopes.
func within(scopes, principal []string) bool {
	allowed := authz.Acting(principal, nil)
	for _, sc := range scopes {
		perm, ok := authz.ScopePermission(sc)
		if !ok || !allowed.Has(perm) {
			return false
		}
	}
	return true
}

// bumpPrincipal moves principal sp's version on, if it is still at the
// version read and active: every change of the principal or its keys takes
// this step, so they serialise with disable.
func bumpPrincipal(sp *Principal) *store.Write {
	return store.Change(sp.PK, sp.SK, expression.Add(expression.Name("version"), expression.Value(1))).
		When(store.Is("version", sp.Version).And(store.Is("status", SPActive)))
}
