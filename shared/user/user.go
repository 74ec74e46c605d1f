// Package user owns user accounts and their memberships: the User resource of
// the API (password hashed with Argon2id and never returned), e-mail uniqueness
// across the platform (case-insensitive, enforced by a guard item written in the
// same transaction), partner memberships (orgAccess all/selected/none) and
// organization memberships (optional site and device-group restrictions).
//
// Rows (PK / SK, GSI1, GSI2):
//
//	user          USER#<id> / PROFILE                   -                                   -
//	e-mail guard  EMAIL#<lower e-mail> / EMAIL          -                                   -           holds userId
//	membership    USER#<uid> / MEMBER#<scope>#<tenant>  MEMBERS#<scope>#<tenant> / USER#<uid>  ROLEUSERS#<roleId> / <uid>
//	invitation    USER#<uid> / INVITE#<scope>#<tenant>  -                                   -           tokenHash, ttl 7 days
//	admin epoch   ORG#<id> | PARTNER#<id> / ADMINS      -                                   -           epoch (admin.go: last-administrator rule)
//
// <scope>#<tenant> is SYSTEM#-, PARTNER#<partnerId> or ORG#<orgId>. A user's
// memberships are one query of their partition; a tenant's users are one GSI1
// query; a role's holders are one GSI2 query.
//
// Account-wide fields (name, status, credentials) belong to the account; each
// membership has a status of its own (invited, active, suspended). A tenant
// changes the account only when it holds every membership of it; otherwise its
// status changes suspend or restore its own membership, and name changes are
// refused (Service.Update). Inviting an address creates an invited membership
// whether or not the account exists; the inviter sees only what it sent until
// the person accepts, and an existing account accepts with its own password.
//
// The Service (service.go, handler.go) administers users under /api/v1/users:
// own profile, listing, invitation (invite.go: one token per user and scope,
// stored as its SHA-256, so re-inviting into a scope revokes that scope's
// previous token and no other tenant's), status, restriction edits
// (restrict.go: sites, device groups, partner organization access), removal
// from a scope and role assignment. Role and restriction edits move the
// membership's version (compare-and-swap). Roles and organizations come through narrow
// interfaces (role.Store, tenant.Store satisfy them), since role imports user.
// Accepting an invitation ends in a sign-in and lives in shared/invite.
package user

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Status of a user.
type Status string

const (
	StatusActive   Status = "active"
	StatusInvited  Status = "invited"
	StatusDisabled Status = "disabled"
)

