// Package auth establishes who is calling: it implements httpapi.Authenticator for
// bearer JWTs, API keys (X-API-Key, which wins when both are sent) and agent
// tokens, and builds the authz.Principal every service method checks.
//
// A bearer request reads the profile, the session and the membership in one
// BatchGetItem, so a disabled user, a revoked session or a removed membership
// is refused at once, not when the 15-minute access token expires. The role
// the membership names is read on every request too (an edit of its
// permissions applies to the next request): a system role is code; a custom
// role's row comes in the same batch when the token's role hint
// (session.RoleHint) names it, and is read after the membership when the
// membership names another role than the hint (the membership's role was
// changed since the token was issued: until the next sign-in, switch or
// refresh, which re-issue the hint from the membership) or the token has no
// hint. Each custom parent of the chain is one more read after the batch.
//
// The hint only chooses what to prefetch: the permissions are those of the
// role the membership names, whatever the token says.
package auth

import (
	"context"
	"net/http"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// KeyAuthenticator checks an X-API-Key (apiKeyAuth of the OpenAPI document) and returns the
// key's principal. It may set rate-limit headers on w.
type KeyAuthenticator interface {
	AuthenticateKey(ctx context.Context, w http.ResponseWriter, r *http.Request, key string) (*authz.Principal, error)
}

// AgentAuthenticator checks an agent bearer token for the device in the path.
type AgentAuthenticator interface {
	AuthenticateAgent(ctx context.Context, r *http.Request, token string) (*authz.Principal, error)
}

// Authenticator implements httpapi.Authenticator.
type Authenticator struct {
	St       *store.Store
	Sessions *session.Manager
	Roles    role.Store
	Keys     KeyAuthenticator   // nil until API keys are built
	Agents   AgentAuthenticator // nil until agents are built
	Clock    clock.Clock
	// Enable2FA false waives "+ MFA" (ENABLE_2FA=false): no second factor exists to demand.
	Enable2FA bool
}

// Errors of authentication.
var (
	ErrMissingToken = fault.Unauthorized("Authentication required")
	ErrInvalidToken = fault.Unauthorized("Invalid or expired token")
	// ErrKeyAsBearer is ErrInvalidToken for an API key sent as a bearer token:
	// the spec's message, and a hint naming the header keys go in (issue 35).
	ErrKeyAsBearer = ErrInvalidToken.WithDetails(map[string]any{
		"hint": "API keys (" + keyPrefix + "...) go in the X-API-Key header, not in Authorization: Bearer"})
	ErrDisabled       = fault.Unauthorized("Account is disabled")
	ErrSessionRevoked = fault.Unauthorized("Session expired or revoked")
	ErrKeyNotAccepted = fault.Unauthorized("API keys cannot call this route; sign in with a user session")
	ErrMissingKey     = fault.Unauthorized("Missing X-API-Key header")
	ErrInvalidKey     = fault.Unauthorized("Invalid API key")
	ErrAgentToken     = fault.Unauthorized("Invalid agent token")
	// ErrEnrolmentNeeded is Force MFA's 428: the role forces MFA and the
	// account has no TOTP authenticator (also POST /auth/switch's answer).
	ErrEnrolmentNeeded = &fault.Error{Kind: fault.KindPreconditionRequired, Code: fault.CodeMFAEnrollmentRequired,
		Message: "mfa_enrollment_required", Extra: map[string]any{"enrollUrl": "/api/v1/auth/mfa/setup"}}
)

// keyPrefix starts every API key (apikey.Prefix; a test holds the two equal).
// It is repeated here so that auth imports no key package: X-API-Key itself
// is checked by the KeyAuthenticator shared/app plugs in (shared/keyauth).
const keyPrefix = "svc_"

// Authenticate builds the caller of a non-public route.
func (a *Authenticator) Authenticate(w http.ResponseWriter, r *http.Request, rt httpapi.Route) (*http.Request, error) {
	ctx := r.Context()
	var p *authz.Principal
	var err error
	switch rt.Access {
	case httpapi.Agent:
		tok, ok := bearer(r)
		if !ok || a.Agents == nil {
			return r, ErrAgentToken
		}
		p, err = a.Agents.AuthenticateAgent(ctx, r, tok)
	case httpapi.UserOrKey:
		if key := r.Header.Get("X-API-Key"); key != "" || !hasBearer(r) {
			if key == "" {
				return r, ErrMissingKey
			}
			if a.Keys == nil {
				return r, ErrInvalidKey
			}
			p, err = a.Keys.AuthenticateKey(ctx, w, r, key)
			// API keys never satisfy MFA: a "+ MFA" route refuses them.
			if err == nil && rt.MFA && a.Enable2FA {
				return r, authz.ErrMFARequired
			}
			break
		}
		p, err = a.user(ctx, r, rt)
	case httpapi.Optional:
		if !hasBearer(r) {
			return r, nil
		}
		p, err = a.user(ctx, r, rt)
	default:
		if !hasBearer(r) && r.Header.Get("X-API-Key") != "" {
			return r, ErrKeyNotAccepted
		}
		p, err = a.user(ctx, r, rt)
	}
	if err != nil {
		return r, err
	}
	p.IP, p.UserAgent = httpapi.ClientIP(r), httpapi.UserAgent(r)
	caller := p.UserID
	if p.Kind != authz.KindUser {
		caller = string(p.Kind) + ":" + p.Actor().ID
	}
	httpapi.SetCaller(ctx, caller, p.Tenant())
	return r.WithContext(authz.WithPrincipal(ctx, p)), nil
}

func hasBearer(r *http.Request) bool { _, ok := bearer(r); return ok }

func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:]), true
	}
	return "", false
}

