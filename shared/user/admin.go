package user

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// The rules every change of a member obeys, before anything is written:
//
//   - Level: the caller holds every permission the member's role grants
//     (inherited ones included); a *:* holder is managed only by a *:* holder.
//   - Restriction: a site- or device-group-restricted caller manages only
//     members restricted within its own sites or groups, and invites only
//     within them.
//   - Account-wide fields (name, status of the account) change only when the
//     caller's tenant holds every membership of the account, or from system
//     scope. Otherwise a status change suspends or restores the membership in
//     the caller's scope, and a name change is 403.
//   - The last administrator of a partner (*:*) or organization (every
//     permission of Org Admin) is never disabled, suspended, removed or
//     demoted: 409 `Cannot remove the last administrator`. Every change that
//     could remove an administrator bumps the tenant's admin epoch in its own
//     transaction, on the condition that it still has the value read before
//     the administrators were counted, so two concurrent demotions cannot both
//     pass the count.

// Invite adds an invited membership of the caller's scope (or of the
// organization named by orgId) for an e-mail. A new address becomes an account
// awaiting its password; an existing account is not read, changed or revealed:
// it gets the same invited membership and answer as a new one, and accepts
// with its own password. Invitations are per user and scope.
func (s *Service) Invite(ctx context.Context, in InviteInput) (*Invited, error) {
	p, t, err := s.admin(ctx, authz.UsersInvite, in.OrgID)
	if err != nil {
		return nil, err
	}
	email := NormalizeEmail(in.Email)
	name := strings.TrimSpace(in.Name)
	f := fault.Fields{}
	valid.Email(f, "email", email)
	valid.Name(f, "name", name, MaxName)
	valid.UUID(f, "roleId", in.RoleID)
	access := s.checkRestrictions(f, t, &in)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if !withinRestriction(p, in.SiteIDs, in.DeviceGroupIDs) {
		return nil, ErrWiderInvite
	}
	if err := s.inviteLimits(ctx, p, t, email); err != nil {
		return nil, err
	}
	r, err := s.assignable(ctx, p, t, in.RoleID)
	if err != nil {
		return nil, err
	}
	if err := s.checkRefs(ctx, t, in, access); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	stamp := clock.Format(now)
	// An organization membership names only its organization (as the key does).
	m := &Membership{ID: uuid.NewString(), Scope: t.Scope, OrgID: t.OrgID, RoleID: r.ID, RoleOwner: r.Owner,
		SiteIDs: in.SiteIDs, GroupIDs: in.DeviceGroupIDs, Status: MemberInvited, InvitedName: name, CreatedAt: stamp}
	if t.Scope == authz.ScopePartner {
		m.PartnerID, m.OrgAccess, m.OrgIDs = t.PartnerID, access, in.OrgIDs
	}
	existing, err := s.Users.ByEmail(ctx, email)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	tx := &store.Tx{}
	u := existing
	if u == nil {
		u = &User{ID: uuid.NewString(), Email: email, Name: name, Status: StatusInvited, CreatedAt: stamp, UpdatedAt: stamp}
		tx.Add(CreateWrites(u)...)
	}
	m.UserID = u.ID
	memberAt := tx.Len()
	tx.Add(AddMembershipWrite(m))
	if t.OrgID != "" {
		tx.Add(tenant.CountOrg(t.OrgID, "", tenant.CountMembers, 1))
	}
	token, inv, err := NewInvite(m, p.UserID, now)
	if err != nil {
		return nil, err
	}
	tx.Add(store.Put(inv))
	// The audit record says nothing of whether the account existed.
	tx.Add(s.record(p, t, "user.invite", &User{ID: u.ID, Email: email}, map[string]any{"roleId": r.ID,
		"scope": t.Scope, "orgAccess": m.OrgAccess}))
	if err := s.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) && te.FailedAt(memberAt) {
			return nil, ErrExists
		}
		if errors.As(err, &te) {
			return nil, ErrChanged
		}
		return nil, fmt.Errorf("invite %s: %w", email, err)
	}
	sent := s.sendInvite(ctx, p, t, email, name, token)
	return &Invited{ID: u.ID, Email: email, Name: name, Status: StatusInvited, RoleID: r.ID, InviteEmailSent: sent}, nil
}

