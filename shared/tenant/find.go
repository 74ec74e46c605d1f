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

// PartnerOwned is an Owned record that may belong to a partner itself rather
// than to one of its organizations (an SSO provider of the partner's own
// members): OwnedByPartner answers the partner and true then, and Find checks
// the partner's reach (authz.Principal.CanAccessPartner) instead of an
// organization's.
type PartnerOwned interface {
	Owned
	OwnedByPartner() (string, bool)
}

// Find reads record id for p: from p's own organization's partition (one
// GetItem) for an organization caller, by id (inOrg is skipped; byID reads
// GSI1) otherwise. An organization caller never finds a partner's own row
// (PartnerOwned): inOrg reads only its organization's partition. A malformed id is 400; an unknown id, or one of an
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
	case !reaches(p, rec):
		return zero, notFound
	}
	return rec, nil
}

// reaches reports whether p reaches rec's owner: its partner for a
// PartnerOwned record of a partner, else its organization.
func reaches(p *authz.Principal, rec Owned) bool {
	if po, ok := rec.(PartnerOwned); ok {
		if id, partner := po.OwnedByPartner(); partner {
			return p.CanAccessPartner(id)
		}
	}
	return p.CanAccessOrg(rec.Owner())
}
