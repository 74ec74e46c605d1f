package apikey

import (
	"context"

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
//     principal's; the change commits the principal's Hold write (its
//     version bumped), so it and disable, rotate and migrate-key of that
//     principal serialise.

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

// Owners is what the key routes need of the service principal owning a key
// (shared/principal's Store, wired in shared/app; principal imports apikey to
// mint and revoke its keys, so apikey reaches it only through this).
type Owners interface {
	// Hold reads principal id of organization orgID while it is active (the
	// principal's "disabled" conflict otherwise).
	Hold(ctx context.Context, orgID, id string) (*Hold, error)
	// Lost names why a transaction failed at a Hold's write.
	Lost(ctx context.Context, orgID, id string) error
}

// Hold is an active principal as a change of one of its keys sees it: its
// scopes, and the write the change commits with, which fails if the principal
// changed meanwhile.
type Hold struct {
	Scopes []string
	Write  *store.Write
}
