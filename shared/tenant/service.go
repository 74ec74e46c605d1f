package tenant

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// Service holds the rules of the tenancy routes. Every method authorizes first.
//
// Access: an organization the caller cannot reach (another partner's, one outside
// a selected-access partner user's list, another organization's) is 404 for the
// organization and for everything in it. Site-restricted users see only their
// sites (and device groups of their sites); device-group-restricted users only
// their groups. Writes of a partner caller carry "the organization belongs to my
// partner" as a condition on the organization item, so they need no read first.
type Service struct {
	St    Store
	Clock clock.Clock
}

// NewService returns the tenancy service.
func NewService(st Store, clk clock.Clock) *Service { return &Service{St: st, Clock: clk} }

// ownerOf decides what the id alone can decide: whether the caller could reach
// organization orgID at all, and the partner the organization must belong to for
// that to hold ("" when nothing more is needed). Writes put that partner into
// their condition on the organization item; reads (Reach) check it on the item read.
func ownerOf(p *authz.Principal, orgID string) (partnerID string, ok bool) {
	if p.Scope == authz.ScopePartner {
		return p.PartnerID, p.PartnerID != "" && p.CanAccessOrg(authz.Org{ID: orgID, PartnerID: p.PartnerID})
	}
	return "", p.CanAccessOrg(authz.Org{ID: orgID})
}

// listParam resolves the organization a list of sites or device groups reads
// (orgContext, orgParam) and refuses what the id alone decides: an
// organization caller naming another organization is 404 without a read.
// Partner and system callers then check it with Reach, so an unknown id is 404
// for them too.
func listParam(p *authz.Principal, orgID string) (string, error) {
	if err := orgContext(p, orgID); err != nil {
		return "", err
	}
	f := fault.Fields{}
	orgID = orgParam(f, p, orgID)
	if err := f.Err(); err != nil {
		return "", err
	}
	if _, ok := ownerOf(p, orgID); !ok {
		return "", ErrOrgNotFound
	}
	return orgID, nil
}

// listChildren reads one page of an organization's sites or device groups
// (l) for p: the organization of f (listParam; an organization caller's own
// is read without reaching it first), and the rows keep keeps of it, keep
// being p's site or device-group restriction.
func listChildren[T any](ctx context.Context, p *authz.Principal, f ListFilter, l Listing[T], keep func(*T) bool) (*Page[T], error) {
	orgID, err := listParam(p, f.OrgID)
	if err != nil {
		return nil, err
	}
	if p.Scope == authz.ScopeOrg {
		orgID = "" // their own: List reads its partition without a Reach
	}
	return List(ctx, p, l, ListQuery[T]{OrgID: orgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor, Keep: keep})
}

// notFoundAs answers notFound, an item's own 404, for an organization Reach
// refused, so a site or group of an organization out of sight is not found.
func notFoundAs(err, notFound error) error {
	if errors.Is(err, ErrOrgNotFound) {
		return notFound
	}
	return err
}

// orgContext refuses a system caller that names no organization on a route that
// acts in one (sites, device groups) with `Partner or organization context
// required`, as /roles does: system scope is no organization's context.
func orgContext(p *authz.Principal, orgID string) error {
	if orgID == "" && p.Scope == authz.ScopeSystem {
		return authz.ErrContextRequired
	}
	return nil
}

// orgParam resolves the organization a site or device-group request acts in:
// organization callers default to their own; partner and system callers name it.
func orgParam(f fault.Fields, p *authz.Principal, orgID string) string {
	switch {
	case orgID == "" && p.Scope == authz.ScopeOrg && p.OrgID != "":
		return p.OrgID
	case orgID == "":
		f.Add("orgId", "is required for partner scope")
	case !valid.IsUUID(orgID):
		f.Add("orgId", "must be a UUID")
	}
	return orgID
}
