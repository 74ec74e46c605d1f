package user

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// InviteTTL is how long an invitation link is valid (POST /auth/accept-invite
// in the OpenAPI document).
const InviteTTL = 7 * 24 * time.Hour

// Invite is a user's pending invitation: one row per user (USER#<uid> / INVITE),
// so re-inviting replaces, and so revokes, the previous token. The token itself
// is never stored, only its SHA-256; the row names the scope the invitation was
// for, whose membership the accepted sign-in acts in.
type Invite struct {
	store.Keys
	UserID    string      `dynamodbav:"userId"`
	TokenHash string      `dynamodbav:"tokenHash"`
	Scope     authz.Scope `dynamodbav:"scope"`
	PartnerID string      `dynamodbav:"partnerId,omitempty"`
	OrgID     string      `dynamodbav:"orgId,omitempty"`
	InvitedBy string      `dynamodbav:"invitedBy,omitempty"`
	ExpiresAt string      `dynamodbav:"expiresAt"`
}

// InviteKey is the key of a user's invitation row.
func InviteKey(userID string) store.KeyRef { return store.KeyRef{PK: "USER#" + userID, SK: "INVITE"} }

// NewInvite returns a fresh token ("<userId>.<32 random bytes, base64url>") and
// the row that stores its hash, valid for InviteTTL from now.
func NewInvite(m *Membership, invitedBy string, now time.Time) (string, *Invite, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("invite token: %w", err)
	}
	token := m.UserID + "." + base64.RawURLEncoding.EncodeToString(b)
	exp := now.Add(InviteTTL)
	k := InviteKey(m.UserID)
	return token, &Invite{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)}, UserID: m.UserID,
		TokenHash: HashToken(token), Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID,
		InvitedBy: invitedBy, ExpiresAt: clock.Stamp(exp)}, nil
}

// ParseInviteToken returns the user id a token names, or false when its shape is wrong.
func ParseInviteToken(token string) (string, bool) {
	id, secret, found := strings.Cut(strings.TrimSpace(token), ".")
	if !found || !valid.IsUUID(id) || len(secret) != 43 {
		return "", false
	}
	return id, true
}

// HashToken is the stored form of an invitation token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(sum[:])
}

// Live reports whether the invitation is unexpired at now.
func (i *Invite) Live(now time.Time) bool { return clock.Stamp(now) < i.ExpiresAt }

// SpendInviteWrite consumes the invitation whose hash is tokenHash: of two
// acceptances with one token only the first finds it.
func SpendInviteWrite(userID, tokenHash string) *store.Write {
	k := InviteKey(userID)
	return store.Delete(k.PK, k.SK).If("tokenHash = :h").Value(":h", tokenHash)
}
