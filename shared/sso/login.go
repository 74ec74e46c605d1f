package sso

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/google/uuid"
	"golang.org/x/oauth2"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/sso/enforce"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// CallbackPath is where providers return; the redirect URI given to them is
// APIURL + CallbackPath.
const CallbackPath = "/api/v1/sso/callback"

// MaxState bounds the state and code query parameters of the callback.
const MaxState = 2048

func randomToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("sso: random: %w", err)
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}

// discover runs OpenID discovery through the outbound client and holds every
// endpoint the document names to the outbound rules (the dialer checks their
// addresses when they are called).
func (s *Service) discover(ctx context.Context, issuer string) (*oidc.Provider, error) {
	prov, err := oidc.NewProvider(oidc.ClientContext(ctx, s.HTTP), issuer)
	if err != nil {
		return nil, fmt.Errorf("discovery failed: %w", err)
	}
	var meta struct {
		JWKS string `json:"jwks_uri"`
	}
	_ = prov.Claims(&meta)
	ep := prov.Endpoint()
	for name, u := range map[string]string{"authorization_endpoint": ep.AuthURL, "token_endpoint": ep.TokenURL,
		"jwks_uri": meta.JWKS, "userinfo_endpoint": prov.UserInfoEndpoint()} {
		if u == "" && name == "userinfo_endpoint" {
			continue
		}
		if err := s.Guard.Check(u); err != nil {
			return nil, fmt.Errorf("discovery names a %s the outbound guard refuses (%s)", name, reason(err))
		}
	}
	return prov, nil
}

func (s *Service) oauth(r *record, prov *oidc.Provider, secret string) *oauth2.Config {
	return &oauth2.Config{ClientID: r.ClientID, ClientSecret: secret, Endpoint: prov.Endpoint(),
		RedirectURL: s.APIURL + CallbackPath, Scopes: r.Scopes}
}

// Rate limits of the public routes, per source IP (ATTACKS 13: each login
// writes a session row and makes outbound requests; each callback and
// exchange reads and spends rows). A refusal is 429 rate_limited with
// retryAfter and Retry-After, before any other store work.
var (
	LoginLimit    = ratelimit.Rule{Name: "sso-login-ip", Limit: 30, Window: 5 * time.Minute}
	CallbackLimit = ratelimit.Rule{Name: "sso-callback-ip", Limit: 30, Window: 5 * time.Minute}
	ExchangeLimit = ratelimit.Rule{Name: "sso-exchange-ip", Limit: 30, Window: 5 * time.Minute}
)

// checkOrgID refuses a malformed organization id at /sso/login and /sso/check.
func checkOrgID(id string) error { return valid.PathID("orgId", id) }

// Login starts a login at orgID's active provider. It answers the provider's
// authorization URL and the state to bind to the browser; a *CallbackError
// (provider_not_found, provider_error) goes to the application like a
// callback failure.
func (s *Service) Login(ctx context.Context, orgID, sourceIP string) (redirect, state string, err error) {
	// Public route: the organization's active provider is public knowledge
	// (/sso/check) and nothing is changed but a login session.
	if err := checkOrgID(orgID); err != nil {
		return "", "", err
	}
	if err := s.Limits.Allow(ctx, LoginLimit, sourceIP); err != nil {
		return "", "", err
	}
	o, a, err := s.activeFor(ctx, orgID)
	if err != nil {
		return "", "", err
	}
	if a == nil {
		return "", "", fail(CodeProviderNotFound, nil)
	}
	r, err := s.St.Get(ctx, o, a.ProviderID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Status != StatusActive) {
		return "", "", fail(CodeProviderNotFound, err)
	}
	if err != nil {
		return "", "", err
	}
	prov, err := s.discover(ctx, r.Issuer)
	if err != nil {
		return "", "", fail(CodeProviderError, err)
	}
	if state, err = randomToken(); err != nil {
		return "", "", err
	}
	nonce, err := randomToken()
	if err != nil {
		return "", "", err
	}
	verifier := oauth2.GenerateVerifier()
	k := loginKey(state)
	now := s.Clock.Now()
	exp := now.Add(LoginTTL)
	ls := loginSession{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp.Add(time.Hour))}, ProviderID: r.ID,
		OrgID: r.OrgID, CreatedAt: clock.Stamp(now), ExpiresAt: clock.Stamp(exp)}
	if r.owner().isPartner() {
		ls.PartnerID = r.PartnerID
	}
	if ls.Nonce, err = s.Box.Seal([]byte(nonce), "ssologin:nonce:"+k.PK); err != nil {
		return "", "", err
	}
	if ls.Verifier, err = s.Box.Seal([]byte(verifier), "ssologin:verifier:"+k.PK); err != nil {
		return "", "", err
	}
	if err := s.St.St.Do(ctx, store.PutNew(ls)); err != nil {
		return "", "", fmt.Errorf("store SSO login session: %w", err)
	}
	return s.oauth(r, prov, "").AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)), state, nil
}

