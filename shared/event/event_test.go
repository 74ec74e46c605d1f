package event_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const grace = 30 * time.Second

type thing struct {
	store.Keys
	Name string `dynamodbav:"name"`
}

// receive drains what the queue holds (testenv.Receive) and answers the
// bodies.
func receive(t *testing.T, env *testenv.Env) []string {
	t.Helper()
	url := env.Resources.Queues["events"].URL
	var bodies []string
	for {
		msgs := testenv.Receive(t, env.SQS, url, 0)
		if len(msgs) == 0 {
			return bodies
		}
		for _, m := range msgs {
			bodies = append(bodies, aws.ToString(m.Body))
			if _, err := env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// outbox reads every shard of the outbox.
func outbox(t *testing.T, env *testenv.Env) []store.Item {
	t.Helper()
	var all []store.Item
	for i := range event.Shards {
		items, err := env.Store.All(context.Background(), store.Query{PK: event.ShardPK(i)})
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
	}
	return all
}

func TestCommitWithFailedConditionRaisesNothing(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	ev, err := event.New(env.Clock, "device.enrolled", "org-1", map[string]string{"deviceId": "d-1"})
	if err != nil {
		t.Fatal(err)
	}
	tx := (&store.Tx{}).Add(
		store.PutNew(thing{Keys: store.Keys{PK: "ORG#org-1", SK: "DEVICE#d-1"}, Name: "d"}),
		store.Assert("ORG#org-1", "ORG", store.Present()), // the organization does not exist
	)
	err = env.Events.Commit(ctx, tx, ev)
	if !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("Commit: err = %v, want a condition failure", err)
	}
	if got := receive(t, env); len(got) != 0 {
		t.Fatalf("a change that did not commit raised %d events: %v", len(got), got)
	}
	if got := outbox(t, env); len(got) != 0 {
		t.Fatalf("a change that did not commit left %d outbox items", len(got))
	}
	var d thing
	if err := env.Store.Get(ctx, "ORG#org-1", "DEVICE#d-1", &d); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the change itself was applied: %v", err)
	}
}

func TestCommitSendsEvent(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	ev, err := event.New(env.Clock, "device.enrolled", "org-1", map[string]string{"deviceId": "d-1"})
	if err != nil {
		t.Fatal(err)
	}
	tx := (&store.Tx{}).Add(store.PutNew(thing{Keys: store.Keys{PK: "ORG#org-1", SK: "DEVICE#d-1"}, Name: "d"}))
	if err := env.Events.Commit(ctx, tx, ev); err != nil {
		t.Fatal(err)
	}
	got := receive(t, env)
	if len(got) != 1 {
		t.Fatalf("received %d events, want 1: %v", len(got), got)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(got[0]), &body); err != nil {
		t.Fatalf("event body is not JSON: %v", err)
	}
	want := map[string]any{
		"id": ev.Event.ID, "type": "device.enrolled", "timestamp": "2026-11-01T09:00:00.000Z",
		"orgId": "org-1", "data": map[string]any{"deviceId": "d-1"},
	}
	if b, w := mustJSON(body), mustJSON(want); b != w {
		t.Fatalf("event body = %s, want %s", b, w)
	}
	if items := outbox(t, env); len(items) != 0 {
		t.Fatalf("sent event left %d outbox items", len(items))
	}
}

func TestRaiseAlone(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	a, _ := event.New(env.Clock, "user.login", "org-1", nil)
	b, _ := event.New(env.Clock, "user.logout", "org-1", nil)
	if err := env.Events.Raise(context.Background(), a, b); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, env); len(got) != 2 {
		t.Fatalf("received %d events, want 2", len(got))
	}
}

