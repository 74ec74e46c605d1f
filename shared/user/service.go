package user

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/url"
	"slices"
	"strings"
	"unicode"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Bounds of a user's fields (e-mail and name up to 255 characters).
const (
	MaxName   = 255
	MaxEmail  = 255
	MaxAvatar = 2048
	// maxRestrictions bounds siteIds, deviceGroupIds and orgIds of one membership.
	maxRestrictions = 100
)

// RoleInfo is a role as membership administration needs it.
type RoleInfo struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Description string             `json:"description"`
	Scope       authz.Scope        `json:"scope"`
	IsSystem    bool               `json:"isSystem"`
	ForceMFA    bool               `json:"forceMfa"`
	Permissions []authz.Permission `json:"permissions"`
	// Owner is SYSTEM, PARTNER#<id> or ORG#<id> (a membership's roleOwner).
	Owner string `json:"-"`
	// PartnerID is the owning partner, or the owning organization's partner
	// ("" for system roles), so visibility is decided without a read.
	PartnerID string `json:"-"`
	// Effective is the role's permission set with its parent chain (Assignee only).
	Effective authz.Set `json:"-"`
}

// Roles is what the service reads of roles; role.Store satisfies it.
type Roles interface {
	// Assignee resolves role id with its effective permissions; an unknown id
	// is an error matching store.ErrNotFound.
	Assignee(ctx context.Context, id string) (RoleInfo, error)
	// Builtin resolves id when it is a built-in role, without a read.
	Builtin(id string) (RoleInfo, bool)
	// Owned resolves every custom role of owner (a tenant's roles key).
	Owned(ctx context.Context, owner string) (map[string]RoleInfo, error)
	// InScope lists the system roles of scope and the custom roles of owner.
	InScope(ctx context.Context, scope authz.Scope, owner string) ([]RoleInfo, error)
}

// Orgs reads organizations; tenant.Store satisfies it.
type Orgs interface {
	// Reach is the one organization check (tenant.Store.Reach).
	Reach(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error)
	Org(ctx context.Context, id string) (*tenant.Organization, error)
	OrgsByID(ctx context.Context, ids []string) ([]tenant.Organization, error)
	PartnerOrgs(ctx context.Context, partnerID string) ([]tenant.Organization, error)
}

// Mailer sends e-mail (notify.Notifier through SES).
type Mailer interface {
	SendEmail(ctx context.Context, e notify.Email) error
}

// Service administers users and their memberships (/api/v1/users). Every method
// authorizes first; each change is written with its audit record in one
// transaction.
type Service struct {
	St    *store.Store
	Users Store
	Roles Roles
	Orgs  Orgs
	Clock clock.Clock
	// Mail sends invitation e-mails; nil sends none (inviteEmailSent false).
	Mail Mailer
	// AppURL is the web application's base URL, for the acceptance link.
	AppURL string
	// Limits bounds invitations per inviter and per address (ratelimit.Invite*).
	Limits ratelimit.Limiter
	// OrgAdmin is the permission set that makes an organization administrator
	// (the Org Admin system role's), for the last-administrator rule.
	OrgAdmin authz.Set
	// Keys revokes the API keys of removed members (RemoveMembership); nil
	// revokes none (tests of this package alone).
	Keys KeyRevoker
}

