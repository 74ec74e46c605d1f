// Package attempt counts the attempts at a secret (a password) for one
// subject BEFORE the secret is checked, so that once Limit attempts have
// failed no further one is checked, however many arrive at once
// (docs/decisions.md#login-lockout). A success takes its own count back.
//
// Row, one per rule and subject (an e-mail's hash, never the address):
//
//	attempt count   ATTEMPT#<rule>#<subject> / ATTEMPT   {n, last, toks, ttl}
//
// n is the attempts counted (failures, plus those still being checked),
// last the time of the latest counted attempt (epoch milliseconds), toks the
// tokens of the counted attempts, ttl last + Window (DynamoDB's cleanup only:
// expiry is judged by last, as TTL deletes lazily).
//
// # The window
//
// Attempts count while each comes within Window of the previous counted one;
// the subject is locked while n >= Limit and the latest counted attempt is
// less than Window old, so a lock lasts Window from the failure that filled
// it. Whenever Limit failures fall within any Window, each follows the one
// before within Window, so they are all counted and the last one locks: a
// burst split across any boundary cannot get past the limit. The price,
// on the side of locking: failures spaced just under Window apart keep
// counting (five typos, each within 15 minutes of the last, lock), and an
// attempt that succeeds still moves last.
//
// # One write per attempt
//
// Take is one conditional UpdateItem, run before the secret is checked:
// ADD n 1 (and the attempt's token to toks, SET last) only while the row is
// absent, or n < Limit with last less than Window old. When that condition
// fails on a locked row, Take answers ErrLocked with nothing written, and the
// caller answers as for a wrong secret without checking it. Only a row whose
// last attempt is older than Window (expired, not yet removed by TTL) costs a
// second write: a reset to n = 1 conditioned on the row still being expired,
// so of two concurrent resets one applies and the other counts on the fresh
// row. Concurrent attempts therefore each see the count with every attempt
// before them in it, and at most Limit are admitted in a window, whatever
// their number.
//
// A success takes its count back with Refund, a conditional write (the token
// still in toks: removed with the count, so a retry never takes back twice),
// best run in the transaction that completes the success so it costs no call.
//
// # Lost answers
//
// A count carries its token: a retry of a count whose answer was lost fails
// the condition "toks does not hold the token" and finds the token in the row
// the failure returns, so it is counted once and admitted. Should the row
// have been reset in between (only possible after Window of silence), the
// retry counts again: one attempt over-counted, erring toward the lock. A
// lost answer of a Refund is recognised the same way (its condition fails,
// nothing is taken back twice).
package attempt

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Rule is "after Limit failed attempts within Window of each other, the
// subject is locked for Window".
type Rule struct {
	Name   string
	Limit  int
	Window time.Duration
}

// Counter counts attempts in the table.
type Counter struct {
	St    *store.Store
	Clock clock.Clock
}

// ErrLocked answers an attempt at a locked subject: nothing was counted and
// the secret must not be checked.
var ErrLocked = errors.New("attempt: locked")

// Try is one counted attempt.
type Try struct {
	key store.KeyRef
	tok string
}

// Key is the row of subject's attempts under r (e.g. to delete it when a
// password reset lifts a lock).
func Key(r Rule, subject string) store.KeyRef {
	return store.KeyRef{PK: "ATTEMPT#" + r.Name + "#" + subject, SK: "ATTEMPT"}
}

// Attribute names of the row.
const (
	attrN    = "n"
	attrLast = "last"
	attrToks = "toks"
)

// Take counts one attempt for subject under r, before its secret is checked.
// ErrLocked: the subject is locked, nothing counted.
func (c Counter) Take(ctx context.Context, r Rule, subject string) (Try, error) {
	now := c.Clock.Now()
	t := Try{key: Key(r, subject), tok: newToken()}
	cutoff := now.Add(-r.Window).UnixMilli()
	n, last, toks := expression.Name(attrN), expression.Name(attrLast), expression.Name(attrToks)
	mine := &types.AttributeValueMemberSS{Value: []string{t.tok}}
	ttl := expression.Value(store.TTL(now.Add(r.Window)))
	fresh := expression.Not(toks.Contains(t.tok))
	// Two rounds: a lost race to reset an expired row is followed by a count
	// on the row the winner reset.
	for range 2 {
		count := expression.Add(n, expression.Value(1)).Add(toks, expression.Value(mine)).
			Set(last, expression.Value(now.UnixMilli())).Set(expression.Name("ttl"), ttl)
		open := expression.Or(expression.AttributeNotExists(last), last.GreaterThan(expression.Value(cutoff))).
			And(expression.Or(expression.AttributeNotExists(n), n.LessThan(expression.Value(r.Limit))))
		old, err := c.St.Update(ctx, store.Change(t.key.PK, t.key.SK, count).When(open.And(fresh)))
		if err == nil || holds(old, t.tok) {
			return t, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return Try{}, fmt.Errorf("attempt %s: count: %w", r.Name, err)
		}
		if lastOf(old) > cutoff {
			return Try{}, ErrLocked // full, and its latest attempt is recent
		}
		// Expired (older than Window, not yet removed by TTL): start over.
		reset := expression.Set(n, expression.Value(1)).Set(toks, expression.Value(mine)).
			Set(last, expression.Value(now.UnixMilli())).Set(expression.Name("ttl"), ttl)
		old, err = c.St.Update(ctx, store.Change(t.key.PK, t.key.SK, reset).
			When(last.LessThanEqual(expression.Value(cutoff)).And(fresh)))
		if err == nil || holds(old, t.tok) {
			return t, nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return Try{}, fmt.Errorf("attempt %s: reset: %w", r.Name, err)
		}
	}
	// Reset twice by others meanwhile: count it as locked, toward safety.
	return Try{}, ErrLocked
}

// Refund is the write that takes t's count back after its secret proved
// right: once, only while the row still holds t's token. Its condition fails
// when the row was deleted or reset meanwhile (a password reset lifted the
// lock): run alone, ignore ErrConditionFailed; in a transaction, the
// transaction fails with it.
func (t Try) Refund() *store.Write {
	toks := expression.Name(attrToks)
	upd := expression.Add(expression.Name(attrN), expression.Value(-1)).
		Delete(toks, expression.Value(&types.AttributeValueMemberSS{Value: []string{t.tok}}))
	return store.Change(t.key.PK, t.key.SK, upd).When(toks.Contains(t.tok))
}

// holds reports whether item (a row as a failed condition found it) holds
// token tok: the count had applied on an attempt whose answer was lost.
func holds(item store.Item, tok string) bool {
	set, ok := item[attrToks].(*types.AttributeValueMemberSS)
	return ok && slices.Contains(set.Value, tok)
}

// lastOf is the row's last attempt time in epoch milliseconds (0 when absent).
func lastOf(item store.Item) int64 {
	var r struct {
		Last int64 `dynamodbav:"last"`
	}
	if err := store.Unmarshal(item, &r); err != nil {
		return 0
	}
	return r.Last
}

var newToken = func() string {
	var b [9]byte
	_, _ = rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}