// inviteLimits counts one invitation e-mail: at most 20 an hour per inviter and
// 3 a day per address within the tenant (429 with Retry-After beyond).
func (s *Service) inviteLimits(ctx context.Context, p *authz.Principal, t Target, email string) error {
	if err := s.Limits.Allow(ctx, ratelimit.InviteInviter, p.UserID); err != nil {
		return err
	}
	return s.Limits.Allow(ctx, ratelimit.InviteAddress, ratelimit.Hash(t.Tenant(), email))
}

// ResendInvite issues a new invitation token for a pending membership of the
// caller's scope; that scope's previous token stops working, no other's does.
func (s *Service) ResendInvite(ctx context.Context, in ResendInput) (*Resent, error) {
	p, t, err := s.admin(ctx, authz.UsersInvite, in.OrgID)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	valid.UUID(f, "userId", in.UserID)
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, m, err := s.load(ctx, t, in.UserID)
	if err != nil {
		return nil, err
	}
	if !m.Pending(u) {
		return nil, ErrNotInvited
	}
	if err := s.manageable(ctx, p, m); err != nil {
		return nil, err
	}
	if err := s.inviteLimits(ctx, p, t, u.Email); err != nil {
		return nil, err
	}
	token, inv, err := NewInvite(m, p.UserID, s.Clock.Now())
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(
		membershipUnchanged(m),
		store.Put(inv),
		s.record(p, t, "user.invite.resend", &User{ID: u.ID, Email: u.Email}, nil))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("resend invitation of %s: %w", u.ID, err)
	}
	name := NewMember(u, m).Name
	return &Resent{ID: u.ID, Email: u.Email, InviteEmailSent: s.sendInvite(ctx, p, t, u.Email, name, token)}, nil
}

// Update changes the name, status (active, disabled) or restriction
// (restrict.go) of a member of the caller's scope, under the rules above, in
// one transaction. Disabling an account ends every
// session and token of it in the same write; suspending a membership takes
// effect on the member's next request (authentication reads the membership).
func (s *Service) Update(ctx context.Context, id string, in UpdateInput) (*Member, error) {
	disable := in.Status != nil && Status(*in.Status) == StatusDisabled
	for attempt := 1; ; attempt++ {
		m, err := s.update(ctx, id, in)
		if !disable || !errors.Is(err, ErrChanged) || attempt == killSwitchAttempts {
			return m, err
		}
		// A disable or suspension is a kill switch
		// (docs/decisions.md#kill-switches-always-win): one that lost a race to
		// another write of the member reads it again and goes on, authorization
		// included.
	}
}

// killSwitchAttempts bounds how often a disable, suspension or removal that
// lost a race re-reads and goes again: each loss means another request
// changed the member, so a few attempts outlast any human-paced contention.
const killSwitchAttempts = 4

