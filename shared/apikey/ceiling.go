package apikey

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// The credential ceiling of shared/authz, as the key routes apply it:
//
//   - create and PATCH scopes: the caller holds every scope it grants;
//   - rotate of a user-created key: the key keeps acting as its creator, who
//     must still be entitled to act in the key's organization (an active
//     account with an active, unrestricted membership reaching it; 409
//     otherwise); a caller other than the creator must hold every permission
//     the key acts with and every scope the key holds as written (a wildcard
//     scope needs the matching wildcard permission), since the creator may
//     regain what they lack today; 403 `Cannot grant scopes you do not hold`
//     otherwise;
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
	e, err := creatorNow(ctx, s.St.St, s.Roles, c, k.OrgID)
	if err != nil {
		return err
	}
	perms := e.Perms
	if p.UserID == c.UserID && p.Kind == authz.KindUser {
		return nil // the creator: the key acts within what they hold
	}
	// Another caller must hold the key's scopes as written, not only what the
	// creator holds today: a creator demoted for a moment and promoted back
	// would otherwise hand the rotating caller material above its own level.
	if err := authz.CeilingScopes(p, k.Scopes); err != nil {
		return err
	}
	return authz.Ceiling(p, authz.Acting(k.Scopes, perms))
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