// ErrorRedirect is where a failed login or callback sends the browser.
func (s *Service) ErrorRedirect(code string) string {
	return s.AppURL + "/login?error=" + url.QueryEscape(code)
}

// CallbackInput is what the callback received.
type CallbackInput struct {
	State, Code, Error, Issuer string
	// CookieState is the state the browser's cookie holds ("" for none).
	CookieState string
	// SourceIP keys the rate limit.
	SourceIP string
}

// CheckCallback validates the callback's query: 4xx naming the field for a
// request no provider would send.
func CheckCallback(q url.Values) (CallbackInput, error) {
	f := fault.Fields{}
	in := CallbackInput{State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"), Issuer: q.Get("iss")}
	for _, k := range []string{"state", "code", "error", "iss"} {
		if len(q[k]) > 1 {
			f.Add(k, "must be given once")
		}
	}
	switch {
	case in.State == "":
		f.Add("state", "is required")
	case len(in.State) > MaxState:
		f.Addf("state", "must be at most %d characters", MaxState)
	}
	switch {
	case in.Code == "" && in.Error == "":
		f.Add("code", "is required (or error)")
	case len(in.Code) > MaxState:
		f.Addf("code", "must be at most %d characters", MaxState)
	}
	if len(in.Error) > 256 {
		f.Add("error", "must be at most 256 characters")
	}
	return in, f.Err()
}

// Callback finishes a login and answers where the browser goes next: the
// application with a one-time code, or its login page with an error code.
// The only error it returns is the rate limit's (429).
func (s *Service) Callback(ctx context.Context, in CallbackInput) (string, error) {
	// Public route: the state bound to this browser is the credential.
	if err := s.Limits.Allow(ctx, CallbackLimit, in.SourceIP); err != nil {
		return "", err
	}
	code, err := s.callback(ctx, in)
	if err != nil {
		var ce *CallbackError
		if !errors.As(err, &ce) {
			slog.ErrorContext(ctx, "sso callback failed", "err", err)
			return s.ErrorRedirect(CodeProviderError), nil
		}
		slog.InfoContext(ctx, "sso callback refused", "code", ce.Code, "err", ce.Cause)
		return s.ErrorRedirect(ce.Code), nil
	}
	return s.AppURL + "/auth/sso/callback#ssoCode=" + url.QueryEscape(code), nil
}

func (s *Service) callback(ctx context.Context, in CallbackInput) (string, error) {
	ls, k, err := s.takeSession(ctx, in)
	if err != nil {
		return "", err
	}
	r, err := s.St.Get(ctx, owner{OrgID: ls.OrgID, PartnerID: ls.PartnerID}, ls.ProviderID)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.Status != StatusActive) {
		return "", fail(CodeProviderNotFound, err)
	}
	if err != nil {
		return "", err
	}
	// RFC 9207: a provider that names itself must be the one this login went to.
	if in.Issuer != "" && normIssuer(in.Issuer) != normIssuer(r.Issuer) {
		return "", fail(CodeInvalidState, fmt.Errorf("callback names issuer %q, the login went to %q", in.Issuer, r.Issuer))
	}
	octx := oidc.ClientContext(ctx, s.HTTP)
	prov, tok, idt, err := s.exchange(octx, r, ls, k, in.Code)
	if err != nil {
		return "", err
	}
	claims, err := idClaims(octx, prov, tok, idt, r.ClientID)
	if err != nil {
		return "", err
	}
	return s.admit(ctx, r, idt.Subject, claims)
}

