package ratelimit_test

import (
	"testing"

	"github.com/gale-rmm/gale/shared/ratelimit"
)

// TestTransactionRebasesOfOneReadCountBoth: two requests admitted from the
// same row read, due for its rebase (its slots left the window), settle in
// their transactions one after the other. The second rebase is conditional
// on the row being the one read: it must fail there (the first changed the
// row) and count on its own, not overwrite the first's count with its own.
func TestTransactionRebasesOfOneReadCountBoth(t *testing.T) {
	w := newPendingWorld(t)
	ctx := t.Context()
	if err := w.l.Allow(ctx, w.rule, "s"); err != nil {
		t.Fatal(err)
	}
	// Past the window, not past the ttl: the row is read, and rebased.
	w.env.Clock.Advance(w.rule.Window + ratelimit.Slot(w.rule.Window))
	k := ratelimit.BucketKey(w.rule, "s")
	read := rawRow(t, w.env, k)
	var ps []*ratelimit.Pending
	for range 2 {
		p, err := w.l.Admit(k, w.rule, read)
		if err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for i, p := range ps {
		if err := p.Settle(ctx, nil, mark(string(rune('a'+i))), w.commit(t)); err != nil {
			t.Fatalf("settle %d: %v", i, err)
		}
	}
	if n := w.count(t, "s"); n != 2 || !w.marked(t, "a") || !w.marked(t, "b") {
		t.Fatalf("count %d after two settled requests, want 2", n)
	}
}