// Errors of user administration, with the spec's texts where it gives one.
var (
	ErrUserNotFound  = fault.NotFound("User not found")
	ErrOrgNotFound   = fault.NotFound("Organization not found")
	ErrExists        = fault.Conflict("User already exists in this scope")
	ErrRoleScope     = fault.Forbidden("Role cannot be assigned in this scope")
	ErrRoleNotFound  = fault.NotFound("Role not found")
	ErrCeiling       = fault.Forbidden("Cannot grant permissions you do not hold")
	ErrNotInvited    = fault.BadRequest("User is not awaiting an invitation")
	ErrDisableSelf   = fault.BadRequest("You cannot disable your own account")
	ErrRemoveSelf    = fault.BadRequest("You cannot remove yourself from this scope")
	ErrNoUpdates     = fault.BadRequest("No updates provided")
	ErrActivateGuest = fault.BadRequest("An invited user becomes active by accepting the invitation")
	ErrChanged       = fault.Conflict("User was changed by another request; retry").WithCode(fault.CodeRaceLost)
	ErrAccountWide   = fault.Forbidden("Cannot change account-wide fields of a user who also belongs to other tenants")
	ErrAboveLevel    = fault.Forbidden("Cannot manage a user who holds permissions you do not hold")
	ErrOutside       = fault.Forbidden("Cannot manage a user outside your site or device group restriction")
	ErrWiderInvite   = fault.Forbidden("Cannot invite a user with wider site or device group access than your own")
	ErrLastAdmin     = fault.Conflict("Cannot remove the last administrator")
)

// Target is the scope a request administers: the caller's own, or the
// organization a partner or system caller names with orgId.
type Target struct {
	Scope     authz.Scope
	PartnerID string
	OrgID     string
	// Name is the organization's name when it was read ("" otherwise).
	Name string
}

// Tenant is the target's <scope>#<tenant> key part.
func (t Target) Tenant() string { return TenantKey(t.Scope, t.PartnerID, t.OrgID) }

// RoleOwner is the owner key of the target's custom roles ("" for system scope).
func (t Target) RoleOwner() string {
	switch t.Scope {
	case authz.ScopeOrg:
		return store.OrgPK(t.OrgID)
	case authz.ScopePartner:
		return store.PartnerPK(t.PartnerID)
	}
	return ""
}

func (t Target) membershipKey(userID string) store.KeyRef {
	return MembershipKey(userID, t.Scope, t.PartnerID, t.OrgID)
}

// target resolves where p (in a tenant, or the system: authz.RequireTenant)
// administers users: partner callers need full organization access; orgId
// names an organization for partner and system callers (404 when out of
// reach); organization callers act in their own.
func (s *Service) target(ctx context.Context, p *authz.Principal, orgID string) (Target, error) {
	if err := p.RequireFullPartnerAccess(); err != nil {
		return Target{}, err
	}
	if orgID != "" && !valid.IsUUID(orgID) {
		return Target{}, fault.Invalid("orgId", "must be a UUID")
	}
	switch p.Scope {
	case authz.ScopeOrg:
		if orgID != "" && orgID != p.OrgID {
			return Target{}, ErrOrgNotFound
		}
		return Target{Scope: authz.ScopeOrg, PartnerID: p.PartnerID, OrgID: p.OrgID}, nil
	case authz.ScopePartner, authz.ScopeSystem:
		if orgID == "" {
			if p.Scope == authz.ScopeSystem {
				// The system scope is no tenant: system callers name the
				// organization they administer.
				return Target{}, authz.ErrContextRequired
			}
			return Target{Scope: p.Scope, PartnerID: p.PartnerID}, nil
		}
		o, err := s.Orgs.Reach(ctx, p, orgID)
		if err != nil {
			return Target{}, err
		}
		return Target{Scope: authz.ScopeOrg, PartnerID: o.PartnerID, OrgID: o.ID, Name: o.Name}, nil
	}
	return Target{}, authz.ErrContextRequired
}

// admin opens every administration method: perm and a tenant context
// (authz.RequireTenant), then the target scope.
func (s *Service) admin(ctx context.Context, perm authz.Permission, orgID string) (*authz.Principal, Target, error) {
	p, err := authz.RequireTenant(ctx, perm)
	if err != nil {
		return nil, Target{}, err
	}
	t, err := s.target(ctx, p, orgID)
	return p, t, err
}

