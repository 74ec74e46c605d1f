package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// The attributes of the flat row (see the package doc, "The flat row").
const (
	attrN   = "n"
	attrM   = "m"
	attrL   = "l"
	attrLo  = "lo"
	attrLos = "los"
	attrTTL = "ttl"
)

// span is how many slots an event is judged over (Slots+1); bound names are
// slot indexes modulo span, unambiguous because the row only holds slots of
// one span (from los on).
const span = Slots + 1

func boundName(slot int64) string { return "h" + strconv.FormatInt(((slot%span)+span)%span, 10) }

// rebases is how many times a count tries to rebase a row that concurrent
// rebases keep changing (each failure means another request wrote it).
const rebases = 8

// CountOn counts one event of rule r on the row at key, adding what also
// adds to the same write (nil: nothing), and answers the window with this
// event in. Past the limit it answers fault.RateLimited carrying the seconds
// until the oldest counted slot leaves the window, with the window as it is
// (nothing written).
func (l Limiter) CountOn(ctx context.Context, key store.KeyRef, r Rule, also func(expression.UpdateBuilder) expression.UpdateBuilder) (Window, error) {
	r = l.rule(r)
	now := l.Clock.Now()
	if also == nil {
		also = func(u expression.UpdateBuilder) expression.UpdateBuilder { return u }
	}
	cur := slotIndex(r.Window, now)
	ttl := store.TTL(now.Add(r.Window + 2*Slot(r.Window)))
	for range rebases {
		item, err := l.St.Update(ctx, fastCount(key, r.Limit, cur, ttl, also))
		if err == nil {
			return readRow(item, r.Window).window(r.Window, cur, now), nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return Window{}, fmt.Errorf("rate limit %s: %w", r.Name, err)
		}
		row := readRow(item, r.Window)
		w := row.window(r.Window, cur, now)
		if w.Count >= r.Limit {
			return w, fault.RateLimited(message, w.RetryAfter(now))
		}
		next := row.rebase(key, item, r.Limit, cur, ttl, also)
		if item == nil {
			next = makeCount(key, r.Limit, cur, ttl, also)
		}
		item, err = l.St.Update(ctx, next)
		if err == nil {
			return readRow(item, r.Window).window(r.Window, cur, now), nil
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return Window{}, fmt.Errorf("rate limit %s: %w", r.Name, err)
		}
		// Another request wrote the row first (most likely the same
		// rebase, or the row's making): refused if that filled the window,
		// else count on the row as it is now.
		if w := readRow(item, r.Window).window(r.Window, cur, now); item != nil && w.Count >= r.Limit {
			return w, fault.RateLimited(message, w.RetryAfter(now))
		}
	}
	return Window{}, fmt.Errorf("rate limit %s: the row changed under %d counts in a row", r.Name, rebases)
}

// CountWrite is the write that counts one event of r on the row at key, for
// a caller that folds the count into a transaction of its own and has read
// the row (read; nil when absent): the one-write count when the row read is
// live for r, else the rebase of the row read, conditional on its write
// token. When the transaction fails on this write (the row changed since it
// was read, or the window is full), the caller counts with CountOn instead,
// which refuses the event or counts it, and commits without it.
func (l Limiter) CountWrite(key store.KeyRef, r Rule, read store.Item, also func(expression.UpdateBuilder) expression.UpdateBuilder) *store.Write {
	r = l.rule(r)
	now := l.Clock.Now()
	if also == nil {
		also = func(u expression.UpdateBuilder) expression.UpdateBuilder { return u }
	}
	cur, ttl := slotIndex(r.Window, now), store.TTL(now.Add(r.Window+2*Slot(r.Window)))
	lim, ok1 := numAttr(read, attrL)
	los, ok2 := numAttr(read, attrLos)
	if ok1 && ok2 && lim == int64(r.Limit) && los >= cur-Slots && los <= cur {
		return fastCount(key, r.Limit, cur, ttl, also)
	}
	if read == nil {
		return makeCount(key, r.Limit, cur, ttl, also)
	}
	return readRow(read, r.Window).rebase(key, read, r.Limit, cur, ttl, also)
}

