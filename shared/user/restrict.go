package user

import (
	"context"
	"slices"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
)

// # Membership edits
//
// PATCH /users/:id also changes what a membership reaches in its tenant:
// siteIds and deviceGroupIds of an organization membership, orgAccess and
// orgIds of a partner membership. They are checked as an invitation checks
// them (checkRestrictions, checkRefs: same messages), and:
//
//   - the caller manages the member (manageable: its level, and a restricted
//     caller only members inside its own restriction);
//   - the result lies inside the caller's own restriction (ErrWiderEdit), so a
//     restricted caller widens no one, itself included, and an unrestricted
//     one has nothing wider to give;
//   - the change is one conditional write of the membership at its version
//     (memberChangeWrite), with the audit record, in the same transaction as
//     whatever else the PATCH changes.
//
// Authentication reads the membership row on every request (auth.Load) and
// tokens carry no restriction, so the member's next request, with the token
// it already holds, sees the new restriction.

// ErrWiderEdit refuses a membership edit beyond the caller's own restriction.
var ErrWiderEdit = fault.Forbidden("Cannot give a user wider site or device group access than your own")

// Restriction is what a membership reaches within its tenant.
type Restriction struct {
	SiteIDs   []string
	GroupIDs  []string
	OrgAccess authz.OrgAccess
	OrgIDs    []string
}

// restricts reports whether the PATCH names a restriction field.
func (in UpdateInput) restricts() bool {
	return in.SiteIDs != nil || in.DeviceGroupIDs != nil || in.OrgAccess != nil || in.OrgIDs != nil
}

// restriction checks the restriction fields of in against member m of t for
// caller p and answers the restriction m moves to, with the audit record of
// what changes; nil when in names none or nothing changes. Absent fields keep
// m's; orgIds without orgAccess keep m's orgAccess, and an orgAccess other
// than selected without orgIds drops them.
func (s *Service) restriction(ctx context.Context, p *authz.Principal, t Target, m *Membership, in UpdateInput) (*Restriction, map[string]any, error) {
	if !in.restricts() {
		return nil, nil, nil
	}
	// inv holds what the body names, as an invitation would (nil when absent).
	var inv InviteInput
	if in.SiteIDs != nil {
		inv.SiteIDs = *in.SiteIDs
	}
	if in.DeviceGroupIDs != nil {
		inv.DeviceGroupIDs = *in.DeviceGroupIDs
	}
	if in.OrgIDs != nil {
		inv.OrgIDs = *in.OrgIDs
	}
	if in.OrgAccess != nil {
		inv.OrgAccess = *in.OrgAccess
	} else if t.Scope == authz.ScopePartner {
		inv.OrgAccess = string(m.OrgAccess)
		if in.OrgIDs == nil && m.OrgAccess == authz.OrgAccessSelected {
			inv.OrgIDs = m.OrgIDs
		}
	}
	f := fault.Fields{}
	access := s.checkRestrictions(f, t, &inv)
	if err := f.Err(); err != nil {
		return nil, nil, err
	}
	next := Restriction{SiteIDs: m.SiteIDs, GroupIDs: m.GroupIDs}
	if in.SiteIDs != nil {
		next.SiteIDs = inv.SiteIDs
	}
	if in.DeviceGroupIDs != nil {
		next.GroupIDs = inv.DeviceGroupIDs
	}
	if t.Scope == authz.ScopePartner {
		next.OrgAccess, next.OrgIDs = access, inv.OrgIDs
	}
	if !withinRestriction(p, next.SiteIDs, next.GroupIDs) {
		return nil, nil, ErrWiderEdit
	}
	// Only the ids the body names are checked: a site deleted since keeps
	// no one from editing the rest.
	named := InviteInput{SiteIDs: nilUnless(in.SiteIDs), DeviceGroupIDs: nilUnless(in.DeviceGroupIDs), OrgIDs: inv.OrgIDs}
	if in.OrgIDs == nil {
		access = ""
	}
	if err := s.checkRefs(ctx, t, named, access); err != nil {
		return nil, nil, err
	}
	details := map[string]any{}
	diff := func(key string, from, to []string) {
		if !slices.Equal(from, to) {
			details[key] = map[string]any{"from": orEmpty(from), "to": orEmpty(to)}
		}
	}
	diff("siteIds", m.SiteIDs, next.SiteIDs)
	diff("deviceGroupIds", m.GroupIDs, next.GroupIDs)
	if t.Scope == authz.ScopePartner {
		if next.OrgAccess != m.OrgAccess {
			details["orgAccess"] = map[string]any{"from": m.OrgAccess, "to": next.OrgAccess}
		}
		diff("orgIds", m.OrgIDs, next.OrgIDs)
	}
	if len(details) == 0 {
		return nil, nil, nil
	}
	return &next, details, nil
}

// apply sets rs on membership m (nil leaves it).
func (rs *Restriction) apply(m *Membership) {
	if rs != nil {
		m.SiteIDs, m.GroupIDs, m.OrgAccess, m.OrgIDs = rs.SiteIDs, rs.GroupIDs, rs.OrgAccess, rs.OrgIDs
	}
}

func nilUnless(xs *[]string) []string {
	if xs == nil {
		return nil
	}
	return *xs
}

// orEmpty renders an absent list as [] in an audit record.
func orEmpty(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
