// Package ratelimit limits events per subject over a sliding window that
// counts exactly (DECISIONS, "Rate limits count exactly"): "more than Limit
// events in the window" means any window of that length, counted
// conservatively in sixtieths of it (a minute for an hourly rule). An event is
// admitted only when the last 61 slots, its own included, hold at most Limit
// events: any window of length Window lies within 61 consecutive slots, so no
// window ever holds more than Limit admitted events, and an event is refused
// only when those slots are full.
//
// Storage: one row per rule and subject, RL#<rule>#<subject> / WIN, holding one
// number attribute per slot (b<slot index>) and a ttl. One UpdateItem decides
// each event, with no read before it and no retry loop: it adds one to the
// current slot (if_not_exists + 1), removes the slots that have left the
// window, and returns the whole row (ALL_NEW), whose slots the caller sums. A
// refused event takes its count back with a second UpdateItem, so refusals do
// not fill the window. Concurrent callers therefore cost one write each
// (two when refused), whatever their number. Subjects that hold personal data
// (e-mail, phone) are hashed first.
//
// A count whose response was lost and whose write was retried counts twice:
// the error is on the refusing side, never past the limit.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
	// Limits, when set, replaces the Limit of the rules it names (by Rule.Name),
	// so that tests of the 1,001st event need not make 1,000 first.
	Limits map[string]int
}

const message = "Too many requests"

func (l Limiter) rule(r Rule) Rule {
	if n, ok := l.Limits[r.Name]; ok {
		r.Limit = n
	}
	return r
}

// Allow counts one event for subject and refuses it past the rule's limit with a
// 429 carrying retryAfter (seconds until the oldest counted slot leaves the window).
func (l Limiter) Allow(ctx context.Context, r Rule, subject string) error {
	_, err := l.Take(ctx, r, subject)
	return err
}

// Take is Allow that also answers how many events the subject may still make
// (0 when this one used the last place).
func (l Limiter) Take(ctx context.Context, r Rule, subject string) (int, error) {
	r = l.rule(r)
	now := l.Clock.Now()
	pk, sk := bucket(r, subject)
	item, err := l.St.Update(ctx, store.Change(pk, sk, Spend(expression.UpdateBuilder{}, r.Window, now).
		Set(expression.Name("ttl"), expression.Value(store.TTL(now.Add(r.Window+2*Slot(r.Window)))))))
	if err != nil {
		return 0, fmt.Errorf("rate limit %s: %w", r.Name, err)
	}
	w := Tally(item, r.Window, now)
	if w.Count > r.Limit {
		if err := l.St.Do(ctx, Refund(pk, sk, r.Window, now)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return 0, fmt.Errorf("rate limit %s: refund: %w", r.Name, err)
		}
		return 0, fault.RateLimited(message, w.RetryAfter(now))
	}
	return r.Limit - w.Count, nil
}

// Count returns the events that count against subject now.
func (l Limiter) Count(ctx context.Context, r Rule, subject string) (int, error) {
	pk, sk := bucket(r, subject)
	items, err := l.St.BatchGet(ctx, store.KeyRef{PK: pk, SK: sk})
	if err != nil {
		return 0, err
	}
	return Tally(items[pk+"|"+sk], r.Window, l.Clock.Now()).Count, nil
}

// Reset empties subject's window (e.g. failures after a success).
func (l Limiter) Reset(ctx context.Context, r Rule, subject string) error {
	pk, sk := bucket(r, subject)
	return l.St.Do(ctx, store.Delete(pk, sk))
}

// bucket is the key of subject's row for r.
func bucket(r Rule, subject string) (pk, sk string) { return "RL#" + r.Name + "#" + subject, "WIN" }

// BucketKey is the row of subject's window for r, for callers that read it in
// a batch with other rows (see Refuses).
func BucketKey(r Rule, subject string) store.KeyRef {
	pk, sk := bucket(r, subject)
	return store.KeyRef{PK: pk, SK: sk}
}

// Refuses reports whether the window row item (nil when absent) is full at
// now, and if so the seconds until its oldest counted slot leaves it.
func (l Limiter) Refuses(r Rule, item store.Item, now time.Time) (bool, int) {
	r = l.rule(r)
	w := Tally(item, r.Window, now)
	if w.Count < r.Limit {
		return false, 0
	}
	return true, w.RetryAfter(now)
}

// Refuses is Limiter.Refuses with the rule's own limit.
func Refuses(r Rule, item store.Item, now time.Time) (bool, int, error) {
	no, after := Limiter{}.Refuses(r, item, now)
	return no, after, nil
}

// Slots is how many slots a window is counted in; an event is judged over
// Slots+1 of them.
const Slots = 60

// Slot is the length of one slot of window (a minute for an hour).
func Slot(window time.Duration) time.Duration { return max(window/Slots, time.Millisecond) }

func slotIndex(window time.Duration, t time.Time) int64 {
	return t.UnixMilli() / Slot(window).Milliseconds()
}

func slotName(i int64) string { return "b" + strconv.FormatInt(i, 10) }

// Spend adds to upd the counting of one event at now: one more in now's slot,
// and the removal of the slots that have left the window (a row seen after a
// long pause may keep older ones; they are never counted, and the row's ttl
// ends them).
func Spend(upd expression.UpdateBuilder, window time.Duration, now time.Time) expression.UpdateBuilder {
	cur := slotIndex(window, now)
	n := expression.Name(slotName(cur))
	upd = upd.Set(n, expression.Plus(n.IfNotExists(expression.Value(0)), expression.Value(1)))
	for i := cur - Slots - 1; i > cur-2*Slots-4; i-- {
		upd = upd.Remove(expression.Name(slotName(i)))
	}
	return upd
}

// Refund takes back the event Spend counted at now, on the row pk/sk.
func Refund(pk, sk string, window time.Duration, now time.Time) *store.Write {
	n := expression.Name(slotName(slotIndex(window, now)))
	return store.Change(pk, sk, expression.Add(n, expression.Value(-1))).When(n.GreaterThan(expression.Value(0)))
}

// Window is what a row's slots hold at one instant.
type Window struct {
	// Count is the events in the last Slots+1 slots.
	Count int
	// Reset is when the oldest counted slot leaves the window (now when none
	// is counted): both X-RateLimit-Reset and Retry-After name it.
	Reset time.Time
}

// RetryAfter is the whole seconds from now until w.Reset, at least 1.
func (w Window) RetryAfter(now time.Time) int {
	s := int((w.Reset.Sub(now) + time.Second - 1) / time.Second)
	return max(s, 1)
}

// Tally sums the slots of item (nil: an empty window) that count at now.
func Tally(item store.Item, window time.Duration, now time.Time) Window {
	cur := slotIndex(window, now)
	w := Window{Reset: now}
	oldest := int64(-1)
	for i := cur - Slots; i <= cur; i++ {
		v, ok := item[slotName(i)].(*types.AttributeValueMemberN)
		if !ok {
			continue
		}
		n, err := strconv.Atoi(v.Value)
		if err != nil || n <= 0 {
			continue
		}
		w.Count += n
		if oldest < 0 {
			oldest = i
		}
	}
	if oldest >= 0 {
		w.Reset = time.UnixMilli((oldest + Slots + 1) * Slot(window).Milliseconds()).UTC()
	}
	return w
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
