package store_test

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/testenv"
)

// The contract suite of the store, run against the emulator (no mocked DynamoDB).

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

type thing struct {
	store.Keys
	Name   string `dynamodbav:"name"`
	Status string `dynamodbav:"status,omitempty"`
}

func newStore(t *testing.T) (*store.Store, *testenv.Env) {
	t.Helper()
	env := testenv.New(t)
	return env.Store, env
}

func rec(pk, sk, name string) thing {
	return thing{Keys: store.Keys{PK: pk, SK: sk}, Name: name}
}

func TestGetMissingIsNotFound(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	var got thing
	err := st.Get(context.Background(), "ORG#a", "THING#missing", &got)
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get missing: err = %v, want store.ErrNotFound", err)
	}
	if !errors.Is(err, fault.ErrNotFound) {
		t.Fatalf("Get missing: err = %v, want it to match fault.ErrNotFound", err)
	}
}

func TestPutGetRoundTrip(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	in := rec("ORG#a", "THING#1", "first")
	if err := st.Do(ctx, store.PutNew(in)); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "THING#1", &got); err != nil {
		t.Fatal(err)
	}
	if got != in {
		t.Fatalf("Get = %+v, want %+v", got, in)
	}
}

func TestPutNewTwiceIsConflict(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	if err := st.Do(ctx, store.PutNew(rec("ORG#a", "THING#1", "first"))); err != nil {
		t.Fatal(err)
	}
	err := st.Do(ctx, store.PutNew(rec("ORG#a", "THING#1", "second")))
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("second PutNew: err = %v, want store.ErrConditionFailed", err)
	}
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("second PutNew: err = %v, want it to match fault.ErrConflict", err)
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "THING#1", &got); err != nil || got.Name != "first" {
		t.Fatalf("after conflict: got %+v, %v; want the first write kept", got, err)
	}
}

// race runs f from n goroutines released at once and counts the nil results;
// every non-nil result must be a condition failure.
func race(t *testing.T, n int, f func(i int) error) int {
	t.Helper()
	var wg sync.WaitGroup
	var mu sync.Mutex
	start := make(chan struct{})
	wins := 0
	var others []error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			err := f(i)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				wins++
			case !errors.Is(err, store.ErrConditionFailed):
				others = append(others, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	for _, err := range others {
		t.Errorf("loser failed with %v, want store.ErrConditionFailed", err)
	}
	return wins
}

func TestConcurrentPutNewHasOneWinner(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	wins := race(t, 30, func(i int) error {
		return st.Do(ctx, store.PutNew(rec("EMAIL#race@example.com", "EMAIL", fmt.Sprint("writer-", i))))
	})
	if wins != 1 {
		t.Fatalf("%d of 30 concurrent PutNew won, want exactly 1", wins)
	}
}

func TestConcurrentCompareAndSwapHasOneWinner(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	item := rec("ORG#a", "REQ#1", "request")
	item.Status = "pending"
	if err := st.Do(ctx, store.PutNew(item)); err != nil {
		t.Fatal(err)
	}
	wins := race(t, 30, func(i int) error {
		return st.Do(ctx, store.Change("ORG#a", "REQ#1", expression.Set(expression.Name("status"), expression.Value("approved")).
			Set(expression.Name("name"), expression.Value(fmt.Sprint("approver-", i)))).
			When(store.Is("status", "pending")).Exists())
	})
	if wins != 1 {
		t.Fatalf("%d of 30 concurrent compare-and-swap updates won, want exactly 1", wins)
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "REQ#1", &got); err != nil {
		t.Fatal(err)
	}
	if got.Status != "approved" {
		t.Fatalf("status = %q, want approved", got.Status)
	}
}

func TestUpdateOfMissingItemWithExistsFails(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	err := st.Do(context.Background(), store.Set("ORG#a", "REQ#missing", "name", "x").Exists())
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("update of a missing item with Exists: err = %v, want store.ErrConditionFailed", err)
	}
}

