// Package ratelimit counts requests in fixed windows stored in DynamoDB: one
// conditional UpdateItem per check, so concurrent Lambdas share the count and
// the limit holds exactly (the condition refuses the increment past the limit).
//
// Rows: RL#<rule>#<subject> / <window start unix>, attribute n, ttl at window end.
// Subjects that hold personal data (e-mail, phone) are hashed first.
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
)

// Limiter checks rules.
type Limiter struct {
	St    *store.Store
	Clock clock.Clock
}

// ErrLimited is the 429 message.
const message = "Too many requests"

// Allow counts one event for subject and refuses it past the rule's limit with a
// 429 carrying retryAfter (seconds to the window's end).
func (l Limiter) Allow(ctx context.Context, r Rule, subject string) error {
	now := l.Clock.Now()
	start := now.Truncate(r.Window)
	end := start.Add(r.Window)
	err := l.bump(ctx, r, subject, start, end)
	if errors.Is(err, store.ErrConditionFailed) {
		return fault.RateLimited(message, retryAfter(now, end))
	}
	if err != nil {
		return fmt.Errorf("rate limit %s: %w", r.Name, err)
	}
	return nil
}

// Count returns the events counted for subject in the current window.
func (l Limiter) Count(ctx context.Context, r Rule, subject string) (int, error) {
	return l.count(ctx, r, subject, l.Clock.Now().Truncate(r.Window))
}

// Reset clears subject's current window (e.g. failures after a success).
func (l Limiter) Reset(ctx context.Context, r Rule, subject string) error {
	return l.clear(ctx, r, subject, l.Clock.Now().Truncate(r.Window))
}

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
