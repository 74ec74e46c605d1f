package session

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Session is one refresh-token family (one sign-in session).
type Session struct {
	store.Keys
	ID        string      `dynamodbav:"id"`
	UserID    string      `dynamodbav:"userId"`
	TokenHash string      `dynamodbav:"tokenHash"`
	Spent     []string    `dynamodbav:"spent,omitempty"`
	Scope     authz.Scope `dynamodbav:"scope,omitempty"`
	PartnerID string      `dynamodbav:"partnerId,omitempty"`
	OrgID     string      `dynamodbav:"orgId,omitempty"`
	MFA       bool        `dynamodbav:"mfa"`
	IdP       string      `dynamodbav:"idp,omitempty"`  // Claims.IdP
	Role      *RoleHint   `dynamodbav:"role,omitempty"` // Claims.Role: refresh re-issues it
	IPAddress string      `dynamodbav:"ipAddress,omitempty"`
	UserAgent string      `dynamodbav:"userAgent,omitempty"`
	CreatedAt string      `dynamodbav:"createdAt"`
	ExpiresAt string      `dynamodbav:"expiresAt"`
	RevokedAt string      `dynamodbav:"revokedAt,omitempty"`
	Rotations int         `dynamodbav:"rotations"`
	RotatedAt string      `dynamodbav:"rotatedAt,omitempty"`
	// RotatedBy is the client (source IP and user agent) of the last rotation:
	// only that client's concurrent double-submit is a race, not reuse.
	RotatedBy string `dynamodbav:"rotatedBy,omitempty"`
}

// RaceGrace is how long after a rotation the token it spent, presented again by
// the same client (source IP and user agent), is treated as a concurrent
// double-submit that lost (409 race_lost, no tokens) rather than as reuse.
// Any other replay of a spent token revokes the family. The caller records
// both in the audit log (auth.refresh.reuse).
const RaceGrace = 5 * time.Second

// Fingerprint names a client for the race rule of RaceGrace.
func Fingerprint(sourceIP, userAgent string) string {
	sum := sha256.Sum256([]byte(sourceIP + "\x00" + userAgent))
	return hex.EncodeToString(sum[:12])
}

// Key of a session item.
func Key(userID, sessionID string) store.KeyRef {
	return user.Key(userID, "SESSION#"+sessionID)
}

// Claims returns the access-token claims the session carries.
func (s *Session) Claims() Claims {
	return Claims{SessionID: s.ID, Scope: s.Scope, PartnerID: s.PartnerID, OrgID: s.OrgID, MFA: s.MFA, IdP: s.IdP, Role: s.Role}
}

// Live reports whether the session may still be used at now, given the user's
// tokensValidAfter (RFC 3339, "" for none).
func (s *Session) Live(now time.Time, tokensValidAfter string) bool {
	if s.RevokedAt != "" {
		return false
	}
	exp, err := time.Parse(time.RFC3339Nano, s.ExpiresAt)
	if err != nil || !now.Before(exp) {
		return false
	}
	return tokensValidAfter == "" || s.CreatedAt >= tokensValidAfter
}

// Pair is what sign-in hands out.
type Pair struct {
	AccessToken      string
	ExpiresInSeconds int
	RefreshToken     string
	RefreshExpiresAt time.Time
	// RefreshMaxAge is the refresh token's remaining life in seconds by the
	// manager's (injected) clock: the cookie's Max-Age.
	RefreshMaxAge int
	SessionID     string
}

// Manager creates, rotates and revokes sessions.
type Manager struct {
	St     *store.Store
	Signer Signer
	Clock  clock.Clock
}

// NewManager wires a manager with the token keys.
func NewManager(st *store.Store, keys *KeyRing, clk clock.Clock) *Manager {
	if keys.Now == nil {
		keys.Now = clk.Now
	}
	return &Manager{St: st, Clock: clk, Signer: Signer{Keys: keys, Now: clk.Now}}
}

// Start prepares a new session for userID: the pair to hand out and the write to
// commit in the sign-in transaction.
func (m *Manager) Start(userID string, c Claims, ip, ua string) (Pair, *store.Write, error) {
	now := m.Clock.Now()
	sid := uuid.NewString()
	refresh, hash, err := newRefresh(userID, sid)
	if err != nil {
		return Pair{}, nil, err
	}
	k := Key(userID, sid)
	exp := now.Add(RefreshTTL)
	if len(ip) > 45 {
		ip = ip[:45]
	}
	s := Session{
		Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp.Add(24 * time.Hour))},
		ID:   sid, UserID: userID, TokenHash: hash, Scope: c.Scope, PartnerID: c.PartnerID, OrgID: c.OrgID, MFA: c.MFA, IdP: c.IdP,
		Role: c.Role, IPAddress: ip, UserAgent: ua, CreatedAt: clock.Stamp(now), ExpiresAt: clock.Stamp(exp),
	}
	c.SessionID = sid
	access, err := m.Signer.Issue(userID, c)
	if err != nil {
		return Pair{}, nil, err
	}
	return Pair{AccessToken: access, ExpiresInSeconds: int(AccessTTL / time.Second), RefreshToken: refresh,
		RefreshExpiresAt: exp, RefreshMaxAge: int(RefreshTTL / time.Second), SessionID: sid}, store.PutNew(s), nil
}

// Errors of refresh. Reuse and unknown tokens share a status but not a message,
// so clients can tell a stolen-token signal from a typo in logs.
var (
	ErrRefreshInvalid = fault.Unauthorized("Invalid refresh token")
	ErrRefreshReused  = fault.Unauthorized("Refresh token reuse detected; session revoked")
	ErrRefreshRace    = fault.Conflict("Refresh token already used").WithCode(fault.CodeRaceLost)
)

