// Package authz answers one question for every service method: may this principal
// do resource:action here? It owns the Principal (who is calling, at which scope,
// with which permissions and restrictions) and the decisions over it: permission
// checks (with wildcards and API-key scopes), organization visibility for system,
// partner (orgAccess all/selected/none) and organization callers, site and
// device-group restrictions, and the spec's context rules.
//
// Every service method starts with Require (or RequireAny); the HTTP router fails a
// route that returned success without one (Tracker). Decisions are pure functions of
// the Principal: authentication (shared/auth) loads everything they need first.
package authz

import (
	"context"
	"slices"
	"sync/atomic"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/fault"
)

// Scope is where a caller acts.
type Scope string

const (
	ScopeNone    Scope = ""
	ScopeSystem  Scope = "system"
	ScopePartner Scope = "partner"
	ScopeOrg     Scope = "organization"
)

// OrgAccess is a partner membership's reach over the partner's organizations.
type OrgAccess string

const (
	OrgAccessAll      OrgAccess = "all"
	OrgAccessSelected OrgAccess = "selected"
	OrgAccessNone     OrgAccess = "none"
)

// Kind is how the caller authenticated.
type Kind string

const (
	KindUser   Kind = "user"
	KindAPIKey Kind = "api_key"
	KindAgent  Kind = "agent"
)

// Principal is the authenticated caller.
type Principal struct {
	Kind      Kind
	UserID    string
	Email     string
	Name      string
	SessionID string

	Scope     Scope
	PartnerID string
	OrgID     string
	// Partner scope only.
	OrgAccess OrgAccess
	OrgIDs    []string
	// Organization scope only: empty means every site / device group.
	SiteIDs        []string
	DeviceGroupIDs []string

	RoleID string
	// RoleOwner is the owner of RoleID as the membership names it (a user's
	// session only): a session started from this one carries its role hint.
	RoleOwner string
	RoleName  string
	Perms     Set
	ForceMFA  bool
	// MFA is true when the access token was issued after a second factor.
	MFA bool
	// IdP is the SSO provider whose sign-in opened the session ("" for a
	// password or passkey sign-in): the session acts only through the
	// membership that provider serves and changes nothing account-wide
	// (AccountOwner).
	IdP string

	// API keys: the key's scopes ("*" or resource:action); Perms then holds what
	// the key's creator still holds (the ceiling), or the principal's scopes.
	APIKeyID           string
	KeyPrefix          string
	KeyScopes          []string
	ServicePrincipalID string

	// Agents: the device the token belongs to.
	DeviceID string

	IP        string
	UserAgent string

	checked *atomic.Bool
}

type ctxKey struct{}

// WithPrincipal attaches p to ctx.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	if p.checked == nil {
		p.checked = &atomic.Bool{}
	}
	return context.WithValue(ctx, ctxKey{}, p)
}

// FromContext returns the caller, or nil.
func FromContext(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}

// Tracker tells the router whether a request made an authorization decision.
type Tracker struct{}

// Checked reports whether Require (or a sibling) ran for ctx's principal.
func (Tracker) Checked(ctx context.Context) bool {
	p := FromContext(ctx)
	return p != nil && p.checked != nil && p.checked.Load()
}

func (p *Principal) mark() {
	if p.checked != nil {
		p.checked.Store(true)
	}
}

// Errors with the spec's texts.
var (
	ErrUnauthenticated    = fault.Unauthorized("Authentication required")
	ErrForbidden          = fault.Forbidden("Insufficient permissions")
	ErrKeyScope           = fault.Forbidden("API key does not have required permissions")
	ErrContextRequired    = fault.Forbidden("Partner or organization context required")
	ErrFullPartnerAccess  = fault.Forbidden("Full partner organization access required")
	ErrOrgContextRequired = fault.Forbidden("Organization context required")
	ErrMFARequired        = fault.Forbidden("MFA required").WithCode(fault.CodeMFARequired).WithDetails(mfaHint)
	ErrUserSessionOnly    = fault.Forbidden("This route requires a user session")
	ErrRestrictedWide     = fault.Forbidden("Site- or device-group-restricted users cannot change organization-wide settings")
	ErrAccountCredential  = fault.Forbidden("Account changes need a password or passkey sign-in").WithCode(fault.CodeCredentialSignIn)
)

