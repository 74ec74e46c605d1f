package tenant

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	// The IANA database is compiled in: a Lambda image has no /usr/share/zoneinfo,
	// and a site's timezone must validate the same everywhere.

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
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

// OrgInput is the body of POST /organizations.
type OrgInput struct {
	// PartnerID is required from system scope; a partner caller's own partner otherwise.
	PartnerID string `json:"partnerId"`
	Name      string `json:"name"`
	// Status defaults to active.
	Status string `json:"status"`
}

// OrgPatch is a PATCH /organizations/:id (orgPatchBody checked); nil fields
// are unchanged.
type OrgPatch struct {
	Name   *string
	Status *string
}

// SecurityInput is the body of PUT /organizations/:id/security-settings.
type SecurityInput struct {
	RequireMFA        *bool    `json:"requireMfa"`
	AllowedMFAMethods []string `json:"allowedMfaMethods"`
}

// SiteInput is the body of POST /sites.
type SiteInput struct {
	// OrgID is required from partner and system scope; an organization caller's own otherwise.
	OrgID string `json:"orgId"`
	Name  string `json:"name"`
	// Timezone is an IANA name; UTC when absent.
	Timezone *string `json:"timezone"`
}

// SitePatch is a PATCH /sites/:id (sitePatchBody checked); nil fields are
// unchanged.
type SitePatch struct {
	Name     *string
	Timezone *string
}

// GroupInput is the body of POST /device-groups.
type GroupInput struct {
	OrgID  string `json:"orgId"`
	SiteID string `json:"siteId"`
	Name   string `json:"name"`
}

// ---- organizations -------------------------------------------------------

// ListOrgs returns the organizations the caller can see, by name.
func (s *Service) ListOrgs(ctx context.Context) ([]Organization, error) {
	p, err := authz.Require(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	var orgs []Organization
	switch v := p.Visible(); {
	case v.All:
		orgs, err = s.St.AllOrgs(ctx)
	case v.PartnerID != "":
		orgs, err = s.St.PartnerOrgs(ctx, v.PartnerID)
	case len(v.OrgIDs) > 0:
		orgs, err = s.St.OrgsByID(ctx, v.OrgIDs)
	}
	if err != nil {
		return nil, err
	}
	// The queries above are already the caller's reach; the filter keeps a
	// selected id of another partner out.
	orgs = slices.DeleteFunc(orgs, func(o Organization) bool { return !p.CanAccessOrg(o.Ref()) })
	slices.SortFunc(orgs, func(a, b Organization) int { return byName(a.Name, a.ID, b.Name, b.ID) })
	if orgs == nil {
		orgs = []Organization{}
	}
	return orgs, nil
}

// CreateOrg creates an organization of the caller's partner (or, from system
// scope, of the partner the body names).
func (s *Service) CreateOrg(ctx context.Context, in OrgInput) (*Organization, error) {
	p, err := authz.Require(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeSystem && p.Scope != authz.ScopePartner {
		return nil, ErrPartnerOrSystem
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := strings.TrimSpace(in.Name)
	valid.Name(f, "name", name, 255)
	status := cmp.Or(in.Status, OrgActive)
	valid.OneOf(f, "status", status, OrgActive, OrgSuspended, OrgTrial)
	partnerID := in.PartnerID
	switch {
	case p.Scope == authz.ScopePartner && partnerID == "":
		partnerID = p.PartnerID
	case partnerID == "":
		f.Add("partnerId", "is required for system scope")
	case !valid.IsUUID(partnerID):
		f.Add("partnerId", "must be a UUID")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if !p.CanAccessPartner(partnerID) {
		return nil, ErrPartnerNotFound
	}
	now := clock.Format(s.Clock.Now())
	o := &Organization{ID: uuid.NewString(), PartnerID: partnerID, Name: name, Status: status, CreatedAt: now, UpdatedAt: now}
	o.Keys = OrgKeys(o.ID, partnerID)
	tx := &store.Tx{}
	tx.Add(store.PutNew(o))
	partner := tx.Include(checkPartner(partnerID))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), PartnerID: partnerID, Action: "organization.create",
			ResourceType: "organization", ResourceID: o.ID, ResourceName: o.Name, Details: map[string]any{"status": status}}),
	)
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedOn(err, partner) {
			return nil, ErrPartnerNotFound
		}
		return nil, fmt.Errorf("create organization: %w", err)
	}
	return o, nil
}

