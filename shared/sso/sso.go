// Package sso owns OpenID Connect single sign-on (/api/v1/sso): an
// organization's identity providers, the login flow (authorization code with
// PKCE S256, state and nonce), the provisioning and linking of accounts, and
// the one-time exchange code that ends in a sign-in. The protocol is
// github.com/coreos/go-oidc/v3 (discovery, JWKS, ID-token verification) and
// golang.org/x/oauth2 (authorization URL, code exchange, PKCE); every request
// they make goes through shared/outbound's client (public HTTPS only, addresses
// checked at dial time, no redirects followed).
//
// # Providers
//
// A provider belongs to one organization or to one partner
// (docs/decisions.md#sso-management: "orgId|partnerId"). orgId names an
// organization (partner and system callers name one they reach); without it an
// organization caller means its organization and a partner caller its own
// partner; a system caller names orgId or partnerId. Reads need
// organizations:read; writes organizations:write + MFA and an unrestricted
// caller, and for a partner's provider a partner caller with access to every
// organization of the partner (orgAccess all), since the provider signs in the
// partner's own members. Organization callers never see a partner's provider
// (404), not even those of the partner's organizations.
//
// Tenancy of logins: an organization's provider signs in only organization
// memberships of that organization; a partner's provider only partner-scope
// memberships of that partner (its auto-provisioned members get a partner
// role and orgAccess none). Neither serves the other: an organization of the
// partner does not fall back to its partner's provider, and a partner provider
// never signs anyone into an organization membership, so no partner's
// provider reaches another tenant's accounts. No provider ever signs in a
// system-scope membership. GET /sso/login/:orgId and
// /sso/check/:orgId take an organization's id or a partner's (ids are UUIDs:
// the two never share one); the organization's row is read first. A partner
// provider cannot enforce SSO (enforceSSO true is 400): enforcement is the
// organization's password policy.
//
// Ceiling (ATTACKS 3): whoever configures a provider's trust (issuer,
// clientId) can sign in as anyone it links, so a provider keeps a ceiling,
// the permissions of its creator; a PATCH naming both issuer and clientId
// re-anchors it to the writer's, and every other write (PATCH, status) keeps
// only what both the ceiling and the writer hold. A login (a linked identity,
// a new link, an accepted invitation or a provisioning) into a membership
// whose role holds a permission beyond the ceiling answers no_org_access and
// changes nothing. A provider stored before ceilings were kept has none and
// admits only roles without permissions until it is re-anchored. A linked
// identity is bound to the issuer that vouched for it as well as to the
// provider: moving a provider to another issuer leaves the old links behind. The client secret is sealed at rest
// (shared/secret, AES-GCM bound to "sso:<providerId>:clientSecret") and never
// returned (hasClientSecret). The issuer must pass the outbound guard at create
// and update. The (issuer, clientId) pair is unique across the platform (a
// guard row written in the same transaction; 409 otherwise), so one tenant
// cannot register another tenant's identity-provider application and harvest
// its users' sign-ins. defaultRoleId is required when autoProvision is on and
// must be a role the caller could assign in the organization (an organization
// system role or a custom role of the organization, every permission of which
// the caller holds). New providers are inactive; POST /status sets active,
// inactive or testing, and only an active provider serves logins. An
// organization (and a partner) has at most one active provider (409
// otherwise); the active one is mirrored in the enforce row that sign-in and
// /sso/check read. SAML
// exists in the schema only: creating one is 400 `SAML is not implemented`.
//
// # Login
//
// GET /sso/login/:orgId discovers the active provider, stores a login session
// (state, nonce, the PKCE verifier sealed) under SHA-256 of the state for 10
// minutes, sets the state in the __Host-gale_sso_state cookie (Secure,
// HttpOnly, SameSite=Lax, Path=/) and answers 302 to the provider. The provider
// returns to <API_URL>/api/v1/sso/callback, which:
//
//  1. requires the state of the query to equal the cookie's (constant time),
//     then spends the session (a conditional delete: a replayed state finds
//     nothing) and checks its age with the injected clock;
//  2. requires the provider to be still active (provider_not_found) and, when
//     the provider names itself (RFC 9207 iss), that it is this one;
//  3. exchanges the code with the verifier at that provider's token endpoint,
//     verifies the ID token (signature from the JWKS, issuer, audience =
//     clientId, expiry, nonce), reads user info (its sub must match) and maps
//     the claims through attributeMapping;
//  4. decides by the linking table below, changing nothing when it refuses;
//  5. stores a one-time exchange code (SHA-256 of 256 random bits, 2 minutes)
//     in the same transaction and answers 302 to
//     <APP_URL>/auth/sso/callback#ssoCode=<code>.
//
// Every failure answers 302 to <APP_URL>/login?error=<code>, with the spec's
// codes (session_expired, provider_not_found, domain_not_allowed,
// user_not_found, default_role_required, no_org_access) and those of
// docs/decisions.md#sso-sign-in-flow (invalid_state, token_exchange_failed,
// id_token_invalid, email_missing, provider_error, account_exists).
// POST /sso/exchange {code} spends the code (of two concurrent exchanges one
// wins) and answers the login response with the refresh cookie, through shared/signin
// (the account's own MFA still applies: mfaRequired with a temp token; the
// token's mfa claim is never taken from the identity provider).
//
// # Linking table
//
// An identity provider speaks only for its own tenant
// (docs/decisions.md#identity-federation). At a provider's sign-in of an IdP
// subject already linked to an account, the account is signed in when it still
// holds an active (accepted, not suspended) membership the provider serves,
// within the ceiling (no_org_access otherwise). At a first sign-in of a
// subject, by the e-mail claim (the domain allowed), in this order:
//
//	account of the e-mail                            outcome
//	none, autoProvision on, email_verified           provision: a new active account without a password and
//	                                                 an accepted membership with defaultRoleId (#ssoCode)
//	none, otherwise                                  user_not_found
//	any, email_verified not true                     user_not_found
//	active, with an active membership served         link (#ssoCode)
//	any, with an accepted membership served that     no_org_access (its tenant suspended it, or the account
//	  grants nothing                                   is disabled)
//	credentialless, with an invitation served        link and accept that invitation (#ssoCode); the
//	                                                   account becomes active, no password is set
//	any other (self-registered, a member elsewhere   account_exists
//	  only, invited elsewhere, invited here but
//	  holding a password or an identity provider's
//	  link)
//
// A link, acceptance or provisioning beyond the ceiling answers no_org_access.
// A membership "served" is one of the provider's tenant (see Tenancy of
// logins). "Credentialless" is an account with no password, passkey or link:
// status invited and no password (an account leaves status invited only
// through a credential, and passkeys are registered only by active accounts);
// an active account without a password is an identity provider's. Every
// refusal writes nothing (no link, membership, acceptance or exchange code);
// a provider never changes a password, MFA or any other membership, and the
// account's other invitations stay pending. email_verified speaks for the
// address only, never for more of the account. linking_test.go is this table,
// case by case, for the provider of each kind of tenant.
//
// # SSO sessions
//
// A session from /sso/exchange carries its provider (access-token claim idp,
// shared/session; kept through refresh and through the MFA hand-off, whose
// temp token records the provider and the membership). It acts only in the
// membership the provider served, and every account-wide change (password,
// TOTP, SMS, passkeys, recovery codes, name, account deletion) refuses it with
// 403 credential_sign_in_required `Account changes need a password or passkey
// sign-in` (authz.AccountOwner). An account an identity provider provisioned
// sets its first password by accepting an invitation (shared/invite). GET /sso/check/:orgId answers {ssoEnabled, provider,
// enforceSSO} from the enforce row; an unknown organization looks like one
// without a provider.
//
// The public routes are rate-limited per source IP (LoginLimit, CallbackLimit,
// ExchangeLimit: 30 per 5 minutes each, shared/ratelimit), counted before any
// other store work; a refusal is 429 rate_limited with retryAfter.
//
// # Rows
//
//	provider          ORG#<oid> / SSOPROV#<id>             GSI1 SSOPROVREF#<id> / SSOPROV
//	                  GSI4 ORG#<oid>#SSOPROVS / <createdAt>#<id> (the list, oldest first)
//	partner provider  PARTNER#<pid> / SSOPROV#<id>         GSI1 SSOPROVREF#<id> / SSOPROV
//	                  GSI4 PARTNER#<pid>#SSOPROVS / <createdAt>#<id> (the partner's own list)
//	client guard      SSOCLIENT#<sha256(issuer, clientId)> / SSOCLIENT        providerId
//	active provider   ORG#<oid> or PARTNER#<pid> / SSOACTIVE                  (shared/sso/enforce)
//	login session     SSOLOGIN#<sha256(state)> / SSOLOGIN  ttl 1 h after its 10-minute expiry (so an expired one is told apart)
//	exchange code     SSOCODE#<sha256(code)> / SSOCODE     ttl 2 minutes
//	linked identity   SSOIDENT#<providerId> / SUB#<sha256(issuer, sub)>       userId; deleted with the provider
package sso