// makeCount is the count on a row the caller found absent: it makes the row
// holding this event, or, when concurrent requests made it first in this
// same slot, counts on it as fastCount does, so a burst on a new row costs
// each request at most one write more than a live row does (no request loses
// a race to the row's making and tries again). A row it cannot count on that
// way (another slot, another limit, full) fails its condition, and the
// caller goes on as after any failed count.
func makeCount(key store.KeyRef, limit int, cur, ttl int64, also func(expression.UpdateBuilder) expression.UpdateBuilder) *store.Write {
	n, m, h := expression.Name(attrN), expression.Name(attrM), expression.Name(boundName(cur))
	one, l := expression.Value(1), expression.Value(limit)
	upd := also(expression.UpdateBuilder{}).
		Set(n, expression.Plus(n.IfNotExists(expression.Value(0)), one)).
		Set(m, expression.Plus(m.IfNotExists(l), one)).
		Set(h, h.IfNotExists(l)).
		Set(expression.Name(attrL), expression.Name(attrL).IfNotExists(l)).
		Set(expression.Name(attrLos), expression.Name(attrLos).IfNotExists(expression.Value(cur))).
		Set(expression.Name(attrLo), expression.Name(attrLo).IfNotExists(l)).
		Set(expression.Name(attrTTL), expression.Value(ttl))
	los := expression.Name(attrLos)
	// Made in this slot by a concurrent request: its bound is the slot's
	// (the first event's n was 0, so the bound is the limit), and the
	// window holds only this slot's events.
	sameSlot := store.Is(attrL, limit).And(los.Equal(expression.Value(cur)), h.AttributeExists(), n.LessThan(expression.Name(attrLo)))
	return store.Change(key.PK, key.SK, upd).When(n.AttributeNotExists().Or(sameSlot))
}

// CountFrom is CountOn for a caller that has read the row already (read;
// nil when absent): a full window is refused from the row read, without a
// write, and otherwise one write counts the event (CountWrite's), even on a
// new row or one due for its rebase. Only when the row changed since it was
// read does it count as CountOn does.
func (l Limiter) CountFrom(ctx context.Context, key store.KeyRef, r Rule, read store.Item, also func(expression.UpdateBuilder) expression.UpdateBuilder) (Window, error) {
	now := l.Clock.Now()
	if full, after := l.Full(r, read, now); full {
		return l.Look(r, read, now), fault.RateLimited(message, after)
	}
	item, err := l.St.Update(ctx, l.CountWrite(key, r, read, also))
	if err == nil {
		return l.Look(r, item, now), nil
	}
	if !errors.Is(err, store.ErrConditionFailed) {
		return Window{}, fmt.Errorf("rate limit %s: %w", r.Name, err)
	}
	return l.CountOn(ctx, key, r, also)
}

// Admit admits one event of r on the row at key that its caller read (read;
// nil when absent): a full window is refused from the row read with 429
// (retryAfter), nothing written and nothing to settle; otherwise the event
// is pending, for Pending.Settle (see pending.go).
func (l Limiter) Admit(key store.KeyRef, r Rule, read store.Item) (*Pending, error) {
	if full, after := l.Full(r, read, l.Clock.Now()); full {
		return nil, fault.RateLimited(message, after)
	}
	return &Pending{limiter: l, key: key, rule: r, read: read}, nil
}

// fastCount is the one write of a count on a live row: see the package doc.
func fastCount(key store.KeyRef, limit int, cur, ttl int64, also func(expression.UpdateBuilder) expression.UpdateBuilder) *store.Write {
	n, m := expression.Name(attrN), expression.Name(attrM)
	one := expression.Value(1)
	upd := also(expression.UpdateBuilder{}).
		Set(n, n.Plus(one)).
		Set(m, m.Plus(one)).
		Set(expression.Name(boundName(cur)), expression.Name(boundName(cur)).IfNotExists(m)).
		Set(expression.Name(attrTTL), expression.Value(ttl))
	los := expression.Name(attrLos)
	cond := store.Is(attrL, limit).
		And(los.GreaterThanEqual(expression.Value(cur-Slots)), los.LessThanEqual(expression.Value(cur)),
			n.LessThan(expression.Name(attrLo)))
	return store.Change(key.PK, key.SK, upd).When(cond)
}

// row is a flat row as read: its count, limit and the bound of each slot.
type row struct {
	n, l   int64
	bounds map[int64]int64 // slot -> bound
}

func numAttr(item store.Item, name string) (int64, bool) {
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v.Value, 10, 64)
	return n, err == nil
}

// readRow reads item (nil: absent) as a flat row; a row of another shape
// (the older token slots) reads as empty.
func readRow(item store.Item, window time.Duration) row {
	r := row{bounds: map[int64]int64{}}
	n, ok1 := numAttr(item, attrN)
	l, ok2 := numAttr(item, attrL)
	los, ok3 := numAttr(item, attrLos)
	if !ok1 || !ok2 || !ok3 {
		return r
	}
	r.n, r.l = n, l
	for i := los; i < los+span; i++ {
		if b, ok := numAttr(item, boundName(i)); ok {
			r.bounds[i] = b
		}
	}
	return r
}

// inWindow are the row's slots that still count at slot cur, and the smallest
// start (n before the slot's first event) among them.
func (r row) inWindow(cur int64) (slots []int64, minStart int64) {
	minStart = r.n
	for s, b := range r.bounds {
		if s < cur-Slots {
			continue
		}
		slots = append(slots, s)
		minStart = min(minStart, b-r.l)
	}
	return slots, minStart
}

