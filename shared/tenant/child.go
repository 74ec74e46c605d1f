package tenant

import (
	"context"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// The lifecycle of an organization's children, sites and device groups: each
// is created counted on its organization (whose row must exist and, for a
// partner caller, be its partner's), found by its own id (GSI1) then held to
// the caller's reach, and deleted under the condition that it is empty and
// uncounted in the same transaction, each step with its audit row. site.go and
// group.go hold what differs: a site's timezone, a group's site.

// kind is what the lifecycle needs of one kind of child.
type kind struct {
	// resource is the audit resource type and the prefix of its actions.
	resource string
	// counter is the organization's count of the kind.
	counter  Counter
	notFound error
}

var (
	siteKind  = kind{resource: "site", counter: CountSites, notFound: ErrSiteNotFound}
	groupKind = kind{resource: "device_group", counter: CountGroups, notFound: ErrGroupNotFound}
)

// childRef is one child: its organization, id and name.
type childRef struct{ orgID, id, name string }

func (st *Site) ref() childRef       { return childRef{orgID: st.OrgID, id: st.ID, name: st.Name} }
func (g *DeviceGroup) ref() childRef { return childRef{orgID: g.OrgID, id: g.ID, name: g.Name} }

// createIn checks what every create of a child takes: the organization it is
// created in (orgContext, orgParam) and its name, trimmed; field errors go to f.
func createIn(f fault.Fields, p *authz.Principal, orgID, name string) (string, string, error) {
	if err := orgContext(p, orgID); err != nil {
		return "", "", err
	}
	orgID = orgParam(f, p, orgID)
	name = strings.TrimSpace(name)
	valid.Name(f, "name", name, 255)
	return orgID, name, nil
}

// audit is the audit row of action verb on child r by p (owner: the partner a
// partner caller's organization must belong to).
func (k kind) audit(s *Service, p *authz.Principal, owner, verb string, r childRef, details map[string]any) *store.Write {
	return audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.orgID, PartnerID: owner, Action: k.resource + "." + verb,
		ResourceType: k.resource, ResourceID: r.id, ResourceName: r.name, Details: details})
}

// create writes child r (put, a new row) counted on its organization, with its
// audit row; site, when not nil, counts it on the site it is in. A lost
// condition on the organization is ErrOrgNotFound, on the site ErrSiteNotFound.
func (k kind) create(ctx context.Context, s *Service, p *authz.Principal, owner string, r childRef, put *store.Write, details map[string]any, site *store.Write) error {
	org, err := k.commit(ctx, s, p, owner, "create", r, put, 1, details, site)
	switch {
	case err == nil:
		return nil
	case failedOn(err, org):
		return ErrOrgNotFound
	case site != nil && failedOn(err, site):
		return ErrSiteNotFound
	}
	return fmt.Errorf("create %s: %w", k.resource, err)
}

// commit writes w (child r's create or delete) in one transaction with its
// organization's count moved by delta, the audit row of verb and site (its
// count on its site) when not nil; it answers the organization's write too,
// to tell whose condition a cancelled commit lost.
func (k kind) commit(ctx context.Context, s *Service, p *authz.Principal, owner, verb string, r childRef, w *store.Write,
	delta int, details map[string]any, site *store.Write) (*store.Write, error) {
	tx := (&store.Tx{}).Add(w)
	org := tx.Include(CountOrg(r.orgID, owner, k.counter, delta))
	tx.Add(k.audit(s, p, owner, verb, r, details))
	if site != nil {
		tx.Add(site)
	}
	return org, s.St.Commit(ctx, tx)
}

// find finds child id by its own id and applies what the id and the item
// decide: the caller's reach over its organization and visible (its site or
// device-group restriction). A partner caller's ownership of the organization
// is still to check (Reach in get, or a condition on the write).
func find[T interface{ ref() childRef }](ctx context.Context, k kind, p *authz.Principal, id string,
	byID func(ctx context.Context, id string) (T, error), visible func(T) bool) (T, error) {
	var zero T
	v, err := byID(ctx, id)
	switch {
	case isNotFound(err):
		return zero, k.notFound
	case err != nil:
		return zero, err
	}
	if _, ok := ownerOf(p, v.ref().orgID); !ok || !visible(v) {
		return zero, k.notFound
	}
	return v, nil
}

// get answers child id (find) for p, a partner caller's after Reach of its
// organization, so another partner's is not found.
func get[T interface{ ref() childRef }](ctx context.Context, s *Service, k kind, p *authz.Principal, id string,
	find func(ctx context.Context, p *authz.Principal, id string) (T, error)) (T, error) {
	var zero T
	if err := valid.PathID("id", id); err != nil {
		return zero, err
	}
	v, err := find(ctx, p, id)
	if err != nil {
		return zero, err
	}
	if p.Scope == authz.ScopePartner { // the item's organization must be their partner's
		if _, err := s.St.Reach(ctx, p, v.ref().orgID); err != nil {
			return zero, notFoundAs(err, k.notFound)
		}
	}
	return v, nil
}

// remove deletes child r (del: its delete, conditional on it being empty) and
// uncounts it on its organization, with its audit row; site, when not nil,
// uncounts it on its site. A lost condition on the organization is not found;
// on the delete, again re-reads the child to tell gone (not found) from not
// empty (its 409).
func (k kind) remove(ctx context.Context, s *Service, p *authz.Principal, r childRef, del *store.Write,
	again func(ctx context.Context) error, site *store.Write) error {
	owner, _ := ownerOf(p, r.orgID)
	org, err := k.commit(ctx, s, p, owner, "delete", r, del, -1, nil, site)
	switch {
	case err == nil:
		return nil
	case failedOn(err, org):
		return k.notFound
	case !failedOn(err, del):
		return fmt.Errorf("delete %s %s: %w", k.resource, r.id, err)
	}
	if err = again(ctx); isNotFound(err) {
		return k.notFound
	}
	return err
}
