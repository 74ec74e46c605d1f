package tenant

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

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
	f := fault.Fields{}
	orgID, name, err := createIn(f, p, in.OrgID, in.Name)
	if err != nil {
		return nil, err
	}
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
	if err := siteKind.create(ctx, s, p, owner, st.ref(), store.PutNew(st), map[string]any{"timezone": tz}, nil); err != nil {
		return nil, err
	}
	return st, nil
}

// GetSite returns site id.
func (s *Service) GetSite(ctx context.Context, id string) (*Site, error) {
	p, err := authz.Require(ctx, authz.SitesRead)
	if err != nil {
		return nil, err
	}
	return get(ctx, s, siteKind, p, id, s.site)
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
		siteKind.audit(s, p, owner, "update", st.ref(), map[string]any{"changes": changes}))
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
	return siteKind.remove(ctx, s, p, st.ref(), deleteSite(st.OrgID, st.ID), func(ctx context.Context) error {
		now, err := s.St.Site(ctx, st.OrgID, st.ID)
		if err != nil {
			return err
		}
		return siteNotEmpty(now)
	}, nil)
}

func siteNotEmpty(st *Site) error {
	return ErrSiteNotEmpty.WithDetails(map[string]int{"deviceGroupCount": st.GroupCount, "deviceCount": st.DeviceCount})
}

// site finds site id (find): its organization in the caller's reach, and
// within their site restriction.
func (s *Service) site(ctx context.Context, p *authz.Principal, id string) (*Site, error) {
	return find(ctx, siteKind, p, id, s.St.SiteByID, func(st *Site) bool { return p.CanAccessSite(st.ID) })
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
