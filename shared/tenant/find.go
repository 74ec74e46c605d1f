package tenant

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// Owned is a record that belongs to one organization.
type Owned interface{ Owner() authz.Org }

// Find reads record id for p: from p's own organization's partition (one
// GetItem) for an organization caller, by id (inOrg is skipped; byID reads
// GSI1) otherwise. A malformed id is 400; an unknown id, or one of an
// organization p cannot reach, is notFound alike.
func Find[T Owned](ctx context.Context, p *authz.Principal, id string,
	inOrg func(ctx context.Context, orgID, id string) (T, error),
	byID func(ctx context.Context, id string) (T, error), notFound error) (T, error) {
	var zero T
	if err := valid.PathID("id", id); err != nil {
		return zero, err
	}
	var rec T
	var err error
	if p.Scope == authz.ScopeOrg {
		rec, err = inOrg(ctx, p.OrgID, id)
	} else {
		rec, err = byID(ctx, id)
	}
	switch {
	case errors.Is(err, store.ErrNotFound):
		return zero, notFound
	case err != nil:
		return zero, err
	case !p.CanAccessOrg(rec.Owner()):
		return zero, notFound
	}
	return rec, nil
}