// GetOrg returns organization id.
func (s *Service) GetOrg(ctx context.Context, id string) (*Organization, error) {
	p, err := authz.Require(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	return s.St.Reach(ctx, p, id)
}

// UpdateOrg renames an organization or changes its status. Only partner and
// system callers change a status: an organization must not lift its own suspension.
func (s *Service) UpdateOrg(ctx context.Context, id string, in OrgPatch) (*Organization, error) {
	p, err := authz.Require(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	if in.Name == nil && in.Status == nil {
		return nil, ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", *in.Name, 255)
	}
	if in.Status != nil {
		valid.OneOf(f, "status", *in.Status, OrgActive, OrgSuspended, OrgTrial)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	o, err := s.St.Reach(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if in.Status != nil && *in.Status != o.Status && p.Scope != authz.ScopeSystem && p.Scope != authz.ScopePartner {
		return nil, ErrStatusScope
	}
	now := clock.Format(s.Clock.Now())
	set := map[string]any{}
	changes := map[string]any{}
	if in.Name != nil {
		changes["name"] = map[string]string{"from": o.Name, "to": *in.Name}
		o.Name = *in.Name
		set["name"] = o.Name
	}
	if in.Status != nil {
		changes["status"] = map[string]string{"from": o.Status, "to": *in.Status}
		o.Status = *in.Status
		set["status"] = o.Status
	}
	o.UpdatedAt = now
	tx := &store.Tx{}
	w := tx.Include(changeWrite(OrgKey(id), set, now))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.ID, PartnerID: o.PartnerID, Action: "organization.update",
			ResourceType: "organization", ResourceID: o.ID, ResourceName: o.Name, Details: map[string]any{"changes": changes}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedOn(err, w) {
			return nil, ErrOrgNotFound
		}
		return nil, fmt.Errorf("update organization %s: %w", id, err)
	}
	return o, nil
}

// DeleteOrg deletes an organization with no sites, device groups, members or
// devices; a non-empty one is 409 with its counts. The delete is conditional on
// the counts, so it cannot race a child's create (which increments them).
func (s *Service) DeleteOrg(ctx context.Context, id string) error {
	p, err := authz.Require(ctx, authz.OrgsWrite)
	if err != nil {
		return err
	}
	if p.Scope != authz.ScopeSystem && p.Scope != authz.ScopePartner {
		return ErrPartnerOrSystem
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return err
	}
	if err := valid.PathID("id", id); err != nil {
		return err
	}
	o, err := s.St.Reach(ctx, p, id)
	if err != nil {
		return err
	}
	if orgBusy(o) {
		return orgNotEmpty(o)
	}
	tx := &store.Tx{}
	del := tx.Include(deleteOrg(id))
	tx.Add(
		deleteSecurity(id),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), PartnerID: o.PartnerID, Action: "organization.delete",
			ResourceType: "organization", ResourceID: o.ID, ResourceName: o.Name}),
	)
	if err := s.St.Commit(ctx, tx); err != nil {
		if !failedOn(err, del) {
			return fmt.Errorf("delete organization %s: %w", id, err)
		}
		// A child was created (or the organization deleted) since the read.
		now, rerr := s.St.Org(ctx, id)
		switch {
		case isNotFound(rerr):
			return ErrOrgNotFound
		case rerr != nil:
			return rerr
		}
		return orgNotEmpty(now)
	}
	return nil
}

