package tenant

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

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

// ListOrgs returns one page of the organizations the caller can see, by name
// (case-insensitively), then id: List over the organizations' list indexes
// (the caller's own partition, its partner's, every partner's merged for a
// system caller). A partner user with selected organizations sees those.
func (s *Service) ListOrgs(ctx context.Context, f ListFilter) (*Page[Organization], error) {
	p, err := authz.Require(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	return List(ctx, p, Listing[Organization]{St: s.St.St, Orgs: s.St, Name: "ORGS",
		OrgPK: orgListPK, PartnerPK: partnerOrgListPK, OrgWide: true, Self: true},
		ListQuery[Organization]{Page: f.Page, Limit: f.Limit, Cursor: f.Cursor})
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
	o.SetListKeys()
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
	if err := checkOrgPatch(&in); err != nil {
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
	set, changes := o.apply(in)
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

// checkOrgPatch validates an organization's PATCH body (the name trimmed in place).
func checkOrgPatch(in *OrgPatch) error {
	if in.Name == nil && in.Status == nil {
		return ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		*in.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", *in.Name, 255)
	}
	if in.Status != nil {
		valid.OneOf(f, "status", *in.Status, OrgActive, OrgSuspended, OrgTrial)
	}
	return f.Err()
}

// apply makes the change in on o: the attributes to set (a rename moves the
// name-ordered list keys with it) and the audit row's changes.
func (o *Organization) apply(in OrgPatch) (set, changes map[string]any) {
	set, changes = map[string]any{}, map[string]any{}
	if in.Name != nil {
		changes["name"] = map[string]string{"from": o.Name, "to": *in.Name}
		o.Name = *in.Name
		o.SetListKeys()
		set["name"] = o.Name
		for n, v := range map[string]string{"GSI3SK": o.GSI3SK, "GSI4SK": o.GSI4SK} {
			if v != "" {
				set[n] = v
			}
		}
	}
	if in.Status != nil {
		changes["status"] = map[string]string{"from": o.Status, "to": *in.Status}
		o.Status = *in.Status
		set["status"] = o.Status
	}
	return set, changes
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
