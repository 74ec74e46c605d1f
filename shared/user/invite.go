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

// Invite is a user's pending invitation into one scope: one row per user and
// scope (USER#<uid> / INVITE#<scope>#<tenant>), so re-inviting into a scope
// replaces, and so revokes, that scope's previous token and never another
// tenant's. The token itself is never stored, only its SHA-256; it names the
// user and the scope, so acceptance reads the row, the profile and the
// membership in one call.
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

// InviteKey is the key of a user's invitation row into a scope.
func InviteKey(userID string, scope authz.Scope, partnerID, orgID string) store.KeyRef {
	return Key(userID, "INVITE#"+TenantKey(scope, partnerID, orgID))
}

// scopeTag encodes a scope in a token: "s", "p<partnerId>" or "o<orgId>".
func scopeTag(scope authz.Scope, partnerID, orgID string) string {
	switch scope {
	case authz.ScopePartner:
		return "p" + partnerID
	case authz.ScopeOrg:
		return "o" + orgID
	}
	return "s"
}

// NewInvite returns a fresh token ("<userId>.<scope tag>.<32 random bytes,
// base64url>") and the row that stores its hash, valid for InviteTTL from now.
func NewInvite(m *Membership, invitedBy string, now time.Time) (string, *Invite, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("invite token: %w", err)
	}
	token := m.UserID + "." + scopeTag(m.Scope, m.PartnerID, m.OrgID) + "." + base64.RawURLEncoding.EncodeToString(b)
	exp := now.Add(InviteTTL)
	k := InviteKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	return token, &Invite{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)}, UserID: m.UserID,
		TokenHash: HashToken(token), Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID,
		InvitedBy: invitedBy, ExpiresAt: clock.Stamp(exp)}, nil
}

// InviteRef is what a token names: the user and the scope of the invitation.
type InviteRef struct {
	UserID    string
	Scope     authz.Scope
	PartnerID string
	OrgID     string
}

// Keys are the invitation row, profile and membership a token names.
func (r InviteRef) Keys() (invite, profile, membership store.KeyRef) {
	return InviteKey(r.UserID, r.Scope, r.PartnerID, r.OrgID), ProfileKey(r.UserID),
		MembershipKey(r.UserID, r.Scope, r.PartnerID, r.OrgID)
}

// ParseInviteToken returns what a token names, or false when its shape is wrong.
func ParseInviteToken(token string) (InviteRef, bool) {
	parts := strings.Split(strings.TrimSpace(token), ".")
	if len(parts) != 3 || !valid.IsUUID(parts[0]) || len(parts[2]) != 43 || parts[1] == "" {
		return InviteRef{}, false
	}
	r := InviteRef{UserID: parts[0]}
	switch tag, id := parts[1][0], parts[1][1:]; {
	case tag == 's' && id == "":
		r.Scope = authz.ScopeSystem
	case tag == 'p' && valid.IsUUID(id):
		r.Scope, r.PartnerID = authz.ScopePartner, id
	case tag == 'o' && valid.IsUUID(id):
		r.Scope, r.OrgID = authz.ScopeOrg, id
	default:
		return InviteRef{}, false
	}
	return r, true
}

// HashToken is the stored form of an invitation token.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(strings.TrimSpace(token)))
	return hex.EncodeToString(sum[:])
}

// Live reports whether the invitation is unexpired at now.
func (i *Invite) Live(now time.Time) bool { return clock.Stamp(now) < i.ExpiresAt }

// SpendInviteWrite consumes the invitation into a scope whose hash is
// tokenHash: of two acceptances with one token only the first finds it.
func SpendInviteWrite(inv *Invite) *store.Write {
	k := InviteKey(inv.UserID, inv.Scope, inv.PartnerID, inv.OrgID)
	tokenHash := inv.TokenHash
	return spendInviteWrite(k, tokenHash)
}