func orgBusy(o *Organization) bool {
	return o.SiteCount > 0 || o.GroupCount > 0 || o.MemberCount > 0 || o.DeviceCount > 0
}

func orgNotEmpty(o *Organization) error {
	return ErrOrgNotEmpty.WithDetails(map[string]int{"siteCount": o.SiteCount, "deviceGroupCount": o.GroupCount,
		"memberCount": o.MemberCount, "deviceCount": o.DeviceCount})
}

// GetSecurity returns an organization's MFA policy (defaults when never set).
func (s *Service) GetSecurity(ctx context.Context, orgID string) (*SecuritySettings, error) {
	p, err := authz.Require(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", orgID); err != nil {
		return nil, err
	}
	if _, ok := ownerOf(p, orgID); !ok {
		return nil, ErrOrgNotFound
	}
	o, sec, err := s.St.OrgAndSecurity(ctx, orgID)
	switch {
	case isNotFound(err):
		return nil, ErrOrgNotFound
	case err != nil:
		return nil, err
	case !p.CanAccessOrg(o.Ref()):
		return nil, ErrOrgNotFound
	}
	return &sec, nil
}

// PutSecurity replaces an organization's MFA policy.
func (s *Service) PutSecurity(ctx context.Context, orgID string, in SecurityInput) (*SecuritySettings, error) {
	p, err := authz.Require(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	if err := valid.PathID("id", orgID); err != nil {
		return nil, err
	}
	owner, ok := ownerOf(p, orgID)
	if !ok {
		return nil, ErrOrgNotFound
	}
	f := fault.Fields{}
	if in.RequireMFA == nil {
		f.Add("requireMfa", "is required")
	}
	if len(in.AllowedMFAMethods) == 0 {
		f.Add("allowedMfaMethods", "must list at least one of "+strings.Join(MFAMethods, ", "))
	}
	for i, m := range in.AllowedMFAMethods {
		path := fmt.Sprintf("allowedMfaMethods.%d", i)
		valid.OneOf(f, path, m, MFAMethods...)
		if slices.Index(in.AllowedMFAMethods, m) < i {
			f.Add(path, "is listed twice")
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	sec := DefaultSecurity(orgID)
	sec.RequireMFA = *in.RequireMFA
	// Stored in the catalogue's order, whatever the order sent.
	sec.AllowedMFAMethods = slices.DeleteFunc(slices.Clone(MFAMethods), func(m string) bool {
		return !slices.Contains(in.AllowedMFAMethods, m)
	})
	sec.UpdatedAt = now
	tx := &store.Tx{}
	tx.Add(store.Put(sec))
	org := tx.Include(CheckOrg(orgID, owner))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: orgID, PartnerID: owner, Action: "organization.security_settings.update",
			ResourceType: "organization", ResourceID: orgID,
			Details: map[string]any{"requireMfa": sec.RequireMFA, "allowedMfaMethods": sec.AllowedMFAMethods}}),
	)
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedOn(err, org) {
			return nil, ErrOrgNotFound
		}
		return nil, fmt.Errorf("security settings of %s: %w", orgID, err)
	}
	return &sec, nil
}

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

func byName(an, aid, bn, bid string) int {
	if c := cmp.Compare(strings.ToLower(an), strings.ToLower(bn)); c != 0 {
		return c
	}
	return cmp.Compare(aid, bid)
}

// ---- sites ---------------------------------------------------------------

// ListSites returns the sites of an organization the caller can see, by name.
func (s *Service) ListSites(ctx context.Context, orgID string) ([]Site, error) {
	p, err := authz.Require(ctx, authz.SitesRead)
	if err != nil {
		return nil, err
	}
	if orgID, err = listParam(p, orgID); err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeOrg {
		if _, err := s.St.Reach(ctx, p, orgID); err != nil {
			return nil, err
		}
	}
	sites, err := s.St.Sites(ctx, orgID)
	if err != nil {
		return nil, err
	}
	sites = slices.DeleteFunc(sites, func(st Site) bool { return !p.CanAccessSite(st.ID) })
	slices.SortFunc(sites, func(a, b Site) int { return byName(a.Name, a.ID, b.Name, b.ID) })
	return sites, nil
}

