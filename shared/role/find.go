package role

import (
	"context"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// visible reports whether p may see r: a system role of a scope the caller works
// in, or a custom role of an owner the caller can reach.
func visible(p *authz.Principal, r *Role) bool {
	if r.IsSystem {
		switch p.Scope {
		case authz.ScopeSystem:
			return true
		case authz.ScopePartner:
			return r.Scope == authz.ScopePartner || r.Scope == authz.ScopeOrg
		case authz.ScopeOrg:
			return r.Scope == authz.ScopeOrg
		}
		return false
	}
	switch {
	case r.OrgID != nil:
		return p.CanAccessOrg(authz.Org{ID: *r.OrgID, PartnerID: r.OrgPartnerID})
	case r.PartnerID != nil:
		return p.CanAccessPartner(*r.PartnerID)
	}
	return false
}

// authorizeRole opens the methods that act on one role: it requires perm and
// full partner access of the caller, then loads role id as they see it.
func (s *Service) authorizeRole(ctx context.Context, perm authz.Permission, id string) (*authz.Principal, *Role, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, nil, err
	}
	r, err := s.load(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

// load reads role id (a path parameter) for p: unknown and invisible roles are
// both 404.
func (s *Service) load(ctx context.Context, p *authz.Principal, id string) (*Role, error) {
	if !valid.IsUUID(id) {
		return nil, fault.Invalid("id", "must be a UUID")
	}
	return s.find(ctx, p, id)
}

// find reads role id for p: unknown and invisible roles are both ErrNotFound.
func (s *Service) find(ctx context.Context, p *authz.Principal, id string) (*Role, error) {
	r, err := s.Roles.ByID(ctx, id)
	if IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !visible(p, r) {
		return nil, ErrNotFound
	}
	return r, nil
}

// systemRole returns system role id from its definition.
func systemRole(id string) (*Role, bool) {
	for _, r := range SystemRoles() {
		if r.ID == id {
			r.Keys = keys(SystemOwner, r.ID)
			return &r, true
		}
	}
	return nil, false
}
