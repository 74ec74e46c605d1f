// Package ratelimit limits events per subject over a sliding window that
// counts exactly (docs/decisions.md#rate-limits-count-exactly): "more than
// Limit events in the window" means any window of that length, counted
// conservatively in sixtieths of it (a minute for an hourly rule). An event is
// admitted only when the last 61 slots, its own included, hold fewer than
// Limit events before it: any window of length Window lies within 61
// consecutive slots, so no window ever holds more than Limit admitted events,
// and an event is refused only when those slots are full.
//
// # The flat row
//
// Every rule (Limiter.Take, Allow, Count, Reset, Full; apikey's per-key limit
// through Limiter.CountOn) keeps one small row per rule and subject,
// RL#<rule>#<subject> / WIN, whose size does not depend on the limit or on
// the traffic: at most 61 slot bounds and five numbers (under 1 KB, so a
// count costs 1 write unit whatever the limit; TestRowFitsOneWriteUnit). The
// row counts admitted events cumulatively:
//
//	n        events counted (since the row was last rebased)
//	l        the limit the bounds are for
//	m        n + l
//	h<s%61>  for each slot s of the window holding events: n before its first
//	         event, plus l (the value n may not reach while s is in the window)
//	los, lo  the earliest slot holding events, and its bound
//
// The window holds n - (lo - l) events. Bounds grow with the slot, so the
// earliest slot's bound is the smallest, and "n < lo" is exactly "the window
// holds fewer than l". One UpdateItem decides each event, with no read before
// it (DESIGN, "Hot rows are decided by one atomic write"): under the
// condition l = Limit, los within the window and n < lo, it adds one to n and
// m, sets the current slot's bound to m if the slot has none, and answers the
// row (ALL_NEW). A refused event fails the condition and writes nothing (no
// refund); DynamoDB answers the row as it was, from which the caller learns
// the reset instant. The expression is a few clauses whatever the limit.
//
// A row the count found absent is made by one more conditional write that
// also counts on a row a concurrent request made in the same slot, so a burst
// on a new subject costs each request at most two writes and none retries
// (TestBurstOnANewRowCostsTwoWritesAtMost). A row past its ttl that DynamoDB
// has not deleted yet is not absent: it is rebased whole (its old bounds
// removed), and a caller that reads a window before counting reads it with
// store.BatchGetPastTTL (TestRowPastItsTTLIsRewrittenWhole).
//
// The condition also fails when its limit changed, or its
// earliest slot has left the window (about once a slot for a busy subject).
// The caller then decides from the row the failure answered (no second
// read): refused if the 61 slots hold Limit events, else one conditional
// UpdateItem rebases the row (the slots still in the window, n renumbered
// from the window's own count, stale slot attributes removed) and counts the
// event, on condition that the row is still the one read (its write token).
// Only concurrent rebases of one row repeat, each time because another
// request wrote: at most one rebase a slot, however many callers.
//
// Subjects that hold personal data (e-mail, phone) are hashed first.
//
// # Lost answers
//
// DynamoDB does not make UpdateItem idempotent. A count whose answer was lost
// is retried by the SDK: when no other request wrote in between, shared/store
// recognises its write token and the count is in once. Otherwise the retry
// meets its own effect: it counts the event a second time, or, when that
// first count filled the window, fails the condition and refuses the request
// although its count is in. Either way a lost answer costs at most one
// admission and never admits one past the limit: erring toward refusal, by
// at most one, is what a limit may do, and keeping a token per count to do
// better would make the row grow with the traffic (it did: 43 write units a
// request at 100,000 an hour). TestConcurrentCallersShareTheLimitExactly
// holds this under the emulator's fault mode.
//
// # Agents
//
// The agent's ingest window is a flat row, counted from the row its token
// check read (CountFrom), or, for elevation ingest, admitted from that row
// (Limiter.Admit: 429 when full, nothing written) and settled once when the
// request ends (Pending.Settle): in the request's transaction (CountWrite),
// on its own when the request is refused or the count loses a race. Rows of
// the older format (a count and a token set per slot) are rebased into the
// flat row by their first count.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
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
	w, err := l.CountOn(ctx, BucketKey(r, subject), r, nil)
	if err != nil {
		return 0, err
	}
	return max(l.rule(r).Limit-w.Count, 0), nil
}

// Count returns the events that count against subject now.
func (l Limiter) Count(ctx context.Context, r Rule, subject string) (int, error) {
	k := BucketKey(r, subject)
	items, err := l.St.BatchGet(ctx, k)
	if err != nil {
		return 0, err
	}
	return l.Look(r, items[k.PK+"|"+k.SK], l.Clock.Now()).Count, nil
}

// Reset empties subject's window (e.g. failures after a success).
func (l Limiter) Reset(ctx context.Context, r Rule, subject string) error {
	pk, sk := bucket(r, subject)
	return l.St.Do(ctx, store.Delete(pk, sk))
}

// bucket is the key of subject's row for r.
func bucket(r Rule, subject string) (pk, sk string) { return "RL#" + r.Name + "#" + subject, "WIN" }

// BucketKey is the row of subject's window for r, for callers that read it in
// a batch with other rows (see Full).
func BucketKey(r Rule, subject string) store.KeyRef {
	pk, sk := bucket(r, subject)
	return store.KeyRef{PK: pk, SK: sk}
}

// Slots is how many slots a window is counted in; an event is judged over
// Slots+1 of them.
const Slots = 60

// Slot is the length of one slot of window (a minute for an hour).
func Slot(window time.Duration) time.Duration { return max(window/Slots, time.Millisecond) }

func slotIndex(window time.Duration, t time.Time) int64 {
	return t.UnixMilli() / Slot(window).Milliseconds()
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

// Hash turns personal data (e-mail, phone) into a subject.
func Hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}