// takeSession spends the login session the callback's state names, once the
// state matches the browser's cookie; the session must not have expired nor
// the provider have answered an error.
func (s *Service) takeSession(ctx context.Context, in CallbackInput) (*loginSession, store.KeyRef, error) {
	if in.CookieState == "" || subtle.ConstantTimeCompare([]byte(in.CookieState), []byte(in.State)) != 1 {
		return nil, store.KeyRef{}, fail(CodeInvalidState, errors.New("state does not match this browser's cookie"))
	}
	var ls loginSession
	k := loginKey(in.State)
	if err := s.St.St.Take(ctx, k.PK, k.SK, &ls); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, store.KeyRef{}, fail(CodeInvalidState, errors.New("no such login session (spent or never started)"))
		}
		return nil, store.KeyRef{}, err
	}
	if clock.Stamp(s.Clock.Now()) >= ls.ExpiresAt {
		return nil, store.KeyRef{}, fail(CodeSessionExpired, nil)
	}
	if in.Error != "" {
		return nil, store.KeyRef{}, fail(CodeProviderError, fmt.Errorf("provider answered error %q", in.Error))
	}
	return &ls, k, nil
}

// exchange redeems the code at r's provider with the session's PKCE verifier
// and answers the provider, the tokens and the verified ID token, whose nonce
// must be the session's (and its at_hash the access token's, when present).
func (s *Service) exchange(octx context.Context, r *record, ls *loginSession, k store.KeyRef, code string) (*oidc.Provider, *oauth2.Token, *oidc.IDToken, error) {
	nonce, err := s.Box.Open(ls.Nonce, "ssologin:nonce:"+k.PK)
	if err != nil {
		return nil, nil, nil, err
	}
	verifier, err := s.Box.Open(ls.Verifier, "ssologin:verifier:"+k.PK)
	if err != nil {
		return nil, nil, nil, err
	}
	secret, err := s.clientSecret(r)
	if err != nil {
		return nil, nil, nil, err
	}
	prov, err := s.discover(octx, r.Issuer)
	if err != nil {
		return nil, nil, nil, fail(CodeProviderError, err)
	}
	tok, err := s.oauth(r, prov, secret).Exchange(octx, code, oauth2.VerifierOption(string(verifier)))
	if err != nil {
		return nil, nil, nil, fail(CodeTokenExchange, err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return nil, nil, nil, fail(CodeIDTokenInvalid, errors.New("token response has no id_token"))
	}
	idt, err := prov.Verifier(&oidc.Config{ClientID: r.ClientID, Now: s.Clock.Now}).Verify(octx, raw)
	if err != nil {
		return nil, nil, nil, fail(CodeIDTokenInvalid, err)
	}
	if subtle.ConstantTimeCompare([]byte(idt.Nonce), nonce) != 1 {
		return nil, nil, nil, fail(CodeIDTokenInvalid, errors.New("nonce does not match the login session"))
	}
	if idt.AccessTokenHash != "" {
		if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
			return nil, nil, nil, fail(CodeIDTokenInvalid, err)
		}
	}
	return prov, tok, idt, nil
}

// idClaims answers the ID token's claims, with the user-info claims it lacks
// when the provider has a user-info endpoint and its answer is about the
// same subject.
func idClaims(octx context.Context, prov *oidc.Provider, tok *oauth2.Token, idt *oidc.IDToken, clientID string) (map[string]any, error) {
	claims := map[string]any{}
	if err := idt.Claims(&claims); err != nil {
		return nil, fail(CodeIDTokenInvalid, err)
	}
	// OpenID Connect Core 3.1.3.7: with several audiences, the authorized
	// party must be this client.
	if azp, _ := claims["azp"].(string); len(idt.Audience) > 1 && azp != clientID {
		return nil, fail(CodeIDTokenInvalid, errors.New("ID token for several audiences without this client as azp"))
	}
	if prov.UserInfoEndpoint() == "" {
		return claims, nil
	}
	ui, err := prov.UserInfo(octx, oauth2.StaticTokenSource(tok))
	if err != nil {
		return nil, fail(CodeProviderError, fmt.Errorf("userinfo: %w", err))
	}
	switch ui.Subject {
	case idt.Subject:
		extra := map[string]any{}
		if err := ui.Claims(&extra); err == nil {
			for c, v := range extra {
				if _, ok := claims[c]; !ok {
					claims[c] = v
				}
			}
		}
	case "":
		// A user-info answer without sub cannot be tied to the ID token: its
		// claims are not used.
	default:
		return nil, fail(CodeIDTokenInvalid, errors.New("userinfo sub differs from the ID token's"))
	}
	return claims, nil
}

