package tenant

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

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

// ListSites returns one page of the sites of an organization the caller can
// see, by name (case-insensitively), then id (listChildren).
func (s *Service) ListSites(ctx context.Context, f ListFilter) (*Page[Site], error) {
	p, err := authz.Require(ctx, authz.SitesRead)
	if err != nil {
		return nil, err
	}
	l := Listing[Site]{St: s.St.St, Orgs: s.St, Name: "SITES", OrgPK: siteListPK,
		Counter: func(o *Organization) int { return o.SiteCount }}
	return listChildren(ctx, p, f, l, func(st *Site) bool { return p.CanAccessSite(strings.TrimPrefix(st.SK, siteSK)) })
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
	st.SetListKeys()
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
		set["GSI4SK"] = listSK(st.Name, st.ID)
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