// Member is a user as the administration routes show it: the account with its
// membership of the scope it was read in.
type Member struct {
	ID             string          `json:"id"`
	Email          string          `json:"email"`
	Name           string          `json:"name"`
	Status         Status          `json:"status"`
	AvatarURL      string          `json:"avatarUrl,omitempty"`
	MFAEnabled     bool            `json:"mfaEnabled"`
	LastLoginAt    string          `json:"lastLoginAt,omitempty"`
	RoleID         string          `json:"roleId"`
	Scope          authz.Scope     `json:"scope"`
	PartnerID      string          `json:"partnerId,omitempty"`
	OrgID          string          `json:"orgId,omitempty"`
	OrgAccess      authz.OrgAccess `json:"orgAccess,omitempty"`
	OrgIDs         []string        `json:"orgIds,omitempty"`
	SiteIDs        []string        `json:"siteIds,omitempty"`
	DeviceGroupIDs []string        `json:"deviceGroupIds,omitempty"`
	CreatedAt      string          `json:"createdAt"`
	UpdatedAt      string          `json:"updatedAt"`
}

// NewMember renders u with membership m. Until the person accepts an
// invitation the tenant sees only what it sent (the address and the name it
// gave), never the account's own name, status, MFA state or activity; a
// membership (or invitation) its tenant suspended shows as disabled there.
func NewMember(u *User, m *Membership) Member {
	if !m.Accepted(u) {
		status := StatusInvited
		if m.State(u) == MemberInvitedSuspended {
			status = StatusDisabled
		}
		name := m.InvitedName
		if name == "" && u.Status == StatusInvited {
			name = u.Name // the account was created by an invitation: the name is the inviter's
		}
		return Member{ID: u.ID, Email: u.Email, Name: name, Status: status,
			RoleID: m.RoleID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, OrgAccess: m.OrgAccess,
			OrgIDs: m.OrgIDs, SiteIDs: m.SiteIDs, DeviceGroupIDs: m.GroupIDs, CreatedAt: m.CreatedAt, UpdatedAt: m.CreatedAt}
	}
	v := newMember(u, m)
	if m.Status == MemberSuspended {
		v.Status = StatusDisabled
	}
	return v
}

func newMember(u *User, m *Membership) Member {
	return Member{ID: u.ID, Email: u.Email, Name: u.Name, Status: u.Status, AvatarURL: u.AvatarURL,
		MFAEnabled: u.MFAEnabled, LastLoginAt: u.LastLoginAt, RoleID: m.RoleID, Scope: m.Scope,
		PartnerID: m.PartnerID, OrgID: m.OrgID, OrgAccess: m.OrgAccess, OrgIDs: m.OrgIDs, SiteIDs: m.SiteIDs,
		DeviceGroupIDs: m.GroupIDs, CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt}
}

// record is the audit write of an administration change in t.
func (s *Service) record(p *authz.Principal, t Target, action string, u *User, details map[string]any) *store.Write {
	return audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: t.OrgID, PartnerID: t.PartnerID, Action: action,
		ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email, Details: details})
}

// Me returns the caller's own profile.
func (s *Service) Me(ctx context.Context) (*User, error) {
	// Any signed-in user may read their own profile.
	p, err := authz.Authenticated(ctx)
	if err != nil {
		return nil, err
	}
	return s.Users.Get(ctx, p.UserID)
}

// ProfileInput is a PATCH /users/me (profileBody checked); nil fields are left
// unchanged.
type ProfileInput struct {
	Name      *string
	AvatarURL *string
}