func TestUpdateReturn(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	if err := st.Do(ctx, store.PutNew(rec("ORG#a", "THING#1", "old"))); err != nil {
		t.Fatal(err)
	}
	var got thing
	err := st.UpdateReturn(ctx, store.Set("ORG#a", "THING#1", "name", "new").Exists(), &got)
	if err != nil || got.Name != "new" || got.PK != "ORG#a" {
		t.Fatalf("UpdateReturn = %+v, %v; want the updated item", got, err)
	}
}

func TestTxFailingCheckAppliesNothing(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	for _, sk := range []string{"THING#existing", "THING#doomed"} {
		if err := st.Do(ctx, store.PutNew(rec("ORG#a", sk, "before"))); err != nil {
			t.Fatal(err)
		}
	}
	tx := (&store.Tx{}).Add(
		store.PutNew(rec("ORG#a", "THING#new", "new")),
		store.Set("ORG#a", "THING#existing", "name", "after"),
		store.Assert("ORG#a", "THING#absent", store.Present()),
		store.Delete("ORG#a", "THING#doomed").When(store.Present()),
	)
	err := st.Commit(ctx, tx)
	var te *store.TxError
	if !errors.As(err, &te) {
		t.Fatalf("Commit: err = %v (%T), want *store.TxError", err, err)
	}
	if !te.FailedAt(2) {
		t.Fatalf("TxError.Failed = %v, want index 2 (the check)", te.Failed)
	}
	if te.FailedAt(0) || te.FailedAt(1) || te.FailedAt(3) {
		t.Fatalf("TxError.Failed = %v, want only index 2", te.Failed)
	}
	if !errors.Is(err, store.ErrConditionFailed) || !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("TxError %v does not match ErrConditionFailed and fault.ErrConflict", err)
	}
	// The edge must see a conflict, not an internal error.
	if fe, ok := fault.As(err); !ok || fe.Kind != fault.KindConflict {
		t.Fatalf("fault.As(TxError) = %v, %v; want a conflict for the edge", fe, ok)
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "THING#new", &got); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("put of a cancelled transaction applied: %+v, %v", got, err)
	}
	if err := st.Get(ctx, "ORG#a", "THING#existing", &got); err != nil || got.Name != "before" {
		t.Fatalf("update of a cancelled transaction applied: %+v, %v", got, err)
	}
	if err := st.Get(ctx, "ORG#a", "THING#doomed", &got); err != nil {
		t.Fatalf("delete of a cancelled transaction applied: %v", err)
	}
}

func TestTxSucceeds(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	if err := st.Do(ctx, store.PutNew(rec("ORG#a", "THING#existing", "before"))); err != nil {
		t.Fatal(err)
	}
	tx := (&store.Tx{}).Add(
		store.PutNew(rec("ORG#a", "THING#new", "new")),
		nil, // optional parts may be nil
		store.Assert("ORG#a", "THING#existing", store.Present()),
	)
	if tx.Len() != 2 {
		t.Fatalf("Len = %d, want 2 (nil skipped)", tx.Len())
	}
	if err := st.Commit(ctx, tx); err != nil {
		t.Fatal(err)
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "THING#new", &got); err != nil {
		t.Fatal(err)
	}
}

func TestTxOfOneWrite(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	if err := st.Commit(ctx, (&store.Tx{}).Add(store.PutNew(rec("ORG#a", "THING#1", "x")))); err != nil {
		t.Fatal(err)
	}
	err := st.Commit(ctx, (&store.Tx{}).Add(store.PutNew(rec("ORG#a", "THING#1", "y"))))
	var te *store.TxError
	if !errors.As(err, &te) || !te.FailedAt(0) {
		t.Fatalf("one-write Commit conflict: err = %v (%T), want *store.TxError failed at 0", err, err)
	}
	// A lone check is a valid transaction too.
	if err := st.Commit(ctx, (&store.Tx{}).Add(store.Assert("ORG#a", "THING#1", store.Present()))); err != nil {
		t.Fatalf("lone passing check: %v", err)
	}
	err = st.Commit(ctx, (&store.Tx{}).Add(store.Assert("ORG#a", "THING#2", store.Present())))
	if !errors.As(err, &te) || !te.FailedAt(0) {
		t.Fatalf("lone failing check: err = %v (%T), want *store.TxError failed at 0", err, err)
	}
}