// CreateSite creates a site and counts it on its organization in one transaction
// that requires the organization to exist.
func (s *Service) CreateSite(ctx context.Context, in SiteInput) (*Site, error) {
	p, err := authz.Require(ctx, authz.SitesWrite)
	if err != nil {
		return nil, err
	}
	if p.SiteRestricted() {
		return nil, ErrSiteRestricted
	}
	if err := orgContext(p, in.OrgID); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	orgID := orgParam(f, p, in.OrgID)
	name := strings.TrimSpace(in.Name)
	valid.Name(f, "name", name, 255)
	tz := "UTC"
	if in.Timezone != nil {
		tz = *in.Timezone
		timezone(f, "timezone", tz)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	owner, ok := ownerOf(p, orgID)
	if !ok {
		return nil, ErrOrgNotFound
	}
	now := clock.Format(s.Clock.Now())
	st := &Site{ID: uuid.NewString(), OrgID: orgID, Name: name, Timezone: tz, CreatedAt: now, UpdatedAt: now}
	st.Keys = SiteKeys(orgID, st.ID)
	tx := &store.Tx{}
	tx.Add(store.PutNew(st))
	org := tx.Include(CountOrg(orgID, owner, CountSites, 1))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: orgID, PartnerID: owner, Action: "site.create",
			ResourceType: "site", ResourceID: st.ID, ResourceName: st.Name, Details: map[string]any{"timezone": tz}}),
	)
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedOn(err, org) {
			return nil, ErrOrgNotFound
		}
		return nil, fmt.Errorf("create site: %w", err)
	}
	return st, nil
}

// GetSite returns site id.
func (s *Service) GetSite(ctx context.Context, id string) (*Site, error) {
	p, err := authz.Require(ctx, authz.SitesRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	st, err := s.site(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if p.Scope == authz.ScopePartner { // the item's organization must be their partner's
		if _, err := s.St.Reach(ctx, p, st.OrgID); err != nil {
			return nil, notFoundAs(err, ErrSiteNotFound)
		}
	}
	return st, nil
}

// UpdateSite renames a site or changes its timezone.
func (s *Service) UpdateSite(ctx context.Context, id string, in SitePatch) (*Site, error) {
	p, err := authz.Require(ctx, authz.SitesWrite)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	if in.Name == nil && in.Timezone == nil {
		return nil, ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", *in.Name, 255)
	}
	if in.Timezone != nil {
		timezone(f, "timezone", *in.Timezone)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	st, err := s.site(ctx, p, id)
	if err != nil {
		return nil, err
	}
	owner, _ := ownerOf(p, st.OrgID)
	now := clock.Format(s.Clock.Now())
	set := map[string]any{}
	changes := map[string]any{}
	if in.Name != nil {
		changes["name"] = map[string]string{"from": st.Name, "to": *in.Name}
		st.Name = *in.Name
		set["name"] = st.Name
	}
	if in.Timezone != nil {
		changes["timezone"] = map[string]string{"from": st.Timezone, "to": *in.Timezone}
		st.Timezone = *in.Timezone
		set["timezone"] = st.Timezone
	}
	st.UpdatedAt = now
	k := SiteKeys(st.OrgID, st.ID)
	tx := (&store.Tx{}).Add(changeWrite(store.KeyRef{PK: k.PK, SK: k.SK}, set, now),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: st.OrgID, PartnerID: owner, Action: "site.update",
			ResourceType: "site", ResourceID: st.ID, ResourceName: st.Name, Details: map[string]any{"changes": changes}}))
	if owner != "" {
		tx.Add(CheckOrg(st.OrgID, owner))
	}
	if err := s.St.Commit(ctx, tx); err != nil {
		if conditionFailed(err) {
			// The site is gone, or (partner caller) its organization is not theirs.
			return nil, ErrSiteNotFound
		}
		return nil, fmt.Errorf("update site %s: %w", id, err)
	}
	return st, nil
}

// DeleteSite deletes a site with no device groups and no devices, and uncounts
// it on its organization.
func (s *Service) DeleteSite(ctx context.Context, id string) error {
	p, err := authz.Require(ctx, authz.SitesDelete)
	if err != nil {
		return err
	}
	if p.SiteRestricted() {
		return ErrSiteRestricted
	}
	if err := valid.PathID("id", id); err != nil {
		return err
	}
	st, err := s.site(ctx, p, id)
	if err != nil {
		return err
	}
	if st.GroupCount > 0 || st.DeviceCount > 0 {
		return siteNotEmpty(st)
	}
	owner, _ := ownerOf(p, st.OrgID)
	tx := &store.Tx{}
	del := tx.Include(deleteSite(st.OrgID, st.ID))
	org := tx.Include(CountOrg(st.OrgID, owner, CountSites, -1))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: st.OrgID, PartnerID: owner, Action: "site.delete",
			ResourceType: "site", ResourceID: st.ID, ResourceName: st.Name}),
	)
	if err := s.St.Commit(ctx, tx); err != nil {
		switch {
		case failedOn(err, org):
			return ErrSiteNotFound
		case !failedOn(err, del):
			return fmt.Errorf("delete site %s: %w", id, err)
		}
		now, rerr := s.St.Site(ctx, st.OrgID, st.ID)
		switch {
		case isNotFound(rerr):
			return ErrSiteNotFound
		case rerr != nil:
			return rerr
		}
		return siteNotEmpty(now)
	}
	return nil
}