// UpdateMe changes the caller's name or avatar URL ("" clears the avatar).
func (s *Service) UpdateMe(ctx context.Context, in ProfileInput) (*User, error) {
	// Any user signed in with their own credential may change their own
	// profile (account-wide: never an SSO session).
	p, err := authz.AccountOwner(ctx)
	if err != nil {
		return nil, err
	}
	if in.Name == nil && in.AvatarURL == nil {
		return nil, ErrNoUpdates
	}
	f := fault.Fields{}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
		valid.Name(f, "name", n, MaxName)
	}
	if in.AvatarURL != nil && *in.AvatarURL != "" {
		checkURL(f, "avatarUrl", *in.AvatarURL)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	var changed []string
	if in.Name != nil {
		u.Name = *in.Name
		changed = append(changed, "name")
	}
	if in.AvatarURL != nil {
		u.AvatarURL = *in.AvatarURL
		changed = append(changed, "avatarUrl")
	}
	u.UpdatedAt = clock.Format(s.Clock.Now())
	tx := (&store.Tx{}).Add(profileWrite(u), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
		Action: "user.profile.update", ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
		Details: map[string]any{"changes": changed}}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("update profile of %s: %w", u.ID, err)
	}
	u.Version++
	return u, nil
}

func checkURL(f fault.Fields, path, s string) {
	u, err := url.Parse(s)
	if err != nil || len(s) > MaxAvatar || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		f.Addf(path, "must be an http(s) URL of at most %d characters", MaxAvatar)
	}
}

// commit runs tx; a failed condition is a lost race.
func (s *Service) commit(ctx context.Context, tx *store.Tx) error {
	err := s.St.Commit(ctx, tx)
	var te *store.TxError
	if errors.As(err, &te) {
		return ErrChanged
	}
	return err
}

// List returns the members of the caller's scope (or of the organization a
// partner or system caller names), ordered by e-mail.
func (s *Service) List(ctx context.Context, orgID string) ([]Member, error) {
	_, t, err := s.admin(ctx, authz.UsersRead, orgID)
	if err != nil {
		return nil, err
	}
	ms, err := s.Users.Members(ctx, t.Scope, t.PartnerID, t.OrgID)
	if err != nil {
		return nil, err
	}
	out := make([]Member, 0, len(ms))
	for start := 0; start < len(ms); start += 100 {
		chunk := ms[start:min(start+100, len(ms))]
		refs := make([]store.KeyRef, len(chunk))
		for i, m := range chunk {
			refs[i] = ProfileKey(m.UserID)
		}
		items, err := s.St.BatchGet(ctx, refs...)
		if err != nil {
			return nil, fmt.Errorf("profiles of %s: %w", t.Tenant(), err)
		}
		for i := range chunk {
			it, ok := items[refs[i].PK+"|"+refs[i].SK]
			if !ok {
				continue // the account is gone; its membership is an orphan
			}
			var u User
			if err := store.Unmarshal(it, &u); err != nil {
				return nil, err
			}
			out = append(out, NewMember(&u, &chunk[i]))
		}
	}
	slices.SortFunc(out, func(a, b Member) int { return cmp.Or(cmp.Compare(a.Email, b.Email), cmp.Compare(a.ID, b.ID)) })
	return out, nil
}

// load reads user id with its membership of t in one call; a user without one
// is ErrUserNotFound (never revealing accounts of other tenants).
func (s *Service) load(ctx context.Context, t Target, id string) (*User, *Membership, error) {
	if err := valid.PathID("id", id); err != nil {
		return nil, nil, err
	}
	pk, mk := ProfileKey(id), t.membershipKey(id)
	items, err := s.St.BatchGet(ctx, pk, mk)
	if err != nil {
		return nil, nil, err
	}
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	mi, ok2 := items[mk.PK+"|"+mk.SK]
	if !ok1 || !ok2 {
		return nil, nil, ErrUserNotFound
	}
	var u User
	var m Membership
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, nil, err
	}
	if err := store.Unmarshal(mi, &m); err != nil {
		return nil, nil, err
	}
	return &u, &m, nil
}

// Get returns a member of the caller's scope.
func (s *Service) Get(ctx context.Context, id, orgID string) (*Member, error) {
	_, t, err := s.admin(ctx, authz.UsersRead, orgID)
	if err != nil {
		return nil, err
	}
	u, m, err := s.load(ctx, t, id)
	if err != nil {
		return nil, err
	}
	v := NewMember(u, m)
	return &v, nil
}

