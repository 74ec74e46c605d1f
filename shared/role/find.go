package role

import (
	"context"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// shared reports whether p may see r, a role no organization owns: a system
// role of a scope the caller works in, or a partner's role of the caller's
// partner. An organization's role is decided by find through tenant.Find.
func shared(p *authz.Principal, r *Role) bool {
	if !r.IsSystem {
		return r.PartnerID != nil && p.CanAccessPartner(*r.PartnerID)
	}
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

// orgRole is an organization's role as a record of that organization
// (tenant.Owned), so its reach is decided where every record's is.
type orgRole struct{ r *Role }

// Owner is the organization that owns the role.
func (o orgRole) Owner() authz.Org { return authz.Org{ID: *o.r.OrgID, PartnerID: o.r.OrgPartnerID} }

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
// A role is read by id from GSI1 whoever asks (role ids are global); an
// organization's role then goes through tenant.Find, the one read-by-id,
// which decides the organization's reach on the role already read (no
// second read).
func (s *Service) find(ctx context.Context, p *authz.Principal, id string) (*Role, error) {
	r, err := s.Roles.ByID(ctx, id)
	switch {
	case IsNotFound(err):
		return nil, ErrNotFound
	case err != nil:
		return nil, err
	case r.OrgID == nil && !shared(p, r):
		return nil, ErrNotFound
	case r.OrgID == nil:
		return r, nil
	}
	read := func(context.Context, string) (orgRole, error) { return orgRole{r}, nil }
	o, err := tenant.Find(ctx, p, id, func(ctx context.Context, _, id string) (orgRole, error) { return read(ctx, id) }, read, ErrNotFound)
	if err != nil {
		return nil, err
	}
	return o.r, nil
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