import (
	"time"

	"github.com/gale-rmm/gale/shared/store"
)

// Provider types and statuses.
const (
	TypeOIDC = "oidc"
	TypeSAML = "saml"

	StatusActive   = "active"
	StatusInactive = "inactive"
	StatusTesting  = "testing"
)

// Lifetimes.
const (
	LoginTTL = 10 * time.Minute
	CodeTTL  = 2 * time.Minute
)

// Limits of a provider's fields.
const (
	MaxName      = 255
	MaxClientID  = 255
	MaxSecret    = 1024
	MaxScopes    = 20
	MaxScope     = 100
	MaxDomains   = 50
	MaxDomain    = 253
	MaxClaimName = 100
)

// CookieName holds the login's state in the browser that started it.
const CookieName = "__Host-gale_sso_state"

// Mapping names the claims a provider's attributes come from; empty fields
// take the standard claim names.
type Mapping struct {
	Email     string `dynamodbav:"email,omitempty" json:"email"`
	Name      string `dynamodbav:"name,omitempty" json:"name"`
	FirstName string `dynamodbav:"firstName,omitempty" json:"firstName"`
	LastName  string `dynamodbav:"lastName,omitempty" json:"lastName"`
	Groups    string `dynamodbav:"groups,omitempty" json:"groups"`
}