func TestFailedSendIsDrainedLater(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	broken := &event.Publisher{Store: env.Store, SQS: env.SQS,
		QueueURL: env.Resources.Queues["events"].URL + "-does-not-exist"}
	// Sub-second times make sure the outbox orders stamps as times, not as strings.
	env.Clock.Advance(500 * time.Millisecond)
	ev, _ := event.New(env.Clock, "device.enrolled", "org-1", map[string]string{"deviceId": "d-1"})
	tx := (&store.Tx{}).Add(store.PutNew(thing{Keys: store.Keys{PK: "ORG#org-1", SK: "DEVICE#d-1"}, Name: "d"}))
	if err := broken.Commit(ctx, tx, ev); err != nil {
		t.Fatalf("Commit with an unreachable queue: %v, want the change committed", err)
	}
	var d thing
	if err := env.Store.Get(ctx, "ORG#org-1", "DEVICE#d-1", &d); err != nil {
		t.Fatalf("change not committed: %v", err)
	}
	if items := outbox(t, env); len(items) != 1 {
		t.Fatalf("outbox holds %d items, want the unsent event", len(items))
	}
	if got := receive(t, env); len(got) != 0 {
		t.Fatalf("queue holds %d events before the drain", len(got))
	}

	// Within the grace period the drain leaves it to the request: the cutoff is
	// 0.5 s before the event (a stamp of whole seconds must still sort first).
	env.Clock.Set(testenv.Start.Add(grace))
	if n, err := env.Events.Drain(ctx, grace); err != nil || n != 0 {
		t.Fatalf("Drain within grace = %d, %v; want 0", n, err)
	}
	env.Clock.Advance(time.Second)
	n, err := env.Events.Drain(ctx, grace)
	if err != nil || n != 1 {
		t.Fatalf("Drain after grace = %d, %v; want 1", n, err)
	}
	got := receive(t, env)
	if len(got) != 1 {
		t.Fatalf("received %d events after the drain, want 1", len(got))
	}
	var body event.Event
	if err := json.Unmarshal([]byte(got[0]), &body); err != nil || body.ID != ev.Event.ID {
		t.Fatalf("drained body %s, want event %s", got[0], ev.Event.ID)
	}
	if items := outbox(t, env); len(items) != 0 {
		t.Fatalf("outbox holds %d items after the drain, want 0", len(items))
	}
	if n, err := env.Events.Drain(ctx, grace); err != nil || n != 0 {
		t.Fatalf("second Drain = %d, %v; want 0", n, err)
	}
}

// TestConcurrentDrainsSendEachEventOnce strands events in every shard, runs
// three drains at once, and checks that the queue receives each event exactly
// once and that a later drain finds nothing.
func TestConcurrentDrainsSendEachEventOnce(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	ctx := context.Background()
	broken := &event.Publisher{Store: env.Store, SQS: env.SQS,
		QueueURL: env.Resources.Queues["events"].URL + "-does-not-exist"}
	want := map[string]bool{}
	// Raise events in rounds of 32 until every shard holds at least one.
	for round := 0; ; round++ {
		if round == 10 {
			t.Fatalf("%d events did not cover all %d shards", len(want), event.Shards)
		}
		for range 32 {
			ev, err := event.New(env.Clock, "device.enrolled", "org-1", nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := broken.Raise(ctx, ev); err != nil {
				t.Fatal(err)
			}
			want[ev.Event.ID] = true
		}
		if emptyShards(t, env) == 0 {
			break
		}
	}
	if got := len(outbox(t, env)); got != len(want) {
		t.Fatalf("outbox holds %d items, want %d", got, len(want))
	}
	env.Clock.Advance(grace + time.Second)

	var wg sync.WaitGroup
	sent := make([]int, 3)
	errs := make([]error, 3)
	for i := range 3 {
		wg.Go(func() { sent[i], errs[i] = env.Events.Drain(ctx, grace) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("drain %d: %v", i, err)
		}
	}
	if total := sent[0] + sent[1] + sent[2]; total != len(want) {
		t.Fatalf("drains sent %v (total %d), want %d in all", sent, total, len(want))
	}
	seen := map[string]int{}
	for {
		bodies := receive(t, env)
		if len(bodies) == 0 {
			break
		}
		for _, b := range bodies {
			var ev event.Event
			if err := json.Unmarshal([]byte(b), &ev); err != nil {
				t.Fatal(err)
			}
			seen[ev.ID]++
		}
	}
	for id := range want {
		if seen[id] != 1 {
			t.Errorf("event %s received %d times, want 1", id, seen[id])
		}
	}
	if len(seen) != len(want) {
		t.Errorf("received %d distinct events, want %d", len(seen), len(want))
	}
	if items := outbox(t, env); len(items) != 0 {
		t.Fatalf("outbox holds %d items after the drains", len(items))
	}
	if n, err := env.Events.Drain(ctx, grace); err != nil || n != 0 {
		t.Fatalf("later drain = %d, %v; want 0", n, err)
	}
}

// emptyShards counts the outbox shards that hold no item.
func emptyShards(t *testing.T, env *testenv.Env) int {
	t.Helper()
	n := 0
	for i := range event.Shards {
		items, err := env.Store.All(context.Background(), store.Query{PK: event.ShardPK(i)})
		if err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			n++
		}
	}
	return n
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func TestNewRefusesTypesOutsideTheCatalogue(t *testing.T) {
	clk := clock.NewFake(testenv.Start)
	if _, err := event.New(clk, "device.created", "org-1", nil); err == nil {
		t.Fatal("an event type outside the catalogue was accepted")
	}
	if _, err := event.New(clk, "device.enrolled", "org-1", nil); err != nil {
		t.Fatalf("a catalogued type: %v", err)
	}
}
