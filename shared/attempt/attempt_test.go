package attempt_test

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/attempt"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var rule = attempt.Rule{Name: "t", Limit: 5, Window: 15 * time.Minute}

// take counts one attempt and reports whether it was admitted.
func take(t *testing.T, c attempt.Counter, subject string) (attempt.Try, bool) {
	t.Helper()
	tr, err := c.Take(t.Context(), rule, subject)
	if errors.Is(err, attempt.ErrLocked) {
		return attempt.Try{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return tr, true
}

// Five failures lock for 15 minutes after the last; the count then starts over.
func TestLockLastsAWindowAfterTheLastFailure(t *testing.T) {
	env := testenv.New(t)
	c := attempt.Counter{St: env.Store, Clock: env.Clock}
	for i := 0; i < 5; i++ {
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("attempt %d refused", i)
		}
		env.Clock.Advance(time.Minute)
	}
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("sixth attempt admitted")
	}
	if _, ok := take(t, c, "other"); !ok {
		t.Fatal("another subject locked")
	}
	env.Clock.Advance(rule.Window - 2*time.Minute) // 14 minutes after the fifth
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("admitted within the window after the fifth failure")
	}
	env.Clock.Advance(2 * time.Minute)
	for i := 0; i < 5; i++ { // the expired row is reset by the first, then counts
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("after the lock, attempt %d refused", i)
		}
	}
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("a sixth attempt after the reset was admitted")
	}
}

// One attempt, four 14 minutes later, then one just after the first one's 15
// minutes: still locked (a window started by the first attempt would have
// let five more through from there).
func TestNoBoundarySplitsTheCount(t *testing.T) {
	env := testenv.New(t)
	c := attempt.Counter{St: env.Store, Clock: env.Clock}
	take(t, c, "s")
	env.Clock.Advance(14 * time.Minute)
	for i := 0; i < 4; i++ {
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("attempt %d refused", i+1)
		}
	}
	env.Clock.Advance(time.Minute + time.Second) // 15 minutes after the first
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("admitted past the first attempt's window: the count was split")
	}
}

// 50 concurrent attempts: exactly Limit admitted; refunds let as many more in.
func TestConcurrentAttemptsAdmitAtMostLimit(t *testing.T) {
	env := testenv.New(t)
	c := attempt.Counter{St: env.Store, Clock: env.Clock}
	var admitted atomic.Int64
	var mu sync.Mutex
	var tries []attempt.Try
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tr, err := c.Take(t.Context(), rule, "s")
			if errors.Is(err, attempt.ErrLocked) {
				return
			}
			if err != nil {
				t.Error(err)
				return
			}
			admitted.Add(1)
			mu.Lock()
			tries = append(tries, tr)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if n := admitted.Load(); n != int64(rule.Limit) {
		t.Fatalf("%d admitted, want %d", n, rule.Limit)
	}
	// Two successes: each takes its own count back, once.
	for _, tr := range tries[:2] {
		if err := env.Store.Do(t.Context(), tr.Refund()); err != nil {
			t.Fatal(err)
		}
		if err := env.Store.Do(t.Context(), tr.Refund()); !errors.Is(err, store.ErrConditionFailed) {
			t.Fatalf("second refund: %v", err)
		}
	}
	for i := 0; i < 2; i++ {
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("attempt %d after two refunds refused", i)
		}
	}
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("admitted a third after two refunds")
	}
}

// A count whose answer was lost and is sent again (same token) is admitted
// and counted once.
func TestLostAnswerCountsOnce(t *testing.T) {
	env := testenv.New(t)
	c := attempt.Counter{St: env.Store, Clock: env.Clock}
	tok := "same"
	defer attempt.SetToken(func() string { return tok })()
	for i := 0; i < 3; i++ { // the same write, three times
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("send %d refused", i)
		}
	}
	for i := 0; i < 4; i++ { // four more fit: the three sends counted one
		tok = fmt.Sprint("t", i)
		if _, ok := take(t, c, "s"); !ok {
			t.Fatalf("attempt %d refused: a resent count counted again", i+2)
		}
	}
	tok = "last"
	if _, ok := take(t, c, "s"); ok {
		t.Fatal("a sixth admitted")
	}
}
