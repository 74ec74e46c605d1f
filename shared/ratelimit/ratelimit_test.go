package ratelimit_test

import (
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestSlidingWindowWithRetryAfter(t *testing.T) {
	env := testenv.New(t)
	l := ratelimit.Limiter{St: env.Store, Clock: env.Clock}
	rule := ratelimit.Rule{Name: "t", Limit: 3, Window: 6 * time.Minute} // a cell refills every 2 minutes
	for i := 0; i < 3; i++ {
		if err := l.Allow(t.Context(), rule, "s"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	err := l.Allow(t.Context(), rule, "s")
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.KindRateLimited || fe.RetryAfter != 120 {
		t.Fatalf("4th call: %v (retryAfter %v)", err, fe)
	}
	if err := l.Allow(t.Context(), rule, "other"); err != nil {
		t.Fatalf("other subject limited: %v", err)
	}
	if n, err := l.Count(t.Context(), rule, "s"); err != nil || n != 3 {
		t.Fatalf("count %d %v", n, err)
	}
	env.Clock.Advance(2 * time.Minute)
	if err := l.Allow(t.Context(), rule, "s"); err != nil {
		t.Fatalf("a refilled cell: %v", err)
	}
	if err := l.Allow(t.Context(), rule, "s"); err == nil {
		t.Fatal("one cell refilled, two taken")
	}
	env.Clock.Advance(6 * time.Minute)
	if n, err := l.Count(t.Context(), rule, "s"); err != nil || n != 0 {
		t.Fatalf("count after the window %d %v", n, err)
	}
}

// No split across a clock boundary passes more than Limit events in a window:
// 4 just before a 15-minute boundary and 4 just after, with a limit of 5.
func TestNoBoundaryToSplitAcross(t *testing.T) {
	env := testenv.New(t)
	env.Clock.Set(time.Date(2026, 11, 1, 9, 14, 50, 0, time.UTC))
	l := ratelimit.Limiter{St: env.Store, Clock: env.Clock}
	rule := ratelimit.Rule{Name: "b", Limit: 5, Window: 15 * time.Minute}
	allowed := 0
	for i := 0; i < 8; i++ {
		if i == 4 {
			env.Clock.Advance(20 * time.Second) // 09:15:10, past the boundary
		}
		if l.Allow(t.Context(), rule, "s") == nil {
			allowed++
		}
	}
	if allowed != 5 {
		t.Fatalf("%d of 8 allowed within 20 seconds, want 5", allowed)
	}
}

func TestConcurrentCallersShareTheLimitExactly(t *testing.T) {
	env := testenv.New(t)
	l := ratelimit.Limiter{St: env.Store, Clock: env.Clock}
	rule := ratelimit.Rule{Name: "c", Limit: 7, Window: time.Hour}
	var wg sync.WaitGroup
	var mu sync.Mutex
	allowed, limited := 0, 0
	for i := 0; i < 25; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := l.Allow(t.Context(), rule, "shared")
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				allowed++
			case errors.Is(err, fault.ErrRateLimited):
				limited++
			default:
				t.Errorf("unexpected: %v", err)
			}
		}()
	}
	wg.Wait()
	if allowed != 7 || limited != 18 {
		t.Fatalf("allowed %d, limited %d", allowed, limited)
	}
}

func TestHashHidesPersonalData(t *testing.T) {
	h := ratelimit.Hash("alice@example.com")
	if len(h) != 32 || h == ratelimit.Hash("bob@example.com") || h != ratelimit.Hash("alice@example.com") {
		t.Fatalf("hash %q", h)
	}
	if ratelimit.Hash("a", "bc") == ratelimit.Hash("ab", "c") {
		t.Fatal("parts are not separated")
	}
}
