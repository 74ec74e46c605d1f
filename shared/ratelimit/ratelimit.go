// Package ratelimit limits events per subject with a sliding window: the
// generic cell rate algorithm (GCRA). A rule of Limit events per Window is a
// bucket of Limit cells that refills one cell every Window/Limit; each subject
// keeps one value, its theoretical arrival time (tat). An event is allowed when
// tat <= now + Window - Window/Limit, and moves tat to max(tat, now) +
// Window/Limit. No window boundary exists to split a burst across: at most
// Limit events pass in any interval of length Window.
//
// Storage: one row per rule and subject, RL#<rule>#<subject> / GCRA, with tat
// (unix milliseconds) and a ttl once the bucket is full again. A check is one
// conditional UpdateItem when the bucket was idle (tat <= now) and a second
// one when it was not; both are compare-and-swap, so concurrent Lambdas share
// the count exactly. Subjects that hold personal data (e-mail, phone) are
// hashed first.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// Rule is a limit of Limit events per Window.
type Rule struct {
	Name   string
	Limit  int
	Window time.Duration
}

// The fixed numbers; each route's description in the OpenAPI document
// (shared/api) names the limits it applies.
var (
	LoginIP          = Rule{"login-ip", 10, 5 * time.Minute}
	LoginIPEmail     = Rule{"login-ip-email", 5, 5 * time.Minute}
	LoginFailures    = Rule{"login-fail", 5, 15 * time.Minute}
	Refresh          = Rule{"refresh-ip", 10, time.Minute}
	MFAVerify        = Rule{"mfa-verify", 5, 5 * time.Minute}
	ForgotPassword   = Rule{"forgot-ip", 3, time.Hour}
	PhoneVerifyPhone = Rule{"phone-verify-phone", 3, time.Hour}
	PhoneVerifyUser  = Rule{"phone-verify-user", 5, time.Hour}
	SMSSendTemp      = Rule{"sms-send-temp", 3, 5 * time.Minute}
	SMSSendPhone     = Rule{"sms-send-phone", 5, 15 * time.Minute}
	Register         = Rule{"register-ip", 5, time.Hour}
	RegisterPartner  = Rule{"register-partner-ip", 3, time.Hour}
	DeletionPassword = Rule{"deletion-password", 5, 5 * time.Minute}
	PasskeyPassword  = Rule{"passkey-password", 5, 5 * time.Minute}
	AcceptInvite     = Rule{"accept-invite-ip", 10, time.Hour}
	BadAPIKeyIP      = Rule{"bad-api-key-ip", 300, time.Minute}
	AgentEnroll      = Rule{"agent-enroll-ip", 10, time.Minute}
	AgentIngest      = Rule{"agent-ingest-device", 600, time.Minute}
	// Invitations carry platform e-mail to any address: bounded per inviter
	// and per address within one tenant (invites and resends alike).
	InviteInviter = Rule{"invite-inviter", 20, time.Hour}
	InviteAddress = Rule{"invite-address", 3, 24 * time.Hour}
)

// Limiter checks rules.
type Limiter struct {
	St    *store.Store
	Clock clock.Clock
}

// ErrLimited is the 429 message.
const message = "Too many requests"

// interval is the time one cell takes to refill.
func (r Rule) interval() time.Duration { return r.Window / time.Duration(r.Limit) }

// Allow counts one event for subject and refuses it past the rule's limit with a
// 429 carrying retryAfter (seconds until a cell is free again).
func (l Limiter) Allow(ctx context.Context, r Rule, subject string) error {
	_, err := l.Take(ctx, r, subject)
	return err
}

// Take is Allow that also answers how many events the subject may still make
// right away (0 when this one used the last cell).
func (l Limiter) Take(ctx context.Context, r Rule, subject string) (int, error) {
	now := l.Clock.Now()
	tat, err := l.take(ctx, r, subject, now)
	var limited *limitedError
	if errors.As(err, &limited) {
		return 0, fault.RateLimited(message, retryAfter(now, limited.tat.Add(-(r.Window-r.interval()))))
	}
	if err != nil {
		return 0, fmt.Errorf("rate limit %s: %w", r.Name, err)
	}
	return int(now.Add(r.Window).Sub(tat) / r.interval()), nil
}

// Count returns the events that count against subject now (the cells in use).
func (l Limiter) Count(ctx context.Context, r Rule, subject string) (int, error) {
	now := l.Clock.Now()
	tat, err := l.tat(ctx, r, subject)
	if err != nil || !tat.After(now) {
		return 0, err
	}
	iv := r.interval()
	return int((tat.Sub(now) + iv - 1) / iv), nil
}

// Reset empties subject's bucket (e.g. failures after a success).
func (l Limiter) Reset(ctx context.Context, r Rule, subject string) error {
	return l.clear(ctx, r, subject)
}

// limitedError is take's refusal, with the subject's tat.
type limitedError struct{ tat time.Time }

func (e *limitedError) Error() string { return "rate limited" }

func retryAfter(now, end time.Time) int {
	s := int(end.Sub(now).Round(time.Second) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// Hash turns personal data (e-mail, phone) into a subject.
func Hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