// mfaHint is the next step of a 403 MFA_REQUIRED (issue 35): the `mfa` claim
// is set when a session signs in, so enrolling alone does not lift the
// refusal; the caller signs in again with the second factor. API keys never
// satisfy MFA.
var mfaHint = map[string]any{
	"enrollUrl": "/api/v1/auth/mfa/setup",
	"hint": "Enrol TOTP (POST /api/v1/auth/mfa/setup, then POST /api/v1/auth/mfa/enable with a code), then sign in again: " +
		"the session's MFA state is set at sign-in. API keys never satisfy MFA; use a user session.",
}

// missing is the refusal err naming what the caller lacks: details.required
// is the permission (or key scope) the route checks, details.anyOf every one
// that would do when the route takes several.
func missing(err *fault.Error, perms []Permission) error {
	if len(perms) == 0 {
		return err
	}
	d := map[string]any{"required": perms[0].String()}
	if len(perms) > 1 {
		all := make([]string, len(perms))
		for i, p := range perms {
			all[i] = p.String()
		}
		d["anyOf"] = all
	}
	return err.WithDetails(d)
}

// RequireUnrestricted refuses a site- or device-group-restricted caller on a
// change that reaches the whole organization (its settings, its roles).
func (p *Principal) RequireUnrestricted() error {
	if p.SiteRestricted() || (p.Scope == ScopeOrg && len(p.DeviceGroupIDs) > 0) {
		return ErrRestrictedWide
	}
	return nil
}

// Require returns the caller of ctx when they hold perm, and records that an
// authorization decision was made. Every route that calls it acts in a tenant,
// so a caller with neither a partner nor an organization (and not system
// scope) is refused with `Partner or organization context required` before the
// permission is looked at (HasContext).
func Require(ctx context.Context, perm Permission) (*Principal, error) {
	return RequireAny(ctx, perm)
}

// Need is what a route asks of its caller beside a permission and a tenant
// (RequireTenant).
type Need uint8

const (
	// NeedUserSession refuses API keys: only a user session may (keys never
	// manage keys, filters, scripts...).
	NeedUserSession Need = 1 << iota
	// NeedUnrestricted refuses a site- or device-group-restricted caller: the
	// change reaches the whole organization.
	NeedUnrestricted
)

// RequireTenant is the preamble of a tenant's route: the caller holds perm
// and acts in a partner or an organization (or is the system), and meets
// needs. The tenant of the record acted on is checked by the read that finds
// it (tenant.Find, tenant.Store.Reach). Refusals in this order: 401, the
// permission (403), a user session, the tenant context, the restriction.
func RequireTenant(ctx context.Context, perm Permission, needs ...Need) (*Principal, error) {
	p, err := Require(ctx, perm)
	if err != nil {
		return nil, err
	}
	if err := p.meets(needs); err != nil {
		return nil, err
	}
	return p, nil
}