func TestTxOverLimitIsRefused(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx, calls := store.WithCalls(context.Background())
	tx := &store.Tx{}
	for i := range store.MaxTxItems + 1 {
		tx.Add(store.PutNew(rec("ORG#a", fmt.Sprintf("THING#%03d", i), "x")))
	}
	if err := st.Commit(ctx, tx); err == nil {
		t.Fatalf("Commit of %d writes succeeded, want it refused", tx.Len())
	}
	if calls.N() != 0 {
		t.Fatalf("refused transaction made %d DynamoDB calls, want 0", calls.N())
	}
	var got thing
	if err := st.Get(context.Background(), "ORG#a", "THING#000", &got); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("refused transaction wrote an item: %v", err)
	}
	// Exactly the limit is accepted.
	tx = &store.Tx{}
	for i := range store.MaxTxItems {
		tx.Add(store.PutNew(rec("ORG#b", fmt.Sprintf("THING#%03d", i), "x")))
	}
	if err := st.Commit(context.Background(), tx); err != nil {
		t.Fatalf("Commit of %d writes: %v", store.MaxTxItems, err)
	}
}

func TestExpiredItemsAreHidden(t *testing.T) {
	t.Parallel()
	st, env := newStore(t)
	ctx := context.Background()
	now := env.Clock.Now()
	short := rec("ORG#a", "CHALLENGE#short", "short")
	short.TTL = store.TTL(now.Add(time.Minute))
	long := rec("ORG#a", "CHALLENGE#long", "long")
	long.TTL = store.TTL(now.Add(time.Hour))
	forever := rec("ORG#a", "CHALLENGE#forever", "forever")
	for _, it := range []thing{short, long, forever} {
		if err := st.Do(ctx, store.PutNew(it)); err != nil {
			t.Fatal(err)
		}
	}
	var got thing
	if err := st.Get(ctx, "ORG#a", "CHALLENGE#short", &got); err != nil {
		t.Fatalf("live item: %v", err)
	}

	env.Clock.Advance(2 * time.Minute)
	if err := st.Get(ctx, "ORG#a", "CHALLENGE#short", &got); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired item: err = %v, want store.ErrNotFound", err)
	}
	items, err := st.All(ctx, store.Query{PK: "ORG#a", SKPrefix: "CHALLENGE#"})
	if err != nil {
		t.Fatal(err)
	}
	if names := names(t, items); fmt.Sprint(names) != "[forever long]" {
		t.Fatalf("All after expiry = %v, want [forever long]", names)
	}
	page, err := st.Page(ctx, store.Query{PK: "ORG#a", SKPrefix: "CHALLENGE#"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if names := names(t, page.Items); fmt.Sprint(names) != "[forever long]" {
		t.Fatalf("Page after expiry = %v, want [forever long]", names)
	}
	// Exactly at the ttl second the item is gone.
	env.Clock.Set(time.Unix(long.TTL, 0))
	if err := st.Get(ctx, "ORG#a", "CHALLENGE#long", &got); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("item at its ttl: err = %v, want store.ErrNotFound", err)
	}
}

func names(t *testing.T, items []store.Item) []string {
	t.Helper()
	var out []string
	for _, it := range items {
		var th thing
		if err := store.Unmarshal(it, &th); err != nil {
			t.Fatal(err)
		}
		out = append(out, th.Name)
	}
	return out
}