// window is what the row holds at slot cur (instant now).
func (r row) window(window time.Duration, cur int64, now time.Time) Window {
	slots, minStart := r.inWindow(cur)
	w := Window{Count: int(r.n - minStart), Reset: now}
	if len(slots) > 0 {
		oldest := slots[0]
		for _, s := range slots {
			oldest = min(oldest, s)
		}
		w.Reset = time.UnixMilli((oldest + span) * Slot(window).Milliseconds()).UTC()
	}
	return w
}

// rebase is the write that replaces row (as read in item, nil when absent)
// by the slots still in the window, numbered from the window's count, with
// the event counted at cur (or at the row's latest slot, should cur be
// earlier), on condition that the row is still the one read.
func (r row) rebase(key store.KeyRef, item store.Item, limit int, cur, ttl int64, also func(expression.UpdateBuilder) expression.UpdateBuilder) *store.Write {
	slots, minStart := r.inWindow(cur)
	count := r.n - minStart
	at, earliest := cur, cur
	bounds := map[int64]int64{}
	for _, s := range slots {
		bounds[s] = r.bounds[s] - r.l - minStart + int64(limit)
		at, earliest = max(at, s), min(earliest, s)
	}
	if _, ok := bounds[at]; !ok {
		bounds[at] = count + int64(limit)
	}
	upd := also(expression.UpdateBuilder{}).
		Set(expression.Name(attrN), expression.Value(count+1)).
		Set(expression.Name(attrM), expression.Value(count+1+int64(limit))).
		Set(expression.Name(attrL), expression.Value(limit)).
		Set(expression.Name(attrLos), expression.Value(earliest)).
		Set(expression.Name(attrLo), expression.Value(bounds[earliest])).
		Set(expression.Name(attrTTL), expression.Value(ttl))
	kept := map[string]bool{}
	for s, b := range bounds {
		kept[boundName(s)] = true
		upd = upd.Set(expression.Name(boundName(s)), expression.Value(b))
	}
	for name := range item {
		if !kept[name] && stale(name) {
			upd = upd.Remove(expression.Name(name))
		}
	}
	cond := store.Absent()
	if tok, ok := item[store.TokenAttr].(*types.AttributeValueMemberS); ok {
		cond = store.Is(store.TokenAttr, tok.Value)
	} else if item != nil {
		cond = expression.Name(store.TokenAttr).AttributeNotExists().And(store.Present())
	}
	return store.Change(key.PK, key.SK, upd).When(cond)
}

// stale reports whether attribute name is a slot of the row: a bound (h<i>),
// or a slot or token set of the older format (b<i>, k<i>), removed by a
// rebase unless kept.
func stale(name string) bool {
	if len(name) < 2 || !strings.ContainsRune("hbk", rune(name[0])) {
		return false
	}
	_, err := strconv.ParseInt(name[1:], 10, 64)
	return err == nil
}

// Look is what the flat row item (nil when absent) holds at now for rule r.
func (l Limiter) Look(r Rule, item store.Item, now time.Time) Window {
	r = l.rule(r)
	return readRow(item, r.Window).window(r.Window, slotIndex(r.Window, now), now)
}

// Full reports whether the flat row item (nil when absent) refuses the next
// event of r at now, and if so the seconds until its oldest counted slot
// leaves the window.
func (l Limiter) Full(r Rule, item store.Item, now time.Time) (bool, int) {
	w := l.Look(r, item, now)
	if w.Count < l.rule(r).Limit {
		return false, 0
	}
	return true, w.RetryAfter(now)
}

// Seed replaces the row at key by one holding count events of r in the
// current slot: the state a burst leaves, for tests and load drills that
// need a full or nearly full window without making every event.
func (l Limiter) Seed(ctx context.Context, key store.KeyRef, r Rule, count int) error {
	r = l.rule(r)
	now := l.Clock.Now()
	cur, lim := slotIndex(r.Window, now), int64(r.Limit)
	upd := expression.Set(expression.Name(attrN), expression.Value(count)).
		Set(expression.Name(attrM), expression.Value(int64(count)+lim)).
		Set(expression.Name(attrL), expression.Value(lim)).
		Set(expression.Name(attrLos), expression.Value(cur)).
		Set(expression.Name(attrLo), expression.Value(lim)).
		Set(expression.Name(boundName(cur)), expression.Value(lim)).
		Set(expression.Name(attrTTL), expression.Value(store.TTL(now.Add(r.Window+2*Slot(r.Window)))))
	return l.St.Do(ctx, store.Change(key.PK, key.SK, upd))
}
