// Package session owns sign-in sessions: JWT access tokens (HS256, 15 minutes,
// audience gale-api) and opaque refresh tokens (7 days absolute) rotated on every
// use. A session is one refresh-token family: reuse of a spent token revokes it.
// Concurrent refreshes with one token have one winner (compare-and-swap on the
// current token hash); the losers are refused without revoking the family.
//
// Rows: USER#<uid> / SESSION#<sid> {tokenHash (SHA-256 of the current refresh
// token), spent (recent spent hashes), scope claims, mfa, ip, userAgent,
// createdAt, expiresAt, revokedAt, ttl}. Revoking every session of a user is one
// write of the user's tokensValidAfter (checked on every request and refresh).
package session

import (
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
	jwt.RegisteredClaims
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

// Signer issues and verifies access tokens.
type Signer struct {
	Secret []byte
	Now    func() time.Time
}

// Issue signs claims for subject userID, valid AccessTTL from now.
func (s Signer) Issue(userID string, c Claims) (string, error) {
	now := s.Now()
	c.RegisteredClaims = jwt.RegisteredClaims{
		Subject:   userID,
		Audience:  jwt.ClaimStrings{Audience},
		IssuedAt:  jwt.NewNumericDate(now),
		ExpiresAt: jwt.NewNumericDate(now.Add(AccessTTL)),
	}
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString(s.Secret)
	if err != nil {
		return "", fmt.Errorf("sign access token: %w", err)
	}
	return tok, nil
}

// ErrInvalidToken is any unusable access token; the reason is not disclosed.
var ErrInvalidToken = errors.New("invalid access token")

// Verify parses an access token: HS256 only, audience and expiry checked.
func (s Signer) Verify(token string) (*Claims, error) {
	var c Claims
	_, err := jwt.ParseWithClaims(token, &c, func(t *jwt.Token) (any, error) { return s.Secret, nil },
		jwt.WithValidMethods([]string{jwt.SigningMethodHS256.Alg()}),
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