// person is what the claims say about the person signing in.
type person struct {
	sub, email, name string
	verified         bool
}

func claimString(c map[string]any, name string) string {
	v, _ := c[name].(string)
	return strings.TrimSpace(v)
}

func mapClaims(r *record, sub string, c map[string]any) (person, error) {
	m := r.Mapping.withDefaults()
	p := person{sub: sub, email: user.NormalizeEmail(claimString(c, m.Email))}
	// email_verified speaks of the standard email claim only: an address read
	// from another claim (preferred_username, upn) is never taken as verified,
	// or a user of the IdP could name any address there and claim its account.
	if m.Email == "email" {
		switch v := c["email_verified"].(type) {
		case bool:
			p.verified = v
		case string:
			p.verified = v == "true"
		}
	}
	f := fault.Fields{}
	valid.Email(f, "email", p.email)
	if p.email == "" || len(f) > 0 || len(p.email) > 255 {
		return p, fail(CodeEmailMissing, errors.New("no usable e-mail claim"))
	}
	p.name = claimString(c, m.Name)
	if p.name == "" {
		p.name = strings.TrimSpace(claimString(c, m.FirstName) + " " + claimString(c, m.LastName))
	}
	if p.name == "" {
		p.name = p.email[:strings.IndexByte(p.email, '@')]
	}
	p.name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, p.name)
	if rs := []rune(p.name); len(rs) > 255 {
		p.name = string(rs[:255])
	}
	return p, nil
}

// admit applies the no-takeover rules of the package doc and, when they
// admit the person, stores an exchange code (with any link or provisioning in
// the same transaction).
func (s *Service) admit(ctx context.Context, r *record, sub string, claims map[string]any) (string, error) {
	if sub == "" {
		return "", fail(CodeIDTokenInvalid, errors.New("ID token has no sub"))
	}
	who, err := mapClaims(r, sub, claims)
	if err != nil {
		return "", err
	}
	domain := who.email[strings.LastIndexByte(who.email, '@')+1:]
	if len(r.AllowedDomains) > 0 && !slices.Contains(r.AllowedDomains, domain) {
		return "", fail(CodeDomainNotAllowed, nil)
	}
	code, err := randomToken()
	if err != nil {
		return "", err
	}
	now := s.Clock.Now()
	ck := codeKey(code)
	xc := exchangeCode{Keys: store.Keys{PK: ck.PK, SK: ck.SK, TTL: store.TTL(now.Add(CodeTTL))}, OrgID: r.OrgID,
		ProviderID: r.ID, ExpiresAt: clock.Stamp(now.Add(CodeTTL))}
	if r.owner().isPartner() {
		xc.PartnerID = r.PartnerID
	}
	tx := (&store.Tx{}).Add(assertProvider(r))

	// An identity already linked signs in its account.
	link, err := s.St.Identity(ctx, r.ID, r.Issuer, sub)
	switch {
	case err == nil:
		return s.signInLinked(ctx, r, link.UserID, xc, code, tx)
	case !errors.Is(err, store.ErrNotFound):
		return "", err
	}
	ik := identityKey(r.ID, r.Issuer, sub)
	ident := identity{Keys: store.Keys{PK: ik.PK, SK: ik.SK}, ProviderID: r.ID, Subject: sub, Email: who.email,
		CreatedAt: clock.Format(now)}
	u, err := s.Accounts.ByEmail(ctx, who.email)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return s.provision(ctx, r, who, ident, xc, code, tx)
	case err != nil:
		return "", err
	}
	return s.linkExisting(ctx, r, who, u, ident, xc, code, tx)
}

