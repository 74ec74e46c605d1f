// Package session owns sign-in sessions: JWT access tokens (EdDSA over Ed25519
// with a `kid` header, 15 minutes, audience gale-api) and opaque refresh tokens
// (7 days absolute) rotated on every use. A session is one refresh-token family:
// reuse of a spent token revokes it. Concurrent refreshes with one token have
// one winner (compare-and-swap on the current token hash); the losers are
// refused without revoking the family.
//
// Keys (keys.go): only the functions that issue tokens hold a private key (the
// token-signing secret: current and, during a rotation, previous Ed25519
// seeds); every other function verifies with the public keys those functions
// publish (the token public-keys secret, also served as the JWKS document at
// GET /api/v1/.well-known/jwks.json).
//
// Rows: USER#<uid> / SESSION#<sid> {tokenHash (SHA-256 of the current refresh
// token), spent (recent spent hashes), scope claims, mfa, idp (the SSO
// provider that opened it, kept through refresh), role (the role hint, kept
// through refresh), ip, userAgent, createdAt, expiresAt, revokedAt, ttl}. Revoking every session of a user is one
// write of the user's tokensValidAfter (checked on every request and refresh).
//
// Role hint: a session started from a membership whose role is custom carries
// that role's owner and id (claim `role`, set by shared/signin's
// MemberClaims), so that authentication reads the role's row in the batch that
// reads the membership (shared/auth).
// It is a hint, never an authority: the membership read on every request names
// the role that applies, and a hint that differs from it (the membership was
// moved to another role since the session was issued) is ignored. A system
// role needs no hint (its definition is code).
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gale-rmm/gale/shared/authz"
)

// Audience of every access token.
const Audience = "gale-api"

// Lifetimes of the tokens (the OpenAPI document describes them under info).
const (
	AccessTTL  = 15 * time.Minute
	RefreshTTL = 7 * 24 * time.Hour
)

// Claims of an access token.
type Claims struct {
	SessionID string      `json:"sid"`
	Scope     authz.Scope `json:"scope,omitempty"`
	PartnerID string      `json:"partnerId,omitempty"`
	OrgID     string      `json:"orgId,omitempty"`
	MFA       bool        `json:"mfa"`
	// IdP is the SSO provider whose sign-in opened the session ("" for the
	// account's own password or passkey): such a session speaks for that
	// provider's tenant only (authz.AccountOwner refuses it account-wide
	// changes). Kept through every refresh.
	IdP string `json:"idp,omitempty"`
	// Role is the custom role the session's membership held when the session
	// was started (nil for a system role or no membership): see the package
	// section "Role hint". Kept through every refresh.
	Role *RoleHint `json:"role,omitempty"`
	jwt.RegisteredClaims
}

// RoleHint names a custom role by its owner (role.PartnerOwner or
// role.OrgOwner) and id. The issuers (shared/signin, HintOf and
// MemberClaims) set it; this package only carries it.
type RoleHint struct {
	Owner string `json:"owner" dynamodbav:"owner"`
	ID    string `json:"id" dynamodbav:"id"`
}

// MarshalJSON writes the claims with `aud` as the single string "gale-api"
// (the OpenAPI document's token description), not the one-element array
// jwt.ClaimStrings writes by default. Parsing accepts either form.
func (c Claims) MarshalJSON() ([]byte, error) {
	type plain Claims // without this method
	aud := ""
	if len(c.Audience) > 0 {
		aud = c.Audience[0]
	}
	return json.Marshal(struct {
		plain
		Audience string `json:"aud,omitempty"`
	}{plain(c), aud})
}

// Signer issues and verifies access tokens with the keys of Keys.
type Signer struct {
	Keys *KeyRing
	Now  func() time.Time
}

// ErrNoSigningKey is returned by Issue in a function that holds no private key.
var ErrNoSigningKey = errors.New("session: this function holds no token-signing key")

// Issue signs claims for subject userID, valid AccessTTL from now, with the
// current key; the header names it (`kid`).
func (s Signer) Issue(userID string, c Claims) (string, error) {
	if s.Keys == nil {
		return "", ErrNoSigningKey
	}
	key := s.Keys.current()
	if key == nil {
		return "", ErrNoSigningKey
	}
	s.Keys.beforeIssue()
	now := s.Now()
	c.RegisteredClaims = jwt.RegisteredClaims{
		Subject:   userID,
		Audience:  jwt.ClaimStrings{Audience},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(AccessTTL)),
	}
	t := jwt.NewWithClaims(jwt.SigningMethodEdDSA, c)
	t.Header["kid"] = key.ID
	tok, err := t.SignedString(key.private)
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return tok, nil
}

// ErrInvalidToken is any unusable access token; the reason is not disclosed.
var ErrInvalidToken = errors.New("invalid access token")

// Verify is VerifyContext without a request context.
func (s Signer) Verify(token string) (*Claims, error) {
	return s.VerifyContext(context.Background(), token)
}

// VerifyContext parses an access token: EdDSA only, a `kid` the key ring
// knows (a published key unknown here is looked up at most twice a minute),
// audience and expiry checked.
func (s Signer) VerifyContext(ctx context.Context, token string) (*Claims, error) {
	if s.Keys == nil {
		return nil, ErrInvalidToken
	}
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) {
		kid, ok := t.Header["kid"].(string)
		if !ok || kid == "" {
			return nil, ErrInvalidToken
		}
		pub, ok := s.Keys.Lookup(ctx, kid)
		if !ok {
			return nil, ErrInvalidToken
		}
		return pub, nil
	},
		jwt.WithValidMethods([]string{jwt.SigningMethodEdDSA.Alg()}),
		jwt.WithAudience(Audience),
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithTimeFunc(s.Now),
	)
	if err != nil || c.Subject == "" || c.SessionID == "" {
		return nil, ErrInvalidToken
	}
	return &c, nil
}