// RolesInScope lists the roles that can be assigned in the caller's scope.
func (s *Service) RolesInScope(ctx context.Context, orgID string) ([]RoleInfo, error) {
	_, t, err := s.admin(ctx, authz.UsersRead, orgID)
	if err != nil {
		return nil, err
	}
	return s.Roles.InScope(ctx, t.Scope, t.RoleOwner())
}

// assignable resolves roleID for a membership of t granted by p: a system role
// of t's scope or a custom role of t's owner, all of whose effective
// permissions p holds. An unknown id or another tenant's custom role is
// ErrRoleNotFound (never revealing it exists); a role p can see that belongs to
// another scope or owner is ErrRoleScope.
func (s *Service) assignable(ctx context.Context, p *authz.Principal, t Target, roleID string) (RoleInfo, error) {
	r, err := s.Roles.Assignee(ctx, roleID)
	if errors.Is(err, store.ErrNotFound) {
		return RoleInfo{}, ErrRoleNotFound
	}
	if err != nil {
		return RoleInfo{}, err
	}
	if !r.IsSystem && !roleVisible(ctx, p, r) {
		return RoleInfo{}, ErrRoleNotFound
	}
	if (r.IsSystem && r.Scope != t.Scope) || (!r.IsSystem && (t.RoleOwner() == "" || r.Owner != t.RoleOwner())) {
		return RoleInfo{}, ErrRoleScope
	}
	var missing []string
	for perm := range r.Effective {
		if !p.Holds(perm) {
			missing = append(missing, perm.String())
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return RoleInfo{}, ErrCeiling.WithDetails(map[string]any{"permissions": missing})
	}
	return r, nil
}

// roleVisible reports whether p may see custom role r at all (as the roles
// routes decide it): a role of p's partner, or of an organization p reaches,
// which tenant.Find decides on the role already read (no second read).
func roleVisible(ctx context.Context, p *authz.Principal, r RoleInfo) bool {
	if id, ok := store.PartnerOf(r.Owner); ok {
		return p.CanAccessPartner(id)
	}
	id, ok := store.OrgOf(r.Owner)
	if !ok {
		return false
	}
	read := func(context.Context, string) (orgRole, error) {
		return orgRole{authz.Org{ID: id, PartnerID: r.PartnerID}}, nil
	}
	_, err := tenant.Find(ctx, p, r.ID, func(ctx context.Context, _, id string) (orgRole, error) { return read(ctx, id) }, read, ErrRoleNotFound)
	return err == nil
}

// orgRole is an organization's custom role as a record of that organization
// (tenant.Owned).
type orgRole struct{ org authz.Org }

// Owner is the organization that owns the role.
func (o orgRole) Owner() authz.Org { return o.org }

// InviteInput is the body of POST /users/invite: the organization body
// (siteIds, deviceGroupIds) or the partner body (orgAccess, orgIds), with orgId
// for partner and system callers inviting into an organization.
type InviteInput struct {
	OrgID          string   `json:"orgId"`
	Email          string   `json:"email"`
	Name           string   `json:"name"`
	RoleID         string   `json:"roleId"`
	SiteIDs        []string `json:"siteIds"`
	DeviceGroupIDs []string `json:"deviceGroupIds"`
	OrgAccess      string   `json:"orgAccess"`
	OrgIDs         []string `json:"orgIds"`
}

// Invited is the 201 answer of POST /users/invite.
type Invited struct {
	ID              string `json:"id"`
	Email           string `json:"email"`
	Name            string `json:"name"`
	Status          Status `json:"status"`
	RoleID          string `json:"roleId"`
	InviteEmailSent bool   `json:"inviteEmailSent"`
}

// checkRestrictions validates the scope-specific fields of an invitation and
// returns the partner orgAccess (default none).
func (s *Service) checkRestrictions(f fault.Fields, t Target, in *InviteInput) authz.OrgAccess {
	ids := func(path string, xs []string) {
		if len(xs) > maxRestrictions {
			f.Addf(path, "must have at most %d entries", maxRestrictions)
			return
		}
		for i, x := range xs {
			valid.UUID(f, fmt.Sprintf("%s.%d", path, i), x)
		}
	}
	if t.Scope != authz.ScopeOrg {
		if in.SiteIDs != nil {
			f.Add("siteIds", "is only allowed for an organization invitation")
		}
		if in.DeviceGroupIDs != nil {
			f.Add("deviceGroupIds", "is only allowed for an organization invitation")
		}
	} else {
		ids("siteIds", in.SiteIDs)
		ids("deviceGroupIds", in.DeviceGroupIDs)
	}
	if t.Scope != authz.ScopePartner {
		if in.OrgAccess != "" {
			f.Add("orgAccess", "is only allowed for a partner invitation")
		}
		if in.OrgIDs != nil {
			f.Add("orgIds", "is only allowed for a partner invitation")
		}
		return ""
	}
	access := authz.OrgAccess(in.OrgAccess)
	if access == "" {
		access = authz.OrgAccessNone
	}
	valid.OneOf(f, "orgAccess", string(access), string(authz.OrgAccessAll), string(authz.OrgAccessSelected), string(authz.OrgAccessNone))
	switch {
	case access == authz.OrgAccessSelected && len(in.OrgIDs) == 0:
		f.Add("orgIds", "is required when orgAccess is selected")
	case access != authz.OrgAccessSelected && in.OrgIDs != nil:
		f.Add("orgIds", "is only allowed when orgAccess is selected")
	default:
		ids("orgIds", in.OrgIDs)
	}
	return access
}

// checkRefs checks that restriction ids name things of the target: sites and
// device groups of the organization (one BatchGet), organizations of the partner.
func (s *Service) checkRefs(ctx context.Context, t Target, in InviteInput, access authz.OrgAccess) error {
	f := fault.Fields{}
	if len(in.SiteIDs)+len(in.DeviceGroupIDs) > 0 {
		var refs []store.KeyRef
		for _, id := range in.SiteIDs {
			k := tenant.SiteKeys(t.OrgID, id)
			refs = append(refs, store.KeyRef{PK: k.PK, SK: k.SK})
		}
		for _, id := range in.DeviceGroupIDs {
			k := tenant.GroupKeys(t.OrgID, id)
			refs = append(refs, store.KeyRef{PK: k.PK, SK: k.SK})
		}
		// Up to 100 site and 100 group ids: BatchGet takes at most 100 keys.
		items := map[string]store.Item{}
		for start := 0; start < len(refs); start += 100 {
			got, err := s.St.BatchGet(ctx, refs[start:min(start+100, len(refs))]...)
			if err != nil {
				return err
			}
			maps.Copy(items, got)
		}
		for i, r := range refs {
			if _, ok := items[r.PK+"|"+r.SK]; !ok {
				if i < len(in.SiteIDs) {
					f.Addf(fmt.Sprintf("siteIds.%d", i), "is not a site of this organization")
				} else {
					f.Addf(fmt.Sprintf("deviceGroupIds.%d", i-len(in.SiteIDs)), "is not a device group of this organization")
				}
			}
		}
	}
	if access == authz.OrgAccessSelected {
		orgs, err := s.Orgs.OrgsByID(ctx, in.OrgIDs)
		if err != nil {
			return err
		}
		mine := map[string]bool{}
		for _, o := range orgs {
			if o.PartnerID == t.PartnerID {
				mine[o.ID] = true
			}
		}
		for i, id := range in.OrgIDs {
			if !mine[id] {
				f.Addf(fmt.Sprintf("orgIds.%d", i), "is not an organization of this partner")
			}
		}
	}
	return f.Err()
}

// sendInvite e-mails the acceptance link; a failure is logged and reported as
// inviteEmailSent false, never as a failed invitation (the row is written).
func (s *Service) sendInvite(ctx context.Context, p *authz.Principal, t Target, email, name, token string) bool {
	if s.Mail == nil {
		return false
	}
	// A fixed plain-text template: nothing the inviter typed reaches the mail
	// (not its name, not the invitee's), the organization's or partner's name
	// passes through plainLabel (no markup, address or link survives), and the
	// only link points at the application.
	scopeName := plainLabel(s.scopeName(ctx, t))
	link := strings.TrimRight(s.AppURL, "/") + "/accept-invite?token=" + url.QueryEscape(token)
	err := s.Mail.SendEmail(ctx, notify.Email{To: email, Subject: "You are invited to " + scopeName + " on Gale", Text: fmt.Sprintf(
		"Hello,\n\nYou have been invited to join %s on Gale.\n\n"+
			"Open this link within 7 days to accept: a new account sets its password there, an existing\n"+
			"account confirms with its own password. Then sign in as usual:\n\n%s\n\n"+
			"The link works once. If you did not expect this invitation, ignore this e-mail.\n",
		scopeName, link)})
	if err != nil {
		slog.ErrorContext(ctx, "invitation e-mail not sent", "scope", t.Tenant(), "err", err)
		return false
	}
	return true
}

// plainLabel keeps a tenant-chosen name safe to print in an e-mail: letters,
// digits, spaces and a little punctuation, no dots, slashes, colons or angle
// brackets (so nothing in it reads as markup, an address or a link), at most 80
// characters.
func plainLabel(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == ' ', r == '-', r == '\'', r == '&', r == '(', r == ')', r == ',':
			b.WriteRune(r)
		default:
			b.WriteRune(' ')
		}
	}
	out := strings.Join(strings.Fields(b.String()), " ")
	if r := []rune(out); len(r) > 80 {
		out = string(r[:80])
	}
	return out
}