// signInLinked signs in the account an identity is linked to, while it holds
// an active membership of the provider's tenant within the provider's
// ceiling.
func (s *Service) signInLinked(ctx context.Context, r *record, userID string, xc exchangeCode, code string, tx *store.Tx) (string, error) {
	m, err := s.membership(ctx, userID, r.owner())
	if err != nil {
		return "", err
	}
	if m == nil {
		return "", fail(CodeNoOrgAccess, errors.New("linked account holds no active membership here"))
	}
	if err := s.withinCeiling(ctx, r, m.RoleID); err != nil {
		return "", err
	}
	xc.UserID = userID
	tx.Add(s.Accounts.StillAccepted(m), store.PutNew(xc))
	return code, s.commit(ctx, tx)
}

// linkExisting links the identity to the existing account u with its
// address. The provider speaks for it only as its tenant's account (the
// linking table of the package doc); email_verified proves the address,
// never more.
func (s *Service) linkExisting(ctx context.Context, r *record, who person, u *user.User, ident identity, xc exchangeCode, code string, tx *store.Tx) (string, error) {
	if !who.verified {
		return "", fail(CodeUserNotFound, errors.New("e-mail not verified by the provider; an existing account is not linked"))
	}
	ms, err := s.Accounts.Memberships(ctx, u.ID)
	if err != nil {
		return "", err
	}
	ident.UserID, xc.UserID = u.ID, u.ID
	granted, accepted, invited := s.standing(r, u, ms)
	switch {
	case granted != nil && u.Status == user.StatusActive:
		// (b) the tenant's active member.
		if err := s.withinCeiling(ctx, r, granted.RoleID); err != nil {
			return "", err
		}
		tx.Add(s.Accounts.StillAccepted(granted), store.PutNew(ident), store.PutNew(xc),
			audit.Put(s.Clock, audit.Entry{Actor: audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser)},
				OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "sso.identity.link", ResourceType: "user", ResourceID: u.ID,
				ResourceName: u.Email, Details: map[string]any{"providerId": r.ID}}))
		return code, s.commit(ctx, tx)
	case granted != nil || accepted != nil:
		// The tenant's member, suspended there (or the account disabled).
		return "", fail(CodeNoOrgAccess, errors.New("the account's membership of the provider's tenant grants nothing"))
	case invited != nil && credentialless(u):
		// (c) a new account invited by the tenant.
		return s.acceptInvitation(ctx, r, u, invited, ident, xc, code, tx)
	}
	return "", fail(CodeAccountExists, errors.New("an existing account outside the provider's tenant (or with a credential of its own)"))
}

// standing answers u's membership of the tenant r serves that grants access,
// the one accepted (granting nothing now) and the one still invited, among
// ms (the last of each kind).
func (s *Service) standing(r *record, u *user.User, ms []user.Membership) (granted, accepted, invited *user.Membership) {
	for i := range ms {
		switch m := &ms[i]; {
		case !r.serves(m):
		case s.Accounts.Grants(u, m):
			granted = m
		case s.Accounts.Accepted(u, m):
			accepted = m
		case s.Accounts.Pending(u, m):
			invited = m
		}
	}
	return granted, accepted, invited
}

// credentialless reports whether account u holds no credential yet: no
// password, passkey or identity-provider link. An account leaves status
// invited only through one (a password set by accept-invite or registration,
// or a provider's provisioning, link or accepted invitation) and a passkey is
// registered only by an active account, so an invited account without a
// password has none; an active account without a password is an identity
// provider's (its link, or one deleted with its provider: still not this
// provider's to take).
func credentialless(u *user.User) bool {
	return u.Status == user.StatusInvited && u.PasswordHash == "" && u.PasskeyCount == 0
}

// serves reports whether membership m is one provider r signs in: for an
// organization's provider an organization membership of that organization,
// for a partner's own provider a partner-scope membership of that partner
// (never a membership of one of the partner's organizations).
func (r *record) serves(m *user.Membership) bool {
	if r.owner().isPartner() {
		return m.Scope == authz.ScopePartner && m.PartnerID == r.PartnerID
	}
	return m.Scope == authz.ScopeOrg && m.OrgID == r.OrgID
}