func siteNotEmpty(st *Site) error {
	return ErrSiteNotEmpty.WithDetails(map[string]int{"deviceGroupCount": st.GroupCount, "deviceCount": st.DeviceCount})
}

// site finds site id and applies what the id and the item decide: the caller's
// reach over its organization and their site restriction. Partner callers'
// ownership of the organization is still to check (Reach, or a condition).
func (s *Service) site(ctx context.Context, p *authz.Principal, id string) (*Site, error) {
	st, err := s.St.SiteByID(ctx, id)
	switch {
	case isNotFound(err):
		return nil, ErrSiteNotFound
	case err != nil:
		return nil, err
	}
	if _, ok := ownerOf(p, st.OrgID); !ok || !p.CanAccessSite(st.ID) {
		return nil, ErrSiteNotFound
	}
	return st, nil
}

// timezone checks an IANA zone name ("Local" and "" are not zones).
func timezone(f fault.Fields, path, tz string) {
	if tz == "" || tz == "Local" || len(tz) > 64 {
		f.Add(path, "must be an IANA time zone such as Europe/Berlin")
		return
	}
	if _, err := time.LoadLocation(tz); err != nil {
		f.Add(path, "must be an IANA time zone such as Europe/Berlin")
	}
}

// ---- device groups ---------------------------------------------------------