// InTenant is RequireTenant without a permission, for a route that answers
// each caller what its own permissions show (global search).
func InTenant(ctx context.Context, needs ...Need) (*Principal, error) {
	p, err := Authenticated(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.meets(needs); err != nil {
		return nil, err
	}
	return p, nil
}

// meets checks needs and the tenant context, in RequireTenant's order.
func (p *Principal) meets(needs []Need) error {
	var need Need
	for _, n := range needs {
		need |= n
	}
	if need&NeedUserSession != 0 {
		if err := p.UserSession(); err != nil {
			return err
		}
	}
	if err := p.RequireTenantContext(); err != nil && p.Scope != ScopeSystem {
		return err
	}
	if need&NeedUnrestricted != 0 {
		return p.RequireUnrestricted()
	}
	return nil
}

// RequireAny passes when the caller holds at least one of perms (API-key scope rule 1).
func RequireAny(ctx context.Context, perms ...Permission) (*Principal, error) {
	p := FromContext(ctx)
	if p == nil {
		return nil, ErrUnauthenticated
	}
	p.mark()
	if !p.HasContext() {
		return nil, ErrContextRequired
	}
	if p.Kind == KindAPIKey {
		for _, perm := range perms {
			if p.keyAllows(perm) && p.Perms.Has(perm) {
				return p, nil
			}
		}
		return nil, missing(ErrKeyScope, perms)
	}
	for _, perm := range perms {
		if p.Perms.Has(perm) {
			return p, nil
		}
	}
	return nil, missing(ErrForbidden, perms)
}

// Authenticated returns the caller without a permission check, for routes open
// to any signed-in user (own profile, own MFA). It still records the decision.
func Authenticated(ctx context.Context) (*Principal, error) {
	p := FromContext(ctx)
	if p == nil {
		return nil, ErrUnauthenticated
	}
	p.mark()
	return p, nil
}

// SignedIn is the caller of an own-account route: any authenticated caller
// (Authenticated: no permission needed, the route acts on the caller's own
// account), which must be a user session (UserSession: API keys and agents
// are refused).
func SignedIn(ctx context.Context) (*Principal, error) {
	p, err := Authenticated(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.UserSession(); err != nil {
		return nil, err
	}
	return p, nil
}

// AccountOwner is the caller of a route that changes what is account-wide
// (password, TOTP, SMS, passkeys, recovery codes, e-mail, name, account
// deletion): SignedIn, in a session the account's own credential opened. An
// SSO session (IdP set) is refused with ErrAccountCredential: a provider
// speaks for its tenant's membership, never for the account
// (docs/decisions.md#sso-sessions).
func AccountOwner(ctx context.Context) (*Principal, error) {
	p, err := SignedIn(ctx)
	if err != nil {
		return nil, err
	}
	if p.IdP != "" {
		return nil, ErrAccountCredential
	}
	return p, nil
}

// keyAllows applies an API key's scope rules: [] allows nothing scope-protected,
// "*" (or "*:*", the catalogue's wildcard) allows everything, otherwise the exact
// resource:action or its resource:*, as Set.Has reads a role's permissions.
func (p *Principal) keyAllows(perm Permission) bool {
	for _, s := range p.KeyScopes {
		if s == "*" || s == AdminAll.String() || s == perm.String() || s == perm.Resource+":*" {
			return true
		}
	}
	return false
}

// Holds reports whether the caller holds perm, without recording a decision
// (for ceilings such as "grant only scopes you hold").
func (p *Principal) Holds(perm Permission) bool {
	if p.Kind == KindAPIKey {
		return p.keyAllows(perm) && p.Perms.Has(perm)
	}
	return p.Perms.Has(perm)
}

// UserSession refuses API keys and agents (key management, MFA routes).
func (p *Principal) UserSession() error {
	if p.Kind != KindUser {
		return ErrUserSessionOnly
	}
	return nil
}

// RequireMFA refuses a session without a completed second factor.
func (p *Principal) RequireMFA() error {
	if p.Kind != KindUser || !p.MFA {
		return ErrMFARequired
	}
	return nil
}

// Org is what visibility decisions need to know about an organization.
type Org struct {
	ID        string
	PartnerID string
}

// CanAccessOrg reports whether the caller may see organization o at all.
func (p *Principal) CanAccessOrg(o Org) bool {
	switch p.Scope {
	case ScopeSystem:
		return true
	case ScopePartner:
		if p.PartnerID == "" || o.PartnerID != p.PartnerID {
			return false
		}
		switch p.OrgAccess {
		case OrgAccessAll:
			return true
		case OrgAccessSelected:
			return slices.Contains(p.OrgIDs, o.ID)
		}
		return false
	case ScopeOrg:
		return p.OrgID != "" && o.ID == p.OrgID
	}
	return false
}

// CanAccessPartner reports whether the caller may act on partner partnerID itself.
func (p *Principal) CanAccessPartner(partnerID string) bool {
	return p.Scope == ScopeSystem || (p.Scope == ScopePartner && p.PartnerID != "" && p.PartnerID == partnerID)
}

// SiteRestricted reports whether the caller is limited to some sites.
func (p *Principal) SiteRestricted() bool { return p.Scope == ScopeOrg && len(p.SiteIDs) > 0 }

// CanAccessSite reports whether the caller may see site siteID of an accessible org.
// An item with no site (siteID "") is visible only to unrestricted callers.
func (p *Principal) CanAccessSite(siteID string) bool {
	if !p.SiteRestricted() {
		return true
	}
	return siteID != "" && slices.Contains(p.SiteIDs, siteID)
}

// CanAccessDeviceGroups reports whether a device in groupIDs is within the caller's
// device-group restriction (any overlap).
func (p *Principal) CanAccessDeviceGroups(groupIDs []string) bool {
	if p.Scope != ScopeOrg || len(p.DeviceGroupIDs) == 0 {
		return true
	}
	for _, g := range groupIDs {
		if slices.Contains(p.DeviceGroupIDs, g) {
			return true
		}
	}
	return false
}

// CanAccessDevice combines org, site and device-group restrictions.
func (p *Principal) CanAccessDevice(o Org, siteID string, groupIDs []string) bool {
	return p.CanAccessOrg(o) && p.CanAccessSite(siteID) && p.CanAccessDeviceGroups(groupIDs)
}

// HasContext reports whether the caller acts somewhere: system scope, or a
// partner or an organization. A self-registered user with no membership has
// none. Agents act for their device and always have one.
func (p *Principal) HasContext() bool {
	return p.Kind == KindAgent || p.Scope == ScopeSystem || p.PartnerID != "" || p.OrgID != ""
}

// RequireTenantContext enforces 403 `Partner or organization context required`.
func (p *Principal) RequireTenantContext() error {
	if (p.Scope == ScopePartner && p.PartnerID != "") || (p.Scope == ScopeOrg && p.OrgID != "") {
		return nil
	}
	return ErrContextRequired
}

// RequireFullPartnerAccess enforces `Full partner organization access required`
// for administering users, roles and access reviews from partner scope.
func (p *Principal) RequireFullPartnerAccess() error {
	if p.Scope == ScopePartner && p.OrgAccess != OrgAccessAll {
		return ErrFullPartnerAccess
	}
	return nil
}

// RequireOrgContext enforces `Organization context required` for organization
// callers without an organization.
func (p *Principal) RequireOrgContext() error {
	if p.Scope == ScopeOrg && p.OrgID == "" {
		return ErrOrgContextRequired
	}
	if p.Scope == ScopeNone {
		return ErrOrgContextRequired
	}
	return nil
}

// Visibility describes which organizations a list may include.
type Visibility struct {
	// All: every organization (system scope).
	All bool
	// PartnerID: every organization of the partner (orgAccess all).
	PartnerID string
	// OrgIDs: exactly these organizations (organization scope or selected access).
	OrgIDs []string
}

// Visible returns the caller's organization visibility for lists.
func (p *Principal) Visible() Visibility {
	switch p.Scope {
	case ScopeSystem:
		return Visibility{All: true}
	case ScopePartner:
		switch p.OrgAccess {
		case OrgAccessAll:
			return Visibility{PartnerID: p.PartnerID}
		case OrgAccessSelected:
			return Visibility{OrgIDs: slices.Clone(p.OrgIDs)}
		}
		return Visibility{}
	case ScopeOrg:
		if p.OrgID != "" {
			return Visibility{OrgIDs: []string{p.OrgID}}
		}
	}
	return Visibility{}
}

// Tenant is the audit tenant of the caller's own scope.
func (p *Principal) Tenant() string { return audit.Tenant(p.OrgID, p.PartnerID) }

// Actor is the caller as an audit actor.
func (p *Principal) Actor() audit.Actor {
	a := audit.Actor{ID: p.UserID, Email: p.Email, Type: string(p.Kind), IP: p.IP, UserAgent: p.UserAgent}
	switch p.Kind {
	case KindAPIKey:
		a.ID = p.APIKeyID
		if p.ServicePrincipalID != "" {
			a.ID = p.ServicePrincipalID
		}
	case KindAgent:
		a.ID = p.DeviceID
	}
	return a
}