// ParseRefresh splits a refresh token into its user and session ids.
func ParseRefresh(token string) (userID, sessionID string, ok bool) {
	parts := strings.Split(token, ".")
	if len(parts) != 3 || len(parts[0]) != 36 || len(parts[1]) != 36 || parts[2] == "" {
		return "", "", false
	}
	return parts[0], parts[1], true
}

// Rotate spends token on session s (read by the caller with the user) for the
// client fingerprinted by client and returns a fresh pair, storing s.Role
// (the caller may have renewed it from the membership). A token already
// spent revokes the family, except the same client's double-submit within
// RaceGrace, which is a lost race (409).
func (m *Manager) Rotate(ctx context.Context, s *Session, token string, client string) (Pair, error) {
	h := hashToken(token)
	if subtle.ConstantTimeCompare([]byte(h), []byte(s.TokenHash)) != 1 {
		if slices.Contains(s.Spent, h) {
			if len(s.Spent) > 0 && s.Spent[len(s.Spent)-1] == h && m.withinGrace(s.RotatedAt) && s.RotatedBy == client {
				return Pair{}, ErrRefreshRace
			}
			if err := m.Revoke(ctx, s.UserID, s.ID); err != nil {
				return Pair{}, err
			}
			return Pair{}, ErrRefreshReused
		}
		return Pair{}, ErrRefreshInvalid
	}
	refresh, newHash, err := newRefresh(s.UserID, s.ID)
	if err != nil {
		return Pair{}, err
	}
	spent := append(slices.Clone(s.Spent), h)
	if len(spent) > 20 {
		spent = spent[len(spent)-20:]
	}
	k := Key(s.UserID, s.ID)
	upd := expression.Set(expression.Name("tokenHash"), expression.Value(newHash)).
		Set(expression.Name("spent"), expression.Value(spent)).
		Set(expression.Name("rotations"), expression.Name("rotations").Plus(expression.Value(1))).
		Set(expression.Name("rotatedAt"), expression.Value(clock.Stamp(m.Clock.Now()))).
		Set(expression.Name("rotatedBy"), expression.Value(client))
	// The role hint as the caller found the membership (Claims.Role), in the
	// same write.
	if s.Role != nil {
		upd = upd.Set(expression.Name("role"), expression.Value(s.Role))
	} else {
		upd = upd.Remove(expression.Name("role"))
	}
	live := store.Is("tokenHash", h).And(expression.Name("revokedAt").AttributeNotExists())
	if err := m.St.Do(ctx, store.Change(k.PK, k.SK, upd).When(live)); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return Pair{}, ErrRefreshRace
		}
		return Pair{}, fmt.Errorf("rotate session %s: %w", s.ID, err)
	}
	c := s.Claims()
	access, err := m.Signer.Issue(s.UserID, c)
	if err != nil {
		return Pair{}, err
	}
	exp, _ := time.Parse(time.RFC3339Nano, s.ExpiresAt)
	return Pair{AccessToken: access, ExpiresInSeconds: int(AccessTTL / time.Second), RefreshToken: refresh,
		RefreshExpiresAt: exp, RefreshMaxAge: max(1, int(exp.Sub(m.Clock.Now())/time.Second)), SessionID: s.ID}, nil
}

// Revoke ends one session (idempotent).
func (m *Manager) Revoke(ctx context.Context, userID, sessionID string) error {
	if err := m.St.Do(ctx, m.RevokeOneWrite(userID, sessionID)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("revoke session %s: %w", sessionID, err)
	}
	return nil
}

// Others lists the user's sessions other than keep that are not revoked (one
// query of the user's partition).
func (m *Manager) Others(ctx context.Context, userID, keep string) ([]Session, error) {
	var all []Session
	if err := m.St.AllInto(ctx, store.Query{PK: user.PK(userID), SKPrefix: "SESSION#"}, &all); err != nil {
		return nil, fmt.Errorf("sessions of %s: %w", userID, err)
	}
	return slices.DeleteFunc(all, func(s Session) bool { return s.ID == keep || s.RevokedAt != "" }), nil
}

// RevokeWrite is the write that ends session s at now (for a transaction).
func (m *Manager) RevokeWrite(s *Session) *store.Write {
	upd := expression.Set(expression.Name("revokedAt"), expression.Name("revokedAt").IfNotExists(expression.Value(clock.Stamp(m.Clock.Now()))))
	return store.Change(s.PK, s.SK, upd).Exists()
}

// EndLiveWrite ends session sessionID of userID if it is still live (not
// revoked): a switch ends the session it came from this way, so of two
// concurrent switches from one session only one starts a new session.
func (m *Manager) EndLiveWrite(userID, sessionID string) *store.Write {
	k := Key(userID, sessionID)
	upd := expression.Set(expression.Name("revokedAt"), expression.Value(clock.Stamp(m.Clock.Now())))
	return store.Change(k.PK, k.SK, upd).When(expression.Name("revokedAt").AttributeNotExists()).Exists()
}

// RevokeOneWrite is RevokeWrite for the session sessionID of userID, unread.
func (m *Manager) RevokeOneWrite(userID, sessionID string) *store.Write {
	k := Key(userID, sessionID)
	return m.RevokeWrite(&Session{Keys: store.Keys{PK: k.PK, SK: k.SK}})
}

func (m *Manager) withinGrace(rotatedAt string) bool {
	t, err := time.Parse(time.RFC3339Nano, rotatedAt)
	return err == nil && m.Clock.Now().Sub(t) < RaceGrace
}

func newRefresh(userID, sid string) (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", fmt.Errorf("refresh token: %w", err)
	}
	token = userID + "." + sid + "." + base64.RawURLEncoding.EncodeToString(b)
	return token, hashToken(token), nil
}

func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}
