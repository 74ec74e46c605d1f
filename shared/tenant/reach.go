package tenant

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// Reach reads organization id if p can access it; an organization that does
// not exist or lies out of p's reach is ErrOrgNotFound alike. What the id alone
// decides (another organization for an organization caller, another partner's
// or an unselected one for a partner caller) is refused before any read. It is
// the one organization check of every service (tenant.Store satisfies their
// Orgs interfaces); a record found by its own id goes through Find.
func (s Store) Reach(ctx context.Context, p *authz.Principal, id string) (*Organization, error) {
	if _, ok := ownerOf(p, id); !ok {
		return nil, ErrOrgNotFound
	}
	o, err := s.Org(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrOrgNotFound
	case err != nil:
		return nil, err
	case !p.CanAccessOrg(o.Ref()):
		return nil, ErrOrgNotFound
	}
	return o, nil
}

// Reachable lists the ids of the organizations p can access: its own
// (organization scope, no read), its partner's or its selected ones (one
// query), or all (system scope).
func (s Store) Reachable(ctx context.Context, p *authz.Principal) ([]string, error) {
	v := p.Visible()
	var orgs []Organization
	var err error
	switch {
	case v.All:
		orgs, err = s.AllOrgs(ctx)
	case v.PartnerID != "":
		orgs, err = s.PartnerOrgs(ctx, v.PartnerID)
	case p.Scope == authz.ScopeOrg:
		return v.OrgIDs, nil
	case len(v.OrgIDs) > 0:
		orgs, err = s.OrgsByID(ctx, v.OrgIDs)
	}
	if err != nil {
		return nil, err
	}
	ids := []string{}
	for _, o := range orgs {
		if p.CanAccessOrg(o.Ref()) {
			ids = append(ids, o.ID)
		}
	}
	return ids, nil
}

// CreateOrg is the organization a create acts in: an organization caller's
// own (a body orgId is ignored); otherwise the body's orgId, which is required
// and must be a UUID (recorded in f). Reach then checks that p can access it.
func CreateOrg(f fault.Fields, p *authz.Principal, orgID string) string {
	switch {
	case p.Scope == authz.ScopeOrg:
		return p.OrgID
	case orgID == "":
		f.Add("orgId", "is required for partner and system scope")
	default:
		valid.UUID(f, "orgId", orgID)
	}
	return orgID
}

// GroupInReach reports whether device group id of organization orgID exists
// and lies within p's reach: the organization, p's site restriction (a group
// of another site, or of no site for a site-restricted caller, is out of it)
// and p's device-group restriction. Every write that puts something into a
// group checks it, as reads of groups do (Service.group).
func (s Store) GroupInReach(ctx context.Context, p *authz.Principal, orgID, id string) (bool, error) {
	if _, ok := ownerOf(p, orgID); !ok {
		return false, nil
	}
	g, err := s.Group(ctx, orgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, err
	}
	return groupVisible(p, g), nil
}
