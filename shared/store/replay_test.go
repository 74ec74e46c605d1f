package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Issue 19 finding 4: on DynamoDB a retried single-item write whose first
// answer was lost meets its own effect: a create answered 409 for the row it
// made, a counter counted twice. Replaying each write with the token of its
// first attempt (what an SDK retry is) must answer success and apply once.
// Not parallel: it replaces the token generator.
func TestReplayedWriteIsRecognisedAndAppliesOnce(t *testing.T) {
	st, _ := newStore(t)
	ctx := t.Context()
	type counter struct {
		store.Keys
		Version int `dynamodbav:"version"`
		N       int `dynamodbav:"n"`
	}
	replay := func(name string, w func() error) {
		t.Helper()
		restore := store.SetToken("attempt-" + name)
		defer restore()
		if err := w(); err != nil {
			t.Fatalf("%s, first attempt: %v", name, err)
		}
		if err := w(); err != nil {
			t.Fatalf("%s, the retry of an applied write: %v, want success", name, err)
		}
	}
	replay("create", func() error {
		return st.Do(ctx, store.PutNew(counter{Keys: store.Keys{PK: "LOST", SK: "x"}, Version: 1}))
	})
	cas := func() error {
		return st.Do(ctx, store.Change("LOST", "x", expression.Set(expression.Name("version"), expression.Value(2)).
			Add(expression.Name("n"), expression.Value(1))).When(store.Is("version", 1)))
	}
	replay("compare-and-swap", cas)
	add := func() error {
		return st.Do(ctx, store.Change("LOST", "x", expression.Add(expression.Name("n"), expression.Value(10))))
	}
	replay("unconditional counter", add)
	var got counter
	if err := st.Get(ctx, "LOST", "x", &got); err != nil {
		t.Fatal(err)
	}
	if got.Version != 2 || got.N != 11 {
		t.Fatalf("after replays: version %d, n %d; want 2 and 11 (each write once)", got.Version, got.N)
	}
	var ret counter
	replay("update returning", func() error {
		return st.UpdateReturn(ctx, store.Change("LOST", "x", expression.Add(expression.Name("n"), expression.Value(100))), &ret)
	})
	if ret.N != 111 {
		t.Fatalf("a recognised retry answered n = %d, want the item as the write left it (111)", ret.N)
	}
	// Another writer's attempt is not mistaken for ours.
	if err := st.Do(ctx, store.PutNew(counter{Keys: store.Keys{PK: "LOST", SK: "x"}})); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("a second create: %v, want a failed condition", err)
	}
	if err := cas(); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("a stale compare-and-swap: %v, want a failed condition", err)
	}
}

// A take whose answer was lost and that the SDK retries is still the one
// taker: it gets the item, and a second taker still gets ErrNotFound. A
// conditional delete would have answered its own retry "not found" (the
// exchange code of an SSO sign-in refused once in a few thousand under load).
// Not parallel: it replaces the token generator.
func TestReplayedTakeIsStillTheTaker(t *testing.T) {
	st, env := newStore(t)
	ctx := t.Context()
	type code struct {
		store.Keys
		UserID string `dynamodbav:"userId"`
	}
	if err := st.Do(ctx, store.PutNew(code{Keys: store.Keys{PK: "TAKE", SK: "x", TTL: store.TTL(env.Clock.Now().Add(time.Hour))}, UserID: "u1"})); err != nil {
		t.Fatal(err)
	}
	restore := store.SetToken("take-attempt")
	var first, retry code
	if err := st.Take(ctx, "TAKE", "x", &first); err != nil || first.UserID != "u1" {
		t.Fatalf("first attempt: %v %+v", err, first)
	}
	if err := st.Take(ctx, "TAKE", "x", &retry); err != nil || retry.UserID != "u1" {
		t.Fatalf("the retry of an applied take: %v %+v, want the item", err, retry)
	}
	restore()
	var other code
	if err := st.Take(ctx, "TAKE", "x", &other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another taker after the take: %v, want ErrNotFound", err)
	}
}