// ListGroups returns the device groups of an organization the caller can see.
func (s *Service) ListGroups(ctx context.Context, orgID string) ([]DeviceGroup, error) {
	p, err := authz.Require(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	if orgID, err = listParam(p, orgID); err != nil {
		return nil, err
	}
	if p.Scope != authz.ScopeOrg {
		if _, err := s.St.Reach(ctx, p, orgID); err != nil {
			return nil, err
		}
	}
	groups, err := s.St.Groups(ctx, orgID)
	if err != nil {
		return nil, err
	}
	groups = slices.DeleteFunc(groups, func(g DeviceGroup) bool { return !groupVisible(p, &g) })
	slices.SortFunc(groups, func(a, b DeviceGroup) int { return byName(a.Name, a.ID, b.Name, b.ID) })
	return groups, nil
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
	if err := orgContext(p, in.OrgID); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	orgID := orgParam(f, p, in.OrgID)
	name := strings.TrimSpace(in.Name)
	valid.Name(f, "name", name, 255)
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
	details := map[string]any{}
	if in.SiteID != "" {
		g.SiteID = &in.SiteID
		details["siteId"] = in.SiteID
	}
	tx := &store.Tx{}
	tx.Add(store.PutNew(g))
	org := tx.Include(CountOrg(orgID, owner, CountGroups, 1))
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: orgID, PartnerID: owner, Action: "device_group.create",
		ResourceType: "device_group", ResourceID: g.ID, ResourceName: g.Name, Details: details}))
	var site *store.Write
	if in.SiteID != "" {
		site = tx.Include(CountSite(orgID, in.SiteID, CountGroups, 1))
	}
	if err := s.St.Commit(ctx, tx); err != nil {
		switch {
		case failedOn(err, org):
			return nil, ErrOrgNotFound
		case site != nil && failedOn(err, site):
			return nil, ErrSiteNotFound
		}
		return nil, fmt.Errorf("create device group: %w", err)
	}
	return g, nil
}

// GetGroup returns device group id.
func (s *Service) GetGroup(ctx context.Context, id string) (*DeviceGroup, error) {
	p, err := authz.Require(ctx, authz.DevicesRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	g, err := s.group(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if p.Scope == authz.ScopePartner { // the item's organization must be their partner's
		if _, err := s.St.Reach(ctx, p, g.OrgID); err != nil {
			return nil, notFoundAs(err, ErrGroupNotFound)
		}
	}
	return g, nil
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
	case in.SiteID.Bad:
		f.Add("siteId", "must be a UUID or null")
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
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: g.OrgID, PartnerID: owner, Action: "device_group.update",
		ResourceType: "device_group", ResourceID: g.ID, ResourceName: next.Name, Details: map[string]any{"changes": changes}}))
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
	owner, _ := ownerOf(p, g.OrgID)
	tx := &store.Tx{}
	del := tx.Include(deleteGroup(g.OrgID, g.ID))
	org := tx.Include(CountOrg(g.OrgID, owner, CountGroups, -1))
	tx.Add(
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: g.OrgID, PartnerID: owner, Action: "device_group.delete",
			ResourceType: "device_group", ResourceID: g.ID, ResourceName: g.Name}),
	)
	if g.SiteID != nil {
		tx.Add(CountSite(g.OrgID, *g.SiteID, CountGroups, -1))
	}
	if err := s.St.Commit(ctx, tx); err != nil {
		switch {
		case failedOn(err, org):
			return ErrGroupNotFound
		case !failedOn(err, del):
			return fmt.Errorf("delete device group %s: %w", id, err)
		}
		now, rerr := s.St.Group(ctx, g.OrgID, g.ID)
		switch {
		case isNotFound(rerr):
			return ErrGroupNotFound
		case rerr != nil:
			return rerr
		}
		return groupNotEmpty(now)
	}
	return nil
}

func groupNotEmpty(g *DeviceGroup) error {
	return ErrGroupNotEmpty.WithDetails(map[string]int{"deviceCount": g.DeviceCount})
}

// group finds device group id and applies the caller's reach and restrictions.
func (s *Service) group(ctx context.Context, p *authz.Principal, id string) (*DeviceGroup, error) {
	g, err := s.St.GroupByID(ctx, id)
	switch {
	case isNotFound(err):
		return nil, ErrGroupNotFound
	case err != nil:
		return nil, err
	}
	if _, ok := ownerOf(p, g.OrgID); !ok || !groupVisible(p, g) {
		return nil, ErrGroupNotFound
	}
	return g, nil
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