// user authenticates a bearer JWT.
func (a *Authenticator) user(ctx context.Context, r *http.Request, rt httpapi.Route) (*authz.Principal, error) {
	tok, ok := bearer(r)
	if !ok {
		return nil, ErrMissingToken
	}
	c, err := a.Sessions.Signer.VerifyContext(ctx, tok)
	if err != nil {
		if strings.HasPrefix(tok, keyPrefix) {
			return nil, ErrKeyAsBearer
		}
		return nil, ErrInvalidToken
	}
	p, force, totp, err := a.Load(ctx, c)
	if err != nil {
		return nil, err
	}
	// ENABLE_2FA=false waives Force MFA too: no authenticator can be enrolled then.
	if a.Enable2FA && force && !totp && !rt.Enrol {
		return nil, ErrEnrolmentNeeded
	}
	if rt.MFA && a.Enable2FA && !p.MFA {
		return nil, authz.ErrMFARequired
	}
	return p, nil
}

// Load builds the principal of verified claims from the profile, session,
// membership and role chain, refusing disabled users and dead sessions. It also
// returns whether the role forces MFA and whether TOTP is enrolled.
func (a *Authenticator) Load(ctx context.Context, c *session.Claims) (*authz.Principal, bool, bool, error) {
	uid := c.Subject
	pk, sk := user.ProfileKey(uid), session.Key(uid, c.SessionID)
	refs := []store.KeyRef{pk, sk}
	var mk store.KeyRef
	if c.Scope != authz.ScopeNone {
		mk = user.MembershipKey(uid, c.Scope, c.PartnerID, c.OrgID)
		refs = append(refs, mk)
		if h := c.Role; h != nil && h.Owner != role.SystemOwner {
			refs = append(refs, role.Key(h.Owner, h.ID))
		}
	}
	items, err := a.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, false, false, err
	}
	var u user.User
	var s session.Session
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	si, ok2 := items[sk.PK+"|"+sk.SK]
	if !ok1 || !ok2 {
		return nil, false, false, ErrSessionRevoked
	}
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, false, false, err
	}
	if err := store.Unmarshal(si, &s); err != nil {
		return nil, false, false, err
	}
	if u.Status != user.StatusActive {
		return nil, false, false, ErrDisabled
	}
	if !s.Live(a.Clock.Now(), u.TokensValidAfter) {
		return nil, false, false, ErrSessionRevoked
	}
	p := &authz.Principal{Kind: authz.KindUser, UserID: uid, Email: u.Email, Name: u.Name, SessionID: s.ID,
		Scope: c.Scope, MFA: c.MFA, IdP: c.IdP, Perms: authz.Set{}}
	force := false
	if c.Scope != authz.ScopeNone {
		if force, err = a.member(ctx, p, c, items, mk); err != nil {
			return nil, false, false, err
		}
	}
	p.ForceMFA = force
	return p, force, u.TOTPEnrolled(), nil
}

// member fills p from the membership at mk and its role chain, read from
// items (the authentication's batch) where they are there, and returns
// whether the role forces MFA. The membership is the authority on the role:
// the row of the claims' role hint is used only when the membership still
// names that role.
func (a *Authenticator) member(ctx context.Context, p *authz.Principal, c *session.Claims, items map[string]store.Item, mk store.KeyRef) (bool, error) {
	mi, ok := items[mk.PK+"|"+mk.SK]
	if !ok {
		return false, ErrSessionRevoked
	}
	var m user.Membership
	if err := store.Unmarshal(mi, &m); err != nil {
		return false, err
	}
	if !m.Active() {
		// Suspended by its tenant, or an invitation not yet accepted.
		return false, ErrDisabled
	}
	p.PartnerID, p.OrgID, p.OrgAccess, p.OrgIDs = m.PartnerID, m.OrgID, m.OrgAccess, m.OrgIDs
	p.SiteIDs, p.DeviceGroupIDs, p.RoleID, p.RoleOwner = m.SiteIDs, m.GroupIDs, m.RoleID, m.RoleOwner
	// EffectiveFrom uses the hinted row only if it is the row of the role the
	// membership names (the same key); otherwise it reads that role.
	var first *role.Role
	if h := c.Role; h != nil {
		rk := role.Key(h.Owner, h.ID)
		if ri, ok := items[rk.PK+"|"+rk.SK]; ok {
			first = &role.Role{}
			if err := store.Unmarshal(ri, first); err != nil {
				return false, err
			}
		}
	}
	perms, force, _, err := a.Roles.EffectiveFrom(ctx, m.RoleOwner, m.RoleID, first)
	if err != nil {
		return false, err
	}
	p.Perms = perms
	return force, nil
}