// DefaultMapping is the standard OpenID Connect claims.
var DefaultMapping = Mapping{Email: "email", Name: "name", FirstName: "given_name", LastName: "family_name", Groups: "groups"}

// withDefaults fills empty fields from DefaultMapping.
func (m Mapping) withDefaults() Mapping {
	d := DefaultMapping
	if m.Email != "" {
		d.Email = m.Email
	}
	if m.Name != "" {
		d.Name = m.Name
	}
	if m.FirstName != "" {
		d.FirstName = m.FirstName
	}
	if m.LastName != "" {
		d.LastName = m.LastName
	}
	if m.Groups != "" {
		d.Groups = m.Groups
	}
	return d
}

// record is a stored provider.
type record struct {
	store.Keys
	ID               string   `dynamodbav:"id"`
	OrgID            string   `dynamodbav:"orgId,omitempty"`
	PartnerID        string   `dynamodbav:"partnerId,omitempty"`
	Name             string   `dynamodbav:"name"`
	Type             string   `dynamodbav:"type"`
	Issuer           string   `dynamodbav:"issuer"`
	ClientID         string   `dynamodbav:"clientId"`
	ClientSecret     string   `dynamodbav:"clientSecret,omitempty"` // sealed
	Scopes           []string `dynamodbav:"scopes"`
	Mapping          Mapping  `dynamodbav:"attributeMapping"`
	AutoProvision    bool     `dynamodbav:"autoProvision"`
	DefaultRoleID    string   `dynamodbav:"defaultRoleId,omitempty"`
	DefaultRoleOwner string   `dynamodbav:"defaultRoleOwner,omitempty"`
	AllowedDomains   []string `dynamodbav:"allowedDomains"`
	EnforceSSO       bool     `dynamodbav:"enforceSso"`
	Status           string   `dynamodbav:"status"`
	CreatedBy        string   `dynamodbav:"createdBy"`
	CreatedAt        string   `dynamodbav:"createdAt"`
	UpdatedAt        string   `dynamodbav:"updatedAt"`
	Version          int      `dynamodbav:"version"`
	// Ceiling is the permissions ("resource:action") the provider may sign in
	// with: what every writer of its trust settings held (see the package doc).
	Ceiling []string `dynamodbav:"ceiling"`
}