func (s *Service) update(ctx context.Context, id string, in UpdateInput) (*Member, error) {
	p, t, err := s.admin(ctx, authz.UsersWrite, in.OrgID)
	if err != nil {
		return nil, err
	}
	if in.Name == nil && in.Status == nil && !in.restricts() {
		return nil, ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
		valid.Name(f, "name", n, MaxName)
	}
	if in.Status != nil {
		valid.OneOf(f, "status", *in.Status, string(StatusActive), string(StatusDisabled))
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, m, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if err := s.manageable(ctx, p, m); err != nil {
		return nil, err
	}
	disable := in.Status != nil && Status(*in.Status) == StatusDisabled
	if disable && u.ID == p.UserID {
		return nil, ErrDisableSelf
	}
	rs, rsDetails, err := s.restriction(ctx, p, t, m, in)
	if err != nil {
		return nil, err
	}
	if !m.Accepted(u) {
		return s.updatePending(ctx, p, t, u, m, in, rs, rsDetails)
	}
	owner, err := s.holdsAccount(ctx, p, u.ID)
	if err != nil {
		return nil, err
	}
	if !owner {
		if in.Name != nil && *in.Name != u.Name {
			return nil, ErrAccountWide
		}
		if in.Status == nil && rs == nil {
			v := NewMember(u, m)
			return &v, nil
		}
		return s.setMemberStatus(ctx, p, t, u, m, in.Status, rs, rsDetails)
	}
	return s.updateAccount(ctx, p, t, u, m, in, rs, rsDetails)
}

// withRestriction adds the restriction's audit fields to details.
func withRestriction(details, rsDetails map[string]any) map[string]any {
	if len(rsDetails) > 0 {
		details["restriction"] = rsDetails
	}
	return details
}

// updatePending edits a membership the account has not accepted (invited or
// invited_suspended): its name is the one the tenant gave (the account's own
// stays), disabling it suspends the invitation (its token stops working) and
// restoring it returns it to invited, never to active (the transition table
// of membership.go).
func (s *Service) updatePending(ctx context.Context, p *authz.Principal, t Target, u *User, m *Membership, in UpdateInput,
	rs *Restriction, rsDetails map[string]any) (*Member, error) {
	from := m.State(u)
	next := *m
	rs.apply(&next)
	if in.Name != nil {
		next.InvitedName = *in.Name
	}
	if in.Status != nil {
		op := OpSuspend
		if Status(*in.Status) == StatusActive {
			op = OpRestore
		}
		to, ok := Next(from, op)
		if !ok {
			return nil, ErrActivateGuest
		}
		next.Status = to
	}
	if next.Status == m.Status && next.InvitedName == m.InvitedName && rs == nil {
		v := NewMember(u, m)
		return &v, nil
	}
	tx := (&store.Tx{}).Add(
		replaceMembershipWrite(&next, m),
		s.record(p, t, "user.update", &User{ID: u.ID, Email: u.Email}, withRestriction(map[string]any{"pending": true,
			"from": from, "to": next.State(u)}, rsDetails)))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("update invitation of %s: %w", u.ID, err)
	}
	v := NewMember(u, &next)
	return &v, nil
}

// setMemberStatus suspends or restores (status, when given) the membership in
// t only, and changes its restriction (rs, when given).
func (s *Service) setMemberStatus(ctx context.Context, p *authz.Principal, t Target, u *User, m *Membership, status *string,
	rs *Restriction, rsDetails map[string]any) (*Member, error) {
	from, to := m.State(u), MemberStatus("")
	disable := status != nil && Status(*status) == StatusDisabled
	if status != nil {
		op := OpRestore
		if disable {
			op = OpSuspend
		}
		next, ok := Next(from, op)
		if !ok {
			return nil, ErrActivateGuest
		}
		if next != from {
			to = next
		}
	}
	if to == "" && rs == nil {
		v := NewMember(u, m)
		return &v, nil
	}
	tx := &store.Tx{}
	if to != "" && disable {
		if err := s.keepAnAdmin(ctx, t, m, tx); err != nil {
			return nil, err
		}
	}
	action := "user.membership.update"
	if to != "" {
		action = "user.membership." + map[bool]string{true: "suspend", false: "restore"}[disable]
	}
	tx.Add(memberChangeWrite(m, to, rs), s.record(p, t, action, u, withRestriction(map[string]any{"scope": t.Scope}, rsDetails)))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("set membership of %s: %w", u.ID, err)
	}
	next := *m
	if to != "" {
		next.Status = to
	}
	rs.apply(&next)
	v := NewMember(u, &next)
	return &v, nil
}