func TestAllAndAllInto(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	for i := range 5 {
		if err := st.Do(ctx, store.PutNew(rec("ORG#a", fmt.Sprintf("THING#%d", i), fmt.Sprint(i)))); err != nil {
			t.Fatal(err)
		}
	}
	// Another tenant's and another prefix's rows never appear.
	if err := st.Do(ctx, store.PutNew(rec("ORG#b", "THING#0", "other tenant"))); err != nil {
		t.Fatal(err)
	}
	if err := st.Do(ctx, store.PutNew(rec("ORG#a", "SITE#0", "other prefix"))); err != nil {
		t.Fatal(err)
	}
	var got []thing
	if err := st.AllInto(ctx, store.Query{PK: "ORG#a", SKPrefix: "THING#", Descending: true}, &got); err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, g := range got {
		ns = append(ns, g.Name)
	}
	if fmt.Sprint(ns) != "[4 3 2 1 0]" {
		t.Fatalf("AllInto descending = %v, want [4 3 2 1 0]", ns)
	}
	items, err := st.All(ctx, store.Query{PK: "ORG#a", SKFrom: "THING#1", SKTo: "THING#3"})
	if err != nil {
		t.Fatal(err)
	}
	if n := names(t, items); fmt.Sprint(n) != "[1 2 3]" {
		t.Fatalf("All between = %v, want [1 2 3]", n)
	}
}

func TestPageWalksPartitionAndBindsCursor(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	const n = 7
	for i := range n {
		for _, pk := range []string{"ORG#a", "ORG#b"} {
			if err := st.Do(ctx, store.PutNew(rec(pk, fmt.Sprintf("THING#%02d", i), pk+fmt.Sprint(i)))); err != nil {
				t.Fatal(err)
			}
		}
	}
	qa := store.Query{PK: "ORG#a", SKPrefix: "THING#", Limit: 3}
	var seen []string
	cursor, pages := "", 0
	var cursorA string
	for {
		res, err := st.Page(ctx, qa, cursor)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		seen = append(seen, names(t, res.Items)...)
		if res.Next == "" {
			break
		}
		if cursorA == "" {
			cursorA = res.Next
		}
		cursor = res.Next
		if pages > n {
			t.Fatal("Page does not terminate")
		}
	}
	want := []string{"ORG#a0", "ORG#a1", "ORG#a2", "ORG#a3", "ORG#a4", "ORG#a5", "ORG#a6"}
	if fmt.Sprint(seen) != fmt.Sprint(want) {
		t.Fatalf("walk = %v, want %v", seen, want)
	}

	// A cursor of partition A is refused on partition B: 400 naming "cursor".
	_, err := st.Page(ctx, store.Query{PK: "ORG#b", SKPrefix: "THING#", Limit: 3}, cursorA)
	assertCursorError(t, err)
	// Same partition but another index is another list too.
	_, err = st.Page(ctx, store.Query{Index: store.GSI1, PK: "ORG#a", Limit: 3}, cursorA)
	assertCursorError(t, err)
	// Cursors are opaque but not secret: a hand-made one is refused, never a 500,
	// and never reads outside the query's partition.
	for _, bad := range []string{
		"not base64!",
		b64(`{}`),
		b64(`{"p":"|ORG#a"}`),
		b64(`{"p":"|ORG#a","k":{"PK":"ORG#b","SK":"THING#01"}}`),
		b64(`{"p":"|ORG#a","k":{"PK":"ORG#a"}}`),
		b64(`{"p":"|ORG#a","k":{"PK":"ORG#a","SK":"THING#01","GSI1PK":"x"}}`),
	} {
		_, err = st.Page(ctx, qa, bad)
		assertCursorError(t, err)
	}
}

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func assertCursorError(t *testing.T, err error) {
	t.Helper()
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.KindValidation {
		t.Fatalf("err = %v, want a validation error", err)
	}
	d, _ := fe.Details.(map[string]any)
	fields, _ := d["fieldErrors"].(map[string][]string)
	if _, ok := fields["cursor"]; !ok {
		t.Fatalf("validation error %v does not name cursor (details %v)", err, fe.Details)
	}
}

