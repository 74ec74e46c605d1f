package ratelimit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/testenv"
)

// pendingWorld is a limiter of 3 an hour and helpers to write and find
// marker rows in the transaction a Pending settles.
type pendingWorld struct {
	env  *testenv.Env
	l    ratelimit.Limiter
	rule ratelimit.Rule
}

func newPendingWorld(t *testing.T) pendingWorld {
	env := testenv.New(t)
	return pendingWorld{env: env, l: ratelimit.Limiter{St: env.Store, Clock: env.Clock}, rule: ratelimit.Rule{Name: "pending", Limit: 3, Window: time.Hour}}
}

func (w pendingWorld) count(t *testing.T, subject string) int {
	t.Helper()
	n, err := w.l.Count(t.Context(), w.rule, subject)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func (w pendingWorld) commit(t *testing.T) func(*store.Tx) error {
	return func(tx *store.Tx) error { return w.env.Store.Commit(t.Context(), tx) }
}

// mark makes marker row name, on condition that it does not exist yet.
func mark(name string) []*store.Write {
	return []*store.Write{store.Change("T#pending", name, expression.Set(expression.Name("v"), expression.Value(1))).When(store.Absent())}
}

func (w pendingWorld) marked(t *testing.T, name string) bool {
	t.Helper()
	items, err := w.env.Store.BatchGet(t.Context(), store.KeyRef{PK: "T#pending", SK: name})
	if err != nil {
		t.Fatal(err)
	}
	return len(items) == 1
}

// TestAdmitRefusesAFullWindowFromTheRead: a full window is 429 from the row as
// read (Admit takes no context: it cannot write), with nothing to settle.
func TestAdmitRefusesAFullWindowFromTheRead(t *testing.T) {
	w := newPendingWorld(t)
	for range 3 {
		if err := w.l.Allow(t.Context(), w.rule, "s"); err != nil {
			t.Fatal(err)
		}
	}
	k := ratelimit.BucketKey(w.rule, "s")
	p, err := w.l.Admit(k, w.rule, rawRow(t, w.env, k))
	if fe, ok := fault.As(err); !ok || fe.Kind != fault.KindRateLimited || fe.RetryAfter < 1 || p != nil {
		t.Fatalf("open on a full window: %v, %v; want 429 with retryAfter", p, err)
	}
	if _, err := w.l.Admit(k, w.rule, nil); err != nil {
		t.Fatalf("a window read as absent is not full: %v", err)
	}
}

// TestSettleCountsOnceWhicheverWayTheRequestEnds: in the request's
// transaction, on its own after losing a race (then the writes commit again
// without the count), on its own when refused or when the commit fails for
// another cause, and not at all past a window that filled since the read
// (429, nothing written).
func TestSettleCountsOnceWhicheverWayTheRequestEnds(t *testing.T) {
	w := newPendingWorld(t)
	ctx := t.Context()
	k := ratelimit.BucketKey(w.rule, "s")
	open := func(read store.Item) *ratelimit.Pending {
		t.Helper()
		p, err := w.l.Admit(k, w.rule, read)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}

	// In the transaction: the row made by the request's own commit.
	if err := open(nil).Settle(ctx, nil, mark("a"), w.commit(t)); err != nil || w.count(t, "s") != 1 || !w.marked(t, "a") {
		t.Fatalf("settle in the transaction: %v, count %d", err, w.count(t, "s"))
	}
	// Read as absent a slot before: the count's make fails on the row, the
	// event counts on its own and the writes commit without it.
	stale := open(nil)
	w.env.Clock.Advance(time.Minute)
	if err := stale.Settle(ctx, nil, mark("b"), w.commit(t)); err != nil || w.count(t, "s") != 2 || !w.marked(t, "b") {
		t.Fatalf("settle after a lost race: %v, count %d", err, w.count(t, "s"))
	}
	// Refused before any write: counted on its own, the refusal answered.
	refusal := errors.New("refused")
	if err := open(rawRow(t, w.env, k)).Settle(ctx, refusal, nil, w.commit(t)); !errors.Is(err, refusal) || w.count(t, "s") != 3 {
		t.Fatalf("settle a refusal: %v, count %d", err, w.count(t, "s"))
	}

	// The window filled between the read and the commit: 429, no writes.
	kf := ratelimit.BucketKey(w.rule, "f")
	for range 2 {
		if err := w.l.Allow(ctx, w.rule, "f"); err != nil {
			t.Fatal(err)
		}
	}
	late, err := w.l.Admit(kf, w.rule, rawRow(t, w.env, kf))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.l.Allow(ctx, w.rule, "f"); err != nil {
		t.Fatal(err)
	}
	if err := late.Settle(ctx, nil, mark("c"), w.commit(t)); !isRateLimited(err) || w.marked(t, "c") || w.count(t, "f") != 3 {
		t.Fatalf("settle past a window that filled: %v, count %d", err, w.count(t, "f"))
	}

	// A commit that fails for another cause (marker a exists) counts once.
	kg := ratelimit.BucketKey(w.rule, "g")
	failed, err := w.l.Admit(kg, w.rule, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := failed.Settle(ctx, nil, mark("a"), w.commit(t)); !errors.Is(err, store.ErrConditionFailed) || w.count(t, "g") != 1 {
		t.Fatalf("settle a failed commit: %v, count %d", err, w.count(t, "g"))
	}

	// A nil Pending is counted already: it only commits, or refuses.
	var counted *ratelimit.Pending
	if err := counted.Settle(ctx, nil, mark("d"), w.commit(t)); err != nil || !w.marked(t, "d") {
		t.Fatalf("nil settle: %v", err)
	}
	if err := counted.Settle(ctx, refusal, nil, w.commit(t)); !errors.Is(err, refusal) {
		t.Fatalf("nil settle of a refusal: %v", err)
	}
}

func isRateLimited(err error) bool {
	fe, ok := fault.As(err)
	return ok && fe.Kind == fault.KindRateLimited
}