// withinCeiling refuses (no_org_access) a membership whose role holds a
// permission the provider's ceiling lacks: whoever configured the provider's
// trust could otherwise sign in as anyone above them.
func (s *Service) withinCeiling(ctx context.Context, r *record, roleID string) error {
	ri, err := s.Roles.Assignee(ctx, roleID)
	if errors.Is(err, store.ErrNotFound) {
		return fail(CodeNoOrgAccess, errors.New("the membership's role no longer exists"))
	}
	if err != nil {
		return err
	}
	return r.covers(ri)
}

func (r *record) covers(ri user.RoleInfo) error {
	c := ceilingSet(r.Ceiling)
	for perm, ok := range ri.Effective {
		if ok && !c.Has(perm) {
			return fail(CodeNoOrgAccess, fmt.Errorf("role %s holds %s, beyond the provider's ceiling", ri.ID, perm))
		}
	}
	return nil
}

// tenantWrite holds a provisioning to its tenant: an organization's member
// count (the organization must exist), or the partner's existence.
func (s *Service) tenantWrite(r *record) *store.Write {
	if r.owner().isPartner() {
		k := tenant.PartnerKeys(r.PartnerID)
		return store.Assert(k.PK, k.SK, store.Present())
	}
	return tenant.CountOrg(r.OrgID, "", tenant.CountMembers, 1)
}

// acceptInvitation lets a credentialless account (created by an invitation,
// status invited) accept invitation inv of the provider's tenant by this SSO
// sign-in, as it could with a password. Any other account accepts
// invitations only with its own password (POST /auth/accept-invite, which
// sets a first password on an account without one): the tenant's provider is
// that tenant's, not the account's. Its other invitations stay pending.
func (s *Service) acceptInvitation(ctx context.Context, r *record, u *user.User, inv *user.Membership, ident identity, xc exchangeCode, code string, tx *store.Tx) (string, error) {
	if err := s.withinCeiling(ctx, r, inv.RoleID); err != nil {
		return "", err
	}
	tx.Add(s.Accounts.AcceptWrites(u, inv)...)
	tx.Add(store.PutNew(ident), store.PutNew(xc),
		audit.Put(s.Clock, audit.Entry{Actor: audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser)},
			OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "user.invite.accept", ResourceType: "user", ResourceID: u.ID,
			ResourceName: u.Email, Details: map[string]any{"via": "sso", "providerId": r.ID}}))
	return code, s.commit(ctx, tx)
}

// provision creates an account with its first membership (autoProvision).
func (s *Service) provision(ctx context.Context, r *record, who person, ident identity, xc exchangeCode, code string, tx *store.Tx) (string, error) {
	if !r.AutoProvision {
		return "", fail(CodeUserNotFound, nil)
	}
	if !who.verified {
		return "", fail(CodeUserNotFound, errors.New("e-mail not verified by the provider; no account is provisioned"))
	}
	now := clock.Format(s.Clock.Now())
	u := &user.User{ID: uuid.NewString(), Email: who.email, Name: who.name, Status: user.StatusActive, CreatedAt: now, UpdatedAt: now}
	mem, err := s.newMembership(ctx, r, u.ID)
	if err != nil {
		return "", err
	}
	ident.UserID, xc.UserID = u.ID, u.ID
	tx.Add(s.Accounts.AccountWrites(u)...).Add(s.Accounts.MembershipWrite(mem))
	tx.Add(s.tenantWrite(r), store.PutNew(ident), store.PutNew(xc),
		audit.Put(s.Clock, audit.Entry{Actor: audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser)},
			OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "sso.user.provision", ResourceType: "user", ResourceID: u.ID,
			ResourceName: u.Email, Details: map[string]any{"providerId": r.ID, "roleId": mem.RoleID, "newAccount": true}}))
	return code, s.commit(ctx, tx)
}