func TestCallCounting(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx, calls := store.WithCalls(context.Background())
	if store.CallsFrom(ctx) != calls {
		t.Fatal("CallsFrom does not return the counter of WithCalls")
	}
	if store.CallsFrom(context.Background()) != nil {
		t.Fatal("CallsFrom of a bare context is not nil")
	}
	var got thing
	_ = st.Get(ctx, "ORG#a", "THING#1", &got)
	if err := st.Do(ctx, store.PutNew(rec("ORG#a", "THING#1", "x"))); err != nil {
		t.Fatal(err)
	}
	if calls.N() != 2 {
		t.Fatalf("1 Get + 1 Put counted %d calls, want 2", calls.N())
	}
	// A failed conditional write is still one call; a query of one page is one.
	_ = st.Do(ctx, store.PutNew(rec("ORG#a", "THING#1", "x")))
	if _, err := st.All(ctx, store.Query{PK: "ORG#a"}); err != nil {
		t.Fatal(err)
	}
	if err := st.Commit(ctx, (&store.Tx{}).Add(
		store.PutNew(rec("ORG#a", "THING#2", "x")), store.PutNew(rec("ORG#a", "THING#3", "x")))); err != nil {
		t.Fatal(err)
	}
	if calls.N() != 5 {
		t.Fatalf("counted %d calls, want 5", calls.N())
	}
	// Calls made with another context are not counted here.
	_ = st.Get(context.Background(), "ORG#a", "THING#1", &got)
	if calls.N() != 5 {
		t.Fatalf("a call without the counting context was counted: %d", calls.N())
	}
}

func TestPing(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	if err := st.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	missing := store.New(st.DB, "no-such-table-"+fmt.Sprint(time.Now().UnixNano()), st.Clock)
	if err := missing.Ping(context.Background()); err == nil {
		t.Fatal("Ping of a missing table succeeded")
	}
}

func TestCreateTableIsIdempotent(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	if err := store.CreateTable(context.Background(), st.DB, st.Table); err != nil {
		t.Fatalf("second CreateTable: %v", err)
	}
}

func TestPageOnIndex(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	for i := range 5 {
		it := rec(fmt.Sprintf("USER#%d", i), "MEMBER#org#a", fmt.Sprint(i))
		it.GSI1PK, it.GSI1SK = "org#a", fmt.Sprintf("MEMBER#%d", i)
		if err := st.Do(ctx, store.PutNew(it)); err != nil {
			t.Fatal(err)
		}
	}
	q := store.Query{Index: store.GSI1, PK: "org#a", SKPrefix: "MEMBER#", Limit: 2}
	var seen []string
	cursor := ""
	for range 10 {
		res, err := st.Page(ctx, q, cursor)
		if err != nil {
			t.Fatal(err)
		}
		seen = append(seen, names(t, res.Items)...)
		if cursor = res.Next; cursor == "" {
			break
		}
	}
	if fmt.Sprint(seen) != "[0 1 2 3 4]" {
		t.Fatalf("index walk = %v, want [0 1 2 3 4]", seen)
	}
}

