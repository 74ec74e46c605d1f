package role

import (
	"context"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// owner is where a custom role lives: a partner or an organization.
type owner struct {
	key       string // PARTNER#<id> or ORG#<id>
	scope     authz.Scope
	partnerID string // the partner, or the organization's partner
	orgID     string
}

func ownerOfOrg(o authz.Org) owner {
	return owner{key: OrgOwner(o.ID), scope: authz.ScopeOrg, partnerID: o.PartnerID, orgID: o.ID}
}

func ownerOfPartner(partnerID string) owner {
	return owner{key: PartnerOwner(partnerID), scope: authz.ScopePartner, partnerID: partnerID}
}

// ownerOf is the owner of a custom role.
func ownerOf(r *Role) owner {
	if r.OrgID != nil {
		return ownerOfOrg(authz.Org{ID: *r.OrgID, PartnerID: r.OrgPartnerID})
	}
	if r.PartnerID != nil {
		return ownerOfPartner(*r.PartnerID)
	}
	return owner{key: r.Owner, scope: r.Scope}
}

// stamp sets r's owner fields.
func (o owner) stamp(r *Role) {
	r.Owner, r.Scope = o.key, o.scope
	if o.orgID != "" {
		id := o.orgID
		r.OrgID, r.OrgPartnerID = &id, o.partnerID
	} else {
		id := o.partnerID
		r.PartnerID = &id
	}
	r.Keys = keys(o.key, r.ID)
}

// ownerFor resolves where a caller creates or lists roles: the organization they
// name (partner and system callers), or their own partner or organization. Its
// callers opened with authz.RequireTenant, so p acts in a tenant or is the
// system, which names an organization (the system scope is no owner).
func (s *Service) ownerFor(ctx context.Context, p *authz.Principal, orgID string) (owner, error) {
	if err := p.RequireFullPartnerAccess(); err != nil {
		return owner{}, err
	}
	if orgID != "" && !valid.IsUUID(orgID) {
		return owner{}, fault.Invalid("orgId", "must be a UUID")
	}
	switch p.Scope {
	case authz.ScopeOrg:
		if orgID != "" && orgID != p.OrgID {
			return owner{}, ErrOrgNotFound
		}
		// The partner may be unknown here; writeOwner reads it when a write needs it.
		return ownerOfOrg(authz.Org{ID: p.OrgID, PartnerID: p.PartnerID}), nil
	case authz.ScopePartner, authz.ScopeSystem:
		if orgID != "" {
			return s.org(ctx, p, orgID)
		}
		if p.Scope == authz.ScopePartner && p.PartnerID != "" {
			return ownerOfPartner(p.PartnerID), nil
		}
	}
	return owner{}, authz.ErrContextRequired
}

// writeOwner is ownerFor for a write: an organization owner whose partner the
// caller's principal did not carry (organization memberships need not) is
// completed by reading the organization, so the roles it writes record the
// organization's partner for visibility checks.
func (s *Service) writeOwner(ctx context.Context, p *authz.Principal, orgID string) (owner, error) {
	o, err := s.ownerFor(ctx, p, orgID)
	if err != nil || o.scope != authz.ScopeOrg || o.partnerID != "" {
		return o, err
	}
	return s.org(ctx, p, o.orgID)
}

// org reads organization id and checks the caller may reach it (else 404).
func (s *Service) org(ctx context.Context, p *authz.Principal, id string) (owner, error) {
	o, err := s.Orgs.Reach(ctx, p, id)
	if err != nil {
		return owner{}, err
	}
	return ownerOfOrg(o.Ref()), nil
}