// newMembership is the membership auto-provisioning grants: the provider's
// default role, which must still exist and stay within the provider's
// ceiling. A partner provider's new member is a partner-scope member with
// orgAccess none (no organization until an administrator grants one).
func (s *Service) newMembership(ctx context.Context, r *record, userID string) (*user.Membership, error) {
	if r.DefaultRoleID == "" {
		return nil, fail(CodeDefaultRole, nil)
	}
	ri, err := s.Roles.Assignee(ctx, r.DefaultRoleID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, fail(CodeDefaultRole, errors.New("the default role no longer exists"))
	}
	if err != nil {
		return nil, err
	}
	if err := r.covers(ri); err != nil {
		return nil, err
	}
	m := &user.Membership{ID: uuid.NewString(), UserID: userID, Scope: authz.ScopeOrg, PartnerID: r.PartnerID,
		OrgID: r.OrgID, RoleID: ri.ID, RoleOwner: ri.Owner, CreatedAt: clock.Format(s.Clock.Now())}
	if r.owner().isPartner() {
		m.Scope, m.OrgAccess = authz.ScopePartner, authz.OrgAccessNone
	}
	return m, nil
}

// membership is userID's accepted membership in tenant o, or nil.
func (s *Service) membership(ctx context.Context, userID string, o owner) (*user.Membership, error) {
	u, err := s.Accounts.Get(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if u.Status != user.StatusActive {
		return nil, nil
	}
	ms, err := s.Accounts.Memberships(ctx, userID)
	if err != nil {
		return nil, err
	}
	r := &record{OrgID: o.OrgID, PartnerID: o.PartnerID}
	for i := range ms {
		if r.serves(&ms[i]) && s.Accounts.Grants(u, &ms[i]) {
			return &ms[i], nil
		}
	}
	return nil, nil
}

// commit writes an admission; a failed condition (the provider changed or
// left service, the membership was suspended, the e-mail was taken meanwhile)
// admits no one.
func (s *Service) commit(ctx context.Context, tx *store.Tx) error {
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			if te.FailedAt(0) {
				return fail(CodeProviderNotFound, err)
			}
			return fail(CodeNoOrgAccess, err)
		}
		return err
	}
	return nil
}

// Exchange trades a one-time code for the login response.
func (s *Service) Exchange(ctx context.Context, code string, c signin.Client) (signin.Result, error) {
	// Public route: the code (256 random bits, single use, 2 minutes) is the credential.
	if err := s.Limits.Allow(ctx, ExchangeLimit, c.SourceIP); err != nil {
		return signin.Result{}, err
	}
	var xc exchangeCode
	k := codeKey(code)
	if err := s.St.St.Take(ctx, k.PK, k.SK, &xc); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return signin.Result{}, ErrExchangeCode
		}
		return signin.Result{}, err
	}
	if clock.Stamp(s.Clock.Now()) >= xc.ExpiresAt {
		return signin.Result{}, ErrExchangeCode
	}
	m, err := s.membership(ctx, xc.UserID, owner{OrgID: xc.OrgID, PartnerID: xc.PartnerID})
	if err != nil {
		return signin.Result{}, err
	}
	if m == nil {
		return signin.Result{}, ErrExchangeCode
	}
	u, err := s.Accounts.Get(ctx, xc.UserID)
	if err != nil {
		return signin.Result{}, err
	}
	// The session is the provider's: bound to it and to m (session claim idp).
	return s.SignIn.AfterFirstFactor(ctx, u, m, xc.ProviderID, c)
}

// activeFor finds the active provider that id names: an organization's, or
// else a partner's own (ids are UUIDs: an organization and a partner never
// share one). Nil when neither has one.
func (s *Service) activeFor(ctx context.Context, id string) (owner, *enforce.Active, error) {
	o := owner{OrgID: id}
	a, err := s.St.Active(ctx, o)
	if err != nil || a != nil {
		return o, a, err
	}
	o = owner{PartnerID: id}
	a, err = s.St.Active(ctx, o)
	return o, a, err
}

// CheckOrg answers GET /sso/check/:orgId (an organization's or a partner's id).
func (s *Service) CheckOrg(ctx context.Context, orgID string) (*Check, error) {
	// Public route: the login page asks before a session exists; an unknown
	// organization looks like one without a provider.
	if err := checkOrgID(orgID); err != nil {
		return nil, err
	}
	_, a, err := s.activeFor(ctx, orgID)
	if err != nil {
		return nil, err
	}
	if a == nil {
		return &Check{}, nil
	}
	return &Check{SSOEnabled: true, Provider: &CheckInfo{ID: a.ProviderID, Name: a.Name, Type: a.Type}, EnforceSSO: a.EnforceSSO}, nil
}