func TestBatchGet(t *testing.T) {
	t.Parallel()
	st, env := newStore(t)
	ctx := context.Background()
	live := rec("ORG#a", "THING#live", "live")
	gone := rec("ORG#a", "THING#gone", "gone")
	gone.TTL = store.TTL(env.Clock.Now().Add(-time.Second))
	for _, it := range []thing{live, gone} {
		if err := st.Do(ctx, store.PutNew(it)); err != nil {
			t.Fatal(err)
		}
	}
	cctx, calls := store.WithCalls(ctx)
	got, err := st.BatchGet(cctx,
		store.KeyRef{PK: "ORG#a", SK: "THING#live"}, store.KeyRef{PK: "ORG#a", SK: "THING#live"},
		store.KeyRef{PK: "ORG#a", SK: "THING#gone"}, store.KeyRef{PK: "ORG#a", SK: "THING#missing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["ORG#a|THING#live"] == nil {
		t.Fatalf("BatchGet = %v, want only the live item", got)
	}
	if calls.N() != 1 {
		t.Fatalf("BatchGet made %d calls, want 1", calls.N())
	}
}

func TestBatchGetChunksAt100(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	refs := make([]store.KeyRef, 0, 250)
	for i := range 250 {
		sk := fmt.Sprintf("THING#%03d", i)
		if i%2 == 0 { // half exist
			if err := st.Do(ctx, store.PutNew(rec("ORG#a", sk, sk))); err != nil {
				t.Fatal(err)
			}
		}
		refs = append(refs, store.KeyRef{PK: "ORG#a", SK: sk})
	}
	cctx, calls := store.WithCalls(ctx)
	got, err := st.BatchGet(cctx, refs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 125 {
		t.Fatalf("BatchGet of 250 keys found %d items, want 125", len(got))
	}
	for i := 0; i < 250; i += 2 {
		if got[fmt.Sprintf("ORG#a|THING#%03d", i)] == nil {
			t.Fatalf("item %d missing", i)
		}
	}
	if calls.N() != 3 {
		t.Fatalf("BatchGet of 250 keys made %d calls, want 3", calls.N())
	}
}

func TestExpressionBuilders(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	if err := st.Do(ctx, store.PutNew(thing{Keys: store.Keys{PK: "ORG#a", SK: "THING#1"}, Name: "one", Status: "pending"})); err != nil {
		t.Fatal(err)
	}
	move := func(from, to string) error {
		return st.Do(ctx, store.Change("ORG#a", "THING#1", expression.Set(expression.Name("status"), expression.Value(to))).
			When(store.Is("status", from)).Exists())
	}
	if err := move("pending", "active"); err != nil {
		t.Fatal(err)
	}
	if err := move("pending", "active"); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("second move: err = %v, want ErrConditionFailed", err)
	}
	if err := st.Do(ctx, store.Change("ORG#a", "THING#none", expression.Set(expression.Name("status"), expression.Value("x"))).Exists()); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("update of missing item: err = %v, want ErrConditionFailed", err)
	}
	var got thing
	if err := st.UpdateReturn(ctx, store.Change("ORG#a", "THING#1", expression.Set(expression.Name("name"), expression.Value("uno"))), &got); err != nil || got.Name != "uno" || got.Status != "active" {
		t.Fatalf("UpdateReturn = %+v, %v", got, err)
	}
	if err := st.Do(ctx, store.Put(rec("ORG#a", "THING#2", "two"))); err != nil {
		t.Fatal(err)
	}
	where := store.Is("status", "active")
	items, err := st.All(ctx, store.Query{PK: "ORG#a", SKPrefix: "THING#", Where: &where})
	if err != nil || len(items) != 1 {
		t.Fatalf("filtered query = %d items, %v; want 1", len(items), err)
	}
}

func TestTxFailureIsNamedByHandle(t *testing.T) {
	t.Parallel()
	st, _ := newStore(t)
	ctx := context.Background()
	for _, sk := range []string{"THING#taken", "THING#other"} {
		if err := st.Do(ctx, store.PutNew(rec("ORG#a", sk, sk))); err != nil {
			t.Fatal(err)
		}
	}
	tx := &store.Tx{}
	fresh := tx.Include(store.PutNew(rec("ORG#a", "THING#fresh", "fresh")))
	check := tx.Include(store.Assert("ORG#a", "THING#other", store.Present()))
	dup := tx.Include(store.PutNew(rec("ORG#a", "THING#taken", "again")))
	err := st.Commit(ctx, tx)
	var te *store.TxError
	if !errors.As(err, &te) {
		t.Fatalf("Commit: err = %v, want *TxError", err)
	}
	if !errors.Is(err, fault.ErrConflict) {
		t.Fatalf("Commit: err = %v, want it to match fault.ErrConflict", err)
	}
	if !te.FailedOn(dup) {
		t.Fatal("FailedOn(dup) = false")
	}
	// Emulators that give no reasons make every handle report failure; DynamoDB
	// and moto give them, so the others are clear.
	if te.FailedOn(fresh) || te.FailedOn(check) {
		t.Fatal("FailedOn names a write that did not fail")
	}
	// A lone write commits as a plain conditional write and keeps its handle.
	one := &store.Tx{}
	h := one.Include(store.PutNew(rec("ORG#a", "THING#taken", "again")))
	if err := st.Commit(ctx, one); !errors.As(err, &te) || !te.FailedOn(h) {
		t.Fatalf("lone write: err = %v, want TxError failing on its handle", err)
	}
}
