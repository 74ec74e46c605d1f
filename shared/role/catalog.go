package role

import (
	"context"
	"slices"

	"github.com/gale-rmm/gale/shared/authz"
)

// Available is GET /roles/permissions/available: the spec's resources and
// catalogue actions. Static, but authorized like every roles route.
func (s *Service) Available(ctx context.Context) (resources, actions []string, err error) {
	p, err := authz.Require(ctx, authz.UsersRead)
	if err != nil {
		return nil, nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, nil, err
	}
	return slices.Clone(authz.CatalogResources), authz.CatalogActions(), nil
}

// Catalog is GET /permissions/catalog: every assignable permission.
func (s *Service) Catalog(ctx context.Context) ([]authz.CatalogEntry, error) {
	p, err := authz.Require(ctx, authz.UsersRead)
	if err != nil {
		return nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, err
	}
	return slices.Clone(authz.Catalog), nil
}
