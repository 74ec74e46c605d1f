package tenant

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// GroupInput is the body of POST /device-groups.
type GroupInput struct {
	OrgID  string `json:"orgId"`
	SiteID string `json:"siteId"`
	Name   string `json:"name"`
}

// ListGroups returns one page of the device groups of an organization the
// caller can see, by name (case-insensitively), then id (listChildren).
func (s *Service) ListGroups(ctx context.Context, f ListFilter) (*Page[DeviceGroup], error) {
	p, err := authz.Require(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	l := Listing[DeviceGroup]{St: s.St.St, Orgs: s.St, Name: "DGROUPS", OrgPK: groupListPK,
		Counter: func(o *Organization) int { return o.GroupCount }}
	return listChildren(ctx, p, f, l, func(g *DeviceGroup) bool {
		g.ID = strings.TrimPrefix(g.SK, groupSK) // an index row projects no id
		return groupVisible(p, g)
	})
}

// CreateGroup creates a device group, optionally within a site, counting it on
// its organization (and site) in one transaction that requires both to exist.
func (s *Service) CreateGroup(ctx context.Context, in GroupInput) (*DeviceGroup, error) {
	p, err := authz.Require(ctx, authz.DevicesWrite)
	if err != nil {
		return nil, err
	}
	if groupRestricted(p) {
		return nil, ErrGroupRestricted
	}
	f := fault.Fields{}
	orgID, name, err := createIn(f, p, in.OrgID, in.Name)
	if err != nil {
		return nil, err
	}
	if in.SiteID != "" {
		valid.UUID(f, "siteId", in.SiteID)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if p.SiteRestricted() && in.SiteID == "" {
		return nil, ErrSiteRequired
	}
	owner, ok := ownerOf(p, orgID)
	if !ok {
		return nil, ErrOrgNotFound
	}
	if in.SiteID != "" && !p.CanAccessSite(in.SiteID) {
		return nil, ErrSiteNotFound
	}
	now := clock.Format(s.Clock.Now())
	g := &DeviceGroup{ID: uuid.NewString(), OrgID: orgID, Name: name, CreatedAt: now}
	g.Keys = GroupKeys(orgID, g.ID)
	g.SetListKeys()
	details := map[string]any{}
	var site *store.Write
	if in.SiteID != "" {
		g.SiteID = &in.SiteID
		details["siteId"] = in.SiteID
		site = CountSite(orgID, in.SiteID, CountGroups, 1)
	}
	if err := groupKind.create(ctx, s, p, owner, g.ref(), store.PutNew(g), details, site); err != nil {
		return nil, err
	}
	return g, nil
}

// GetGroup returns device group id.
func (s *Service) GetGroup(ctx context.Context, id string) (*DeviceGroup, error) {
	p, err := authz.Require(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	return get(ctx, s, groupKind, p, id, s.group)
}

// GroupPatch is a PATCH /device-groups/:id (groupPatchBody checked): nil or
// absent fields are unchanged; siteId null or "" detaches the group from its
// site.
type GroupPatch struct {
	Name   *string
	SiteID valid.Opt[string]
}

// ErrGroupChanged is a lost compare-and-swap on a device group's site.
var ErrGroupChanged = fault.Conflict("Device group was changed by another request; retry").WithCode(fault.CodeRaceLost)

// UpdateGroup renames a device group or moves it to another site of its
// organization (or out of any site), with the tenancy of the other
// device-group routes: devices:write; a group out of reach or invisible to the
// caller's restrictions is 404; a device-group-restricted caller cannot change
// groups; a site-restricted caller may only move a group between their sites.
// The site's groupCount moves with the group in the same transaction, guarded
// by a compare-and-swap on the group's current site.
func (s *Service) UpdateGroup(ctx context.Context, id string, in GroupPatch) (*DeviceGroup, error) {
	p, err := authz.Require(ctx, authz.DevicesWrite)
	if err != nil {
		return nil, err
	}
	if groupRestricted(p) {
		return nil, ErrGroupRestricted
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	siteID, err := checkGroupPatch(p, &in)
	if err != nil {
		return nil, err
	}
	g, err := s.group(ctx, p, id)
	if err != nil {
		return nil, err
	}
	oldSite := ""
	if g.SiteID != nil {
		oldSite = *g.SiteID
	}
	newSite := oldSite
	if in.SiteID.Set {
		newSite = siteID
	}
	changes := map[string]any{}
	next := *g
	if in.Name != nil {
		changes["name"] = map[string]string{"from": g.Name, "to": *in.Name}
		next.Name = *in.Name
	}
	if newSite != oldSite {
		changes["siteId"] = map[string]string{"from": oldSite, "to": newSite}
		next.SiteID = nil
		if newSite != "" {
			next.SiteID = &newSite
		}
	}
	if err := s.writeGroup(ctx, p, g, &next, oldSite, newSite, changes); err != nil {
		return nil, err
	}
	return &next, nil
}

// checkGroupPatch validates a device-group PATCH body (trimming its name) and
// the caller's site restriction against it, and returns the site it names ("":
// none, or out of any site).
func checkGroupPatch(p *authz.Principal, in *GroupPatch) (string, error) {
	if in.Name == nil && !in.SiteID.Set {
		return "", ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", *in.Name, 255)
	}
	siteID := ""
	switch {
	case in.SiteID.Wrong(f, "siteId", "a UUID or null"):
	case in.SiteID.Value != nil && *in.SiteID.Value != "":
		siteID = *in.SiteID.Value
		valid.UUID(f, "siteId", siteID)
	}
	if err := f.Err(); err != nil {
		return "", err
	}
	if in.SiteID.Set && siteID == "" && p.SiteRestricted() {
		return "", ErrSiteRequired
	}
	if siteID != "" && !p.CanAccessSite(siteID) {
		return "", ErrSiteNotFound
	}
	return siteID, nil
}

// writeGroup commits group g's change to next (from site oldSite to newSite)
// with its audit record, the organization's ownership check and both sites'
// group counts, mapping a lost condition to the request's answer.
func (s *Service) writeGroup(ctx context.Context, p *authz.Principal, g, next *DeviceGroup, oldSite, newSite string, changes map[string]any) error {
	owner, _ := ownerOf(p, g.OrgID)
	tx := &store.Tx{}
	upd := tx.Include(updateGroup(g.OrgID, g.ID, next.Name, oldSite, newSite))
	tx.Add(groupKind.audit(s, p, owner, "update", next.ref(), map[string]any{"changes": changes}))
	var orgCheck, newCount *store.Write
	if owner != "" {
		orgCheck = tx.Include(CheckOrg(g.OrgID, owner))
	}
	if newSite != oldSite {
		if newSite != "" {
			newCount = tx.Include(CountSite(g.OrgID, newSite, CountGroups, 1))
		}
		if oldSite != "" {
			tx.Add(CountSite(g.OrgID, oldSite, CountGroups, -1))
		}
	}
	err := s.St.Commit(ctx, tx)
	switch {
	case err == nil:
		return nil
	case orgCheck != nil && failedOn(err, orgCheck):
		return ErrGroupNotFound
	case newCount != nil && failedOn(err, newCount) && !failedOn(err, upd):
		return ErrSiteNotFound // a site of another organization, or gone
	case !failedOn(err, upd):
		return fmt.Errorf("update device group %s: %w", g.ID, err)
	}
	if _, rerr := s.St.Group(ctx, g.OrgID, g.ID); isNotFound(rerr) {
		return ErrGroupNotFound
	}
	return ErrGroupChanged
}

// DeleteGroup deletes a device group with no devices and uncounts it.
func (s *Service) DeleteGroup(ctx context.Context, id string) error {
	p, err := authz.Require(ctx, authz.DevicesWrite)
	if err != nil {
		return err
	}
	if groupRestricted(p) {
		return ErrGroupRestricted
	}
	if err := valid.PathID("id", id); err != nil {
		return err
	}
	g, err := s.group(ctx, p, id)
	if err != nil {
		return err
	}
	if g.DeviceCount > 0 {
		return groupNotEmpty(g)
	}
	var site *store.Write
	if g.SiteID != nil {
		site = CountSite(g.OrgID, *g.SiteID, CountGroups, -1)
	}
	return groupKind.remove(ctx, s, p, g.ref(), deleteGroup(g.OrgID, g.ID), func(ctx context.Context) error {
		now, err := s.St.Group(ctx, g.OrgID, g.ID)
		if err != nil {
			return err
		}
		return groupNotEmpty(now)
	}, site)
}

func groupNotEmpty(g *DeviceGroup) error {
	return ErrGroupNotEmpty.WithDetails(map[string]int{"deviceCount": g.DeviceCount})
}

// group finds device group id (find): its organization in the caller's
// reach, and visible to their site and device-group restrictions.
func (s *Service) group(ctx context.Context, p *authz.Principal, id string) (*DeviceGroup, error) {
	return find(ctx, groupKind, p, id, s.St.GroupByID, func(g *DeviceGroup) bool { return groupVisible(p, g) })
}

// groupVisible applies site and device-group restrictions: a group without a
// site is visible only to callers without a site restriction.
func groupVisible(p *authz.Principal, g *DeviceGroup) bool {
	site := ""
	if g.SiteID != nil {
		site = *g.SiteID
	}
	return p.CanAccessSite(site) && p.CanAccessDeviceGroups([]string{g.ID})
}

func groupRestricted(p *authz.Principal) bool {
	return p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0
}
