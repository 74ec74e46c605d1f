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

func TestFixedWindowWithRetryAfter(t *testing.T) {
	env := testenv.New(t)
	env.Clock.Set(time.Date(2026, 11, 1, 9, 2, 30, 0, time.UTC)) // 2.5 minutes into a 5-minute window
	l := ratelimit.Limiter{St: env.Store, Clock: env.Clock}
	rule := ratelimit.Rule{Name: "t", Limit: 3, Window: 5 * time.Minute}
	for i := 0; i < 3; i++ {
		if err := l.Allow(t.Context(), rule, "s"); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	err := l.Allow(t.Context(), rule, "s")
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.KindRateLimited || fe.RetryAfter != 150 {
		t.Fatalf("4th call: %v (retryAfter %v)", err, fe)
	}
	if err := l.Allow(t.Context(), rule, "other"); err != nil {
		t.Fatalf("other subject limited: %v", err)
	}
	env.Clock.Advance(150 * time.Second)
	if err := l.Allow(t.Context(), rule, "s"); err != nil {
		t.Fatalf("new window: %v", err)
	}
	if n, err := l.Count(t.Context(), rule, "s"); err != nil || n != 1 {
		t.Fatalf("count %d %v", n, err)
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