// updateAccount changes the account itself: the caller's tenant holds every
// membership of it (or the caller is system scope).
func (s *Service) updateAccount(ctx context.Context, p *authz.Principal, t Target, u *User, m *Membership, in UpdateInput,
	rs *Restriction, rsDetails map[string]any) (*Member, error) {
	var changed []string
	details := map[string]any{}
	now := s.Clock.Now()
	revokeAt := ""
	tx := &store.Tx{}
	if in.Name != nil && *in.Name != u.Name {
		details["name"] = map[string]any{"from": u.Name, "to": *in.Name}
		u.Name = *in.Name
		changed = append(changed, "name")
	}
	restore := in.Status != nil && Status(*in.Status) == StatusActive && m.State(u) == MemberSuspended
	if in.Status != nil && Status(*in.Status) != u.Status {
		next := Status(*in.Status)
		if next == StatusDisabled {
			if err := s.keepAnAdmin(ctx, t, m, tx); err != nil {
				return nil, err
			}
			// The same update revokes every session and token (RevokeSessionsWrite's
			// tokensValidAfter): one transaction cannot write the profile twice.
			revokeAt = clock.Stamp(now)
			details["sessionsRevoked"] = true
		}
		details["status"] = map[string]any{"from": u.Status, "to": next}
		u.Status = next
		changed = append(changed, "status")
	}
	if len(changed) == 0 && !restore && rs == nil {
		v := NewMember(u, m)
		return &v, nil
	}
	// A restriction alone leaves the account alone.
	account := len(changed) > 0 || restore
	if account {
		u.UpdatedAt = clock.Format(now)
		if revokeAt != "" && len(changed) == 1 {
			// A disable alone is a kill switch: it writes whatever else changed
			// the profile meanwhile (the account's own edits, which it stops).
			tx.Add(disableAccountWrite(u, revokeAt))
		} else {
			tx.Add(accountWrite(u, revokeAt))
		}
	}
	next := *m
	to := MemberStatus("")
	if restore {
		to, next.Status = MemberActive, MemberActive
		details["membershipRestored"] = true
	}
	if to != "" || rs != nil {
		tx.Add(memberChangeWrite(m, to, rs))
	}
	rs.apply(&next)
	details["changes"] = changed
	tx.Add(s.record(p, t, "user.update", u, withRestriction(details, rsDetails)))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("update user %s: %w", u.ID, err)
	}
	if account {
		u.Version++
	}
	v := NewMember(u, &next)
	return &v, nil
}

// Remove deletes the membership of a user in the caller's scope; the account
// survives and can be invited again. A pending invitation for this scope is
// revoked with it, and so is every API key the user created there
// (RemoveMembership).
func (s *Service) Remove(ctx context.Context, id, orgID string) error {
	for attempt := 1; ; attempt++ {
		err := s.removeOnce(ctx, id, orgID)
		if !errors.Is(err, ErrChanged) || attempt == killSwitchAttempts {
			return err
		}
		// A removal is a kill switch: one that lost a race reads again.
	}
}

func (s *Service) removeOnce(ctx context.Context, id, orgID string) error {
	p, t, err := s.admin(ctx, authz.UsersDelete, orgID)
	if err != nil {
		return err
	}
	u, m, err := s.load(ctx, t, id)
	if err != nil {
		return err
	}
	if u.ID == p.UserID {
		return ErrRemoveSelf
	}
	if err := s.manageable(ctx, p, m); err != nil {
		return err
	}
	if _, err := s.remove(ctx, p.Actor(), t, &User{ID: u.ID, Email: u.Email}, m, "", nil); err != nil {
		return fmt.Errorf("remove user %s: %w", u.ID, err)
	}
	return nil
}