// scopeName names t for an e-mail: the organization's or partner's name.
func (s *Service) scopeName(ctx context.Context, t Target) string {
	name, err := ScopeName(ctx, s.St, t.Scope, t.PartnerID, t.OrgID)
	if err != nil || name == "" {
		return "Gale"
	}
	return name
}

// ScopeName reads the display name of a membership's tenant: the
// organization's or the partner's ("Gale" for system scope).
func ScopeName(ctx context.Context, st *store.Store, scope authz.Scope, partnerID, orgID string) (string, error) {
	switch scope {
	case authz.ScopeOrg:
		var o tenant.Organization
		k := tenant.OrgKey(orgID)
		if err := st.Get(ctx, k.PK, k.SK, &o); err != nil {
			return "", fmt.Errorf("organization %s: %w", orgID, err)
		}
		return o.Name, nil
	case authz.ScopePartner:
		var pt tenant.Partner
		k := tenant.PartnerKeys(partnerID)
		if err := st.Get(ctx, k.PK, k.SK, &pt); err != nil {
			return "", fmt.Errorf("partner %s: %w", partnerID, err)
		}
		return pt.Name, nil
	}
	return "Gale", nil
}

// ResendInput is the body of POST /users/resend-invite.
type ResendInput struct {
	OrgID  string `json:"orgId"`
	UserID string `json:"userId"`
}

// Resent is the answer of POST /users/resend-invite.
type Resent struct {
	ID              string `json:"id"`
	Email           string `json:"email"`
	InviteEmailSent bool   `json:"inviteEmailSent"`
}

// UpdateInput is a PATCH /users/:id (updateBody checked); nil fields are left
// unchanged.
type UpdateInput struct {
	// OrgID names the organization for partner and system callers.
	OrgID  string
	Name   *string
	Status *string
	// SiteIDs and DeviceGroupIDs (organization memberships), OrgAccess and
	// OrgIDs (partner memberships) change the member's restriction
	// (restrict.go); an empty list lifts it.
	SiteIDs        *[]string
	DeviceGroupIDs *[]string
	OrgAccess      *string
	OrgIDs         *[]string
}