// Provider is a provider as the API shows it (SSOProvider): exactly one of
// OrgID (an organization's provider) and PartnerID (a partner's own).
type Provider struct {
	ID               string   `json:"id"`
	OrgID            string   `json:"orgId,omitempty"`
	PartnerID        string   `json:"partnerId,omitempty"`
	Name             string   `json:"name"`
	Type             string   `json:"type"`
	Issuer           string   `json:"issuer"`
	ClientID         string   `json:"clientId"`
	HasClientSecret  bool     `json:"hasClientSecret"`
	Scopes           []string `json:"scopes"`
	AttributeMapping Mapping  `json:"attributeMapping"`
	AutoProvision    bool     `json:"autoProvision"`
	DefaultRoleID    *string  `json:"defaultRoleId"`
	AllowedDomains   string   `json:"allowedDomains"` // comma-separated, as the spec
	EnforceSSO       bool     `json:"enforceSSO"`
	Status           string   `json:"status"`
	CreatedAt        string   `json:"createdAt"`
	UpdatedAt        string   `json:"updatedAt"`
}

func (r *record) view() *Provider {
	v := &Provider{ID: r.ID, OrgID: r.OrgID, Name: r.Name, Type: r.Type, Issuer: r.Issuer, ClientID: r.ClientID,
		HasClientSecret: r.ClientSecret != "", Scopes: r.Scopes, AttributeMapping: r.Mapping.withDefaults(),
		AutoProvision: r.AutoProvision, AllowedDomains: joinDomains(r.AllowedDomains), EnforceSSO: r.EnforceSSO, Status: r.Status,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if r.owner().isPartner() {
		v.PartnerID = r.PartnerID
	}
	if v.Scopes == nil {
		v.Scopes = []string{}
	}
	if r.DefaultRoleID != "" {
		id := r.DefaultRoleID
		v.DefaultRoleID = &id
	}
	return v
}

// Preset is a common identity provider's starting configuration (SSOPreset).
type Preset struct {
	ID          string   `json:"id"`
	Name        string   `json:"name"`
	Type        string   `json:"type"`
	Issuer      string   `json:"issuer"`
	Scopes      []string `json:"scopes"`
	Description string   `json:"description"`
}

// Presets are those of docs/decisions.md#oidc-presets: {tenant} and {domain}
// are for the administrator to fill in.
var Presets = []Preset{
	{ID: "azure-ad", Name: "Microsoft Entra ID", Type: TypeOIDC, Issuer: "https://login.microsoftonline.com/{tenant}/v2.0",
		Scopes: []string{"openid", "profile", "email"}, Description: "Microsoft Entra ID (Azure AD); replace {tenant} with the directory (tenant) id."},
	{ID: "okta", Name: "Okta", Type: TypeOIDC, Issuer: "https://{domain}.okta.com",
		Scopes: []string{"openid", "profile", "email", "groups"}, Description: "Okta; replace {domain} with the Okta organization's subdomain."},
	{ID: "google", Name: "Google Workspace", Type: TypeOIDC, Issuer: "https://accounts.google.com",
		Scopes: []string{"openid", "profile", "email"}, Description: "Google accounts and Google Workspace."},
	{ID: "auth0", Name: "Auth0", Type: TypeOIDC, Issuer: "https://{domain}.auth0.com",
		Scopes: []string{"openid", "profile", "email"}, Description: "Auth0; replace {domain} with the tenant's subdomain."},
}

// DefaultScopes are requested when a provider names none.
var DefaultScopes = []string{"openid", "profile", "email"}

// Check is GET /sso/check/:orgId's answer (SSOCheck).
type Check struct {
	SSOEnabled bool       `json:"ssoEnabled"`
	Provider   *CheckInfo `json:"provider"`
	EnforceSSO bool       `json:"enforceSSO"`
}

// CheckInfo names the active provider.
type CheckInfo struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Type string `json:"type"`
}

// TestResult is POST /sso/providers/:id/test's answer (SSOTestResult).
type TestResult struct {
	Success               bool     `json:"success"`
	Issuer                string   `json:"issuer"`
	AuthorizationEndpoint string   `json:"authorizationEndpoint,omitempty"`
	TokenEndpoint         string   `json:"tokenEndpoint,omitempty"`
	UserinfoEndpoint      string   `json:"userinfoEndpoint,omitempty"`
	JWKSURI               string   `json:"jwksUri,omitempty"`
	ScopesSupported       []string `json:"scopesSupported,omitempty"`
	PKCEMethods           []string `json:"codeChallengeMethodsSupported,omitempty"`
	Error                 string   `json:"error,omitempty"`
}