// User is an account. Secret fields carry json:"-" so no response can leak them.
type User struct {
	store.Keys
	ID                string   `dynamodbav:"id" json:"id"`
	Email             string   `dynamodbav:"email" json:"email"`
	Name              string   `dynamodbav:"name" json:"name"`
	PasswordHash      string   `dynamodbav:"passwordHash,omitempty" json:"-"`
	MFASecret         string   `dynamodbav:"mfaSecret,omitempty" json:"-"` // encrypted
	MFAEnabled        bool     `dynamodbav:"mfaEnabled" json:"mfaEnabled"`
	MFARecoveryCodes  []string `dynamodbav:"mfaRecoveryCodes,omitempty" json:"-"` // hashed
	MFALastStep       int64    `dynamodbav:"mfaLastStep,omitempty" json:"-"`
	PhoneNumber       string   `dynamodbav:"phoneNumber,omitempty" json:"phoneNumber,omitempty"`
	PhoneVerified     bool     `dynamodbav:"phoneVerified" json:"phoneVerified"`
	MFAMethod         string   `dynamodbav:"mfaMethod,omitempty" json:"mfaMethod,omitempty"`
	MFASMSEnabled     bool     `dynamodbav:"mfaSmsEnabled,omitempty" json:"-"` // SMS is an enabled factor (MFAMethod is only the primary)
	PasskeyCount      int      `dynamodbav:"passkeyCount,omitempty" json:"-"`  // registered passkeys; shared/passkey moves it with each one (compare-and-swap)
	Status            Status   `dynamodbav:"status" json:"status"`
	AvatarURL         string   `dynamodbav:"avatarUrl,omitempty" json:"avatarUrl,omitempty"`
	LastLoginAt       string   `dynamodbav:"lastLoginAt,omitempty" json:"lastLoginAt,omitempty"`
	PasswordChangedAt string   `dynamodbav:"passwordChangedAt,omitempty" json:"passwordChangedAt,omitempty"`
	// TokensValidAfter revokes every session and token issued before it in one write.
	TokensValidAfter string `dynamodbav:"tokensValidAfter,omitempty" json:"-"`
	// LastMembership is the id of the membership the account last switched to
	// (POST /auth/switch, shared/signin): password sign-in resumes it while it
	// stays active.
	LastMembership string `dynamodbav:"lastMembership,omitempty" json:"-"`
	// Version increments on every change of the profile, for compare-and-swap.
	Version   int    `dynamodbav:"version" json:"-"`
	CreatedAt string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// TOTPEnrolled reports whether a TOTP authenticator is enrolled (Force MFA's test).
func (u *User) TOTPEnrolled() bool { return u.MFAEnabled && u.MFASecret != "" }

// SMSEnrolled reports whether SMS is an enabled second factor (to a verified phone).
func (u *User) SMSEnrolled() bool {
	return u.MFAEnabled && u.MFASMSEnabled && u.PhoneVerified && u.PhoneNumber != ""
}

// MemberStatus is a membership's own state. A membership written before it
// existed has none and is active.
type MemberStatus string

const (
	// MemberInvited: invited, not yet accepted; it grants nothing.
	MemberInvited MemberStatus = "invited"
	MemberActive  MemberStatus = "active"
	// MemberSuspended: its tenant disabled the person there after they
	// accepted; it grants nothing.
	MemberSuspended MemberStatus = "suspended"
)

// Membership links a user to a scope with a role.
type Membership struct {
	store.Keys
	ID        string          `dynamodbav:"id" json:"id"`
	UserID    string          `dynamodbav:"userId" json:"userId"`
	Scope     authz.Scope     `dynamodbav:"scope" json:"scope"`
	PartnerID string          `dynamodbav:"partnerId,omitempty" json:"partnerId,omitempty"`
	OrgID     string          `dynamodbav:"orgId,omitempty" json:"orgId,omitempty"`
	RoleID    string          `dynamodbav:"roleId" json:"roleId"`
	RoleOwner string          `dynamodbav:"roleOwner" json:"-"`
	OrgAccess authz.OrgAccess `dynamodbav:"orgAccess,omitempty" json:"orgAccess,omitempty"`
	OrgIDs    []string        `dynamodbav:"orgIds,omitempty" json:"orgIds,omitempty"`
	SiteIDs   []string        `dynamodbav:"siteIds,omitempty" json:"siteIds,omitempty"`
	GroupIDs  []string        `dynamodbav:"deviceGroupIds,omitempty" json:"deviceGroupIds,omitempty"`
	Status    MemberStatus    `dynamodbav:"status,omitempty" json:"-"`
	// InvitedName is the name the inviter gave; until acceptance the inviter
	// sees it instead of the account's own.
	InvitedName string `dynamodbav:"invitedName,omitempty" json:"-"`
	// Version moves with every change of the role or the restriction
	// (siteIds, deviceGroupIds, orgAccess, orgIds), for compare-and-swap:
	// absent on rows no such change has written yet.
	Version   int    `dynamodbav:"version,omitempty" json:"-"`
	CreatedAt string `dynamodbav:"createdAt" json:"createdAt"`
}

// Active reports whether the membership grants its role.
func (m *Membership) Active() bool { return m.Status == "" || m.Status == MemberActive }

// Pending reports whether the membership awaits acceptance now (state
// invited; a suspended invitation does not): its token may be accepted and
// resent.
func (m *Membership) Pending(u *User) bool { return m.State(u) == MemberInvited }

// Tenant returns the membership's <scope>#<tenant> key part.
func TenantKey(scope authz.Scope, partnerID, orgID string) string {
	switch scope {
	case authz.ScopeSystem:
		return "SYSTEM#-"
	case authz.ScopePartner:
		return store.PartnerPK(partnerID)
	case authz.ScopeOrg:
		return store.OrgPK(orgID)
	}
	return "NONE#-"
}

// ProfileKey is the key of a user's profile item.
func ProfileKey(userID string) store.KeyRef { return Key(userID, "PROFILE") }

// PK is account userID's partition: its profile, memberships and invitations,
// and the rows other packages keep for the account (sessions, second
// factors, passkeys, password resets, push targets, deletion requests) are
// all keyed under it, through PK or Key only (TestUserKeysOnlyThroughUser).
func PK(userID string) string { return "USER#" + userID }

// Key is row sk of account userID's partition.
func Key(userID, sk string) store.KeyRef { return store.KeyRef{PK: PK(userID), SK: sk} }

// MembershipKey is the key of a user's membership in a tenant.
func MembershipKey(userID string, scope authz.Scope, partnerID, orgID string) store.KeyRef {
	return Key(userID, "MEMBER#"+TenantKey(scope, partnerID, orgID))
}

// MembershipKeys fills the keys of m.
func (m *Membership) SetKeys() {
	k := MembershipKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	t := TenantKey(m.Scope, m.PartnerID, m.OrgID)
	m.Keys = store.Keys{PK: k.PK, SK: k.SK, GSI1PK: "MEMBERS#" + t, GSI1SK: "USER#" + m.UserID,
		GSI2PK: "ROLEUSERS#" + m.RoleID, GSI2SK: m.UserID}
}

// SetKeys fills the keys of u.
func (u *User) SetKeys() {
	k := ProfileKey(u.ID)
	u.Keys = store.Keys{PK: k.PK, SK: k.SK}
}

// EmailGuard reserves an e-mail address for a user.
type EmailGuard struct {
	store.Keys
	UserID string `dynamodbav:"userId"`
}

// EmailKey is the guard key of an address (lower-cased).
func EmailKey(email string) store.KeyRef {
	return store.KeyRef{PK: "EMAIL#" + normalize(email), SK: "EMAIL"}
}