// AssignRole gives a member of the caller's scope another role, under the same
// rules as an invitation (assignable in the scope, no escalation) and the
// rules above (the member's current role is within the caller's level, and
// the last administrator is not demoted).
func (s *Service) AssignRole(ctx context.Context, id, orgID, roleID string) (*Member, error) {
	p, t, err := s.admin(ctx, authz.UsersWrite, orgID)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	valid.UUID(f, "roleId", roleID)
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, m, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if err := s.manageable(ctx, p, m); err != nil {
		return nil, err
	}
	r, err := s.assignable(ctx, p, t, roleID)
	if err != nil {
		return nil, err
	}
	from := m.RoleID
	if from == r.ID {
		v := NewMember(u, m)
		return &v, nil
	}
	tx := &store.Tx{}
	if !s.isAdmin(t.Scope, r.Effective) {
		if err := s.keepAnAdmin(ctx, t, m, tx); err != nil {
			return nil, err
		}
	}
	next := *m
	next.RoleID, next.RoleOwner = r.ID, r.Owner
	next.SetKeys()
	tx.Add(
		replaceMembershipWrite(&next, m),
		s.record(p, t, "user.role.assign", u, map[string]any{"fromRoleId": from, "toRoleId": r.ID}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("assign role %s to %s: %w", r.ID, u.ID, err)
	}
	v := NewMember(u, &next)
	return &v, nil
}

// manageable applies the level and restriction rules to member m.
func (s *Service) manageable(ctx context.Context, p *authz.Principal, m *Membership) error {
	if !withinRestriction(p, m.SiteIDs, m.GroupIDs) || (p.SiteRestricted() && len(m.SiteIDs) == 0) ||
		(len(p.DeviceGroupIDs) > 0 && len(m.GroupIDs) == 0) {
		return ErrOutside
	}
	r, err := s.Roles.Assignee(ctx, m.RoleID)
	if err != nil {
		return fmt.Errorf("role of member %s: %w", m.UserID, err)
	}
	if !HoldsAll(p, r.Effective) {
		return ErrAboveLevel
	}
	return nil
}

// HoldsAll reports whether p holds every permission of set (*:* only by
// holding *:* itself).
func HoldsAll(p *authz.Principal, set authz.Set) bool {
	for perm := range set {
		if !p.Holds(perm) {
			return false
		}
	}
	return true
}

// withinRestriction reports whether sites and groups lie inside p's own
// restriction (an unrestricted caller has none).
func withinRestriction(p *authz.Principal, sites, groups []string) bool {
	if p.SiteRestricted() {
		if len(sites) == 0 {
			return false
		}
		for _, id := range sites {
			if !slices.Contains(p.SiteIDs, id) {
				return false
			}
		}
	}
	if p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0 {
		if len(groups) == 0 {
			return false
		}
		for _, id := range groups {
			if !slices.Contains(p.DeviceGroupIDs, id) {
				return false
			}
		}
	}
	return true
}

// holdsAccount reports whether p's authority covers every membership of the
// account, by tenant and by level: every accepted membership is in p's reach
// and p holds every permission of its role (one query of the account's
// memberships, one role read per membership whose role p might not cover,
// plus one BatchGetItem of organizations for a partner caller). Without the
// level check, a slice of a partner's users:write could disable its Partner
// Admin through a weak organization membership. Site- or group-restricted
// callers never hold an account.
func (s *Service) holdsAccount(ctx context.Context, p *authz.Principal, userID string) (bool, error) {
	if p.Scope == authz.ScopeSystem {
		return true, nil
	}
	if p.SiteRestricted() || len(p.DeviceGroupIDs) > 0 {
		return false, nil
	}
	ms, err := s.Users.Memberships(ctx, userID)
	if err != nil {
		return false, err
	}
	var orgIDs []string
	for _, m := range ms {
		if m.Status == MemberInvited || m.Status == MemberInvitedSuspended {
			// An invitation the account never accepted gives its tenant no
			// say over the account, and takes none from the others.
			continue
		}
		if !p.Holds(authz.AdminAll) {
			r, err := s.Roles.Assignee(ctx, m.RoleID)
			if err != nil {
				return false, fmt.Errorf("role of membership %s: %w", m.ID, err)
			}
			if !HoldsAll(p, r.Effective) {
				return false, nil
			}
		}
		switch {
		case m.Scope == authz.ScopeOrg && p.Scope == authz.ScopeOrg && m.OrgID == p.OrgID:
		case m.Scope == authz.ScopePartner && p.Scope == authz.ScopePartner && m.PartnerID == p.PartnerID:
		case m.Scope == authz.ScopeOrg && p.Scope == authz.ScopePartner:
			orgIDs = append(orgIDs, m.OrgID)
		default:
			return false, nil
		}
	}
	if len(orgIDs) == 0 {
		return true, nil
	}
	orgs, err := s.Orgs.OrgsByID(ctx, orgIDs)
	if err != nil {
		return false, err
	}
	if len(orgs) != len(orgIDs) {
		return false, nil
	}
	for _, o := range orgs {
		if o.PartnerID != p.PartnerID {
			return false, nil
		}
	}
	return true, nil
}

// isAdmin reports whether set makes its holder an administrator of a scope:
// *:* for a partner (and the system), every permission of the Org Admin
// system role for an organization.
func (s *Service) isAdmin(scope authz.Scope, set authz.Set) bool {
	if set[authz.AdminAll] {
		return true
	}
	if scope != authz.ScopeOrg || len(s.OrgAdmin) == 0 {
		return false
	}
	for perm := range s.OrgAdmin {
		if !set.Has(perm) {
			return false
		}
	}
	return true
}

// adminEpoch is a tenant's administrator epoch: every change that could remove
// an administrator moves it, conditioned on the value it read.
type adminEpoch struct {
	store.Keys
	Epoch int `dynamodbav:"epoch"`
}

func epochKey(t Target) store.KeyRef {
	if t.Scope == authz.ScopeOrg {
		return store.KeyRef{PK: store.OrgPK(t.OrgID), SK: "ADMINS"}
	}
	return store.KeyRef{PK: store.PartnerPK(t.PartnerID), SK: "ADMINS"}
}

// keepAnAdmin refuses a change that would leave t without an administrator
// when m holds the last one, and otherwise adds the epoch move to tx. It costs
// nothing when m is not an administrator.
func (s *Service) keepAnAdmin(ctx context.Context, t Target, m *Membership, tx *store.Tx) error {
	r, err := s.Roles.Assignee(ctx, m.RoleID)
	if err != nil {
		return fmt.Errorf("role of member %s: %w", m.UserID, err)
	}
	if !m.Active() || !s.isAdmin(t.Scope, r.Effective) {
		return nil
	}
	k := epochKey(t)
	var e adminEpoch
	switch err := s.St.Get(ctx, k.PK, k.SK, &e); {
	case errors.Is(err, store.ErrNotFound):
		tx.Add(firstEpochWrite(k))
	case err != nil:
		return err
	default:
		tx.Add(nextEpochWrite(k, e.Epoch))
	}
	ms, err := s.Users.Members(ctx, t.Scope, t.PartnerID, t.OrgID)
	if err != nil {
		return err
	}
	// Another administrator counts only with an active membership and an
	// active account: a disabled account's membership grants nothing. Holders
	// of built-in roles are looked at first; the custom roles (one Query per
	// owner, the organization's and its partner's) are read only when no
	// built-in administrator is left.
	var builtin, custom []*Membership
	for i := range ms {
		if other := &ms[i]; other.UserID != m.UserID && other.Active() {
			if _, ok := s.Roles.Builtin(other.RoleID); ok {
				builtin = append(builtin, other)
			} else {
				custom = append(custom, other)
			}
		}
	}
	isAdmin := func(m *Membership) bool {
		r, _ := s.Roles.Builtin(m.RoleID)
		return s.isAdmin(t.Scope, r.Effective)
	}
	if ok, err := s.anActiveAdmin(ctx, builtin, isAdmin); ok || err != nil {
		return err
	}
	owned := map[string]map[string]RoleInfo{}
	for _, other := range custom {
		if _, ok := owned[other.RoleOwner]; !ok {
			rs, err := s.Roles.Owned(ctx, other.RoleOwner)
			if err != nil {
				return err
			}
			owned[other.RoleOwner] = rs
		}
	}
	ok, err := s.anActiveAdmin(ctx, custom, func(m *Membership) bool {
		r, found := owned[m.RoleOwner][m.RoleID]
		return found && s.isAdmin(t.Scope, r.Effective)
	})
	if err == nil && !ok {
		err = ErrLastAdmin
	}
	return err
}

// anActiveAdmin reports whether one of ms for which admin holds has an
// active account (one BatchGetItem of their profiles).
func (s *Service) anActiveAdmin(ctx context.Context, ms []*Membership, admin func(*Membership) bool) (bool, error) {
	var refs []store.KeyRef
	for _, other := range ms {
		if admin(other) {
			refs = append(refs, ProfileKey(other.UserID))
		}
	}
	if len(refs) == 0 {
		return false, nil
	}
	items, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return false, err
	}
	for _, it := range items {
		var u User
		if err := store.Unmarshal(it, &u); err != nil {
			return false, err
		}
		if u.Status == StatusActive {
			return true, nil
		}
	}
	return false, nil
}
