package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// sentQueue records when each retry job was sent and the delay it asked for.
type sentQueue struct {
	inner webhook.Queue
	mu    sync.Mutex
	sent  map[int]time.Time // by the job's attempt: when Send was called
	acked map[int]time.Time // when SQS had taken it (its delay runs from here)
	delay map[int]int32
}

func (q *sentQueue) Send(ctx context.Context, url string, msgs ...webhook.Message) error {
	at := time.Now() // before SQS takes it: the message is visible no earlier than at + delay
	q.mu.Lock()
	for _, m := range msgs {
		var j webhook.Job
		if json.Unmarshal([]byte(m.Body), &j) == nil && j.DeliveryID != "" {
			q.sent[j.Attempt], q.delay[j.Attempt] = at, m.DelaySeconds
		}
	}
	q.mu.Unlock()
	err := q.inner.Send(ctx, url, msgs...)
	done := time.Now()
	q.mu.Lock()
	for _, m := range msgs {
		var j webhook.Job
		if json.Unmarshal([]byte(m.Body), &j) == nil && j.DeliveryID != "" {
			q.acked[j.Attempt] = done
		}
	}
	q.mu.Unlock()
	return err
}

// Issue 19 finding 7: retries due after 1 s ran after a median of 94 s
// locally, one poller per queue waiting for a whole batch. Measured here
// through the local runtime's own pollers (poll, MaxConcurrency of each
// queue), the real webhook worker on the system clock, SQS delays of the
// emulator and a receiver answering 500, 500, 500, then 200, for a webhook
// whose policy retries after 1, 2 and 4 s:
//   - the worker asks SQS for exactly the policy's delays (whole seconds,
//     rounded up);
//   - the local runtime hands each retry to the worker no earlier than its
//     delay after it was queued and at most 1 s later (the part the stand-in
//     for the event source mapping owns);
//   - no attempt reaches the receiver earlier than the policy allows after
//     the previous one (the gaps, including the worker's own DynamoDB and HTTP
//     work, are logged).
//
// It measures wall time, so it runs only alone, with an emulator of its own
// (make test-timing, GALE_TIMING_TEST=1): beside another package's load on a
// shared emulator, one SQS call can take longer than the second it checks.
func TestWebhookRetryScheduleThroughLocalPollers(t *testing.T) {
	if os.Getenv("GALE_TIMING_TEST") == "" {
		t.Skip("a wall-clock measurement: make test-timing runs it alone")
	}
	var mu sync.Mutex
	var arrivals []time.Time
	rc := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrivals = append(arrivals, time.Now())
		n := len(arrivals)
		mu.Unlock()
		if n <= 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	rc.Config.ErrorLog = nil
	rc.StartTLS()
	defer rc.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	env := testenv.New(t, "WEBHOOK_ALLOW_CIDRS", "127.0.0.1/32", "WEBHOOK_CA_FILE", ca)
	px := fixture.Partner(t, env, "Partner X")
	org := fixture.Org(t, env, px.ID, "Alpha")
	admin := fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: px.ID, OrgID: org.ID, RoleID: role.OrgAdminID, MFA: true})
	svc, err := webhooksgroup.Service(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	rt := env.Router()
	(&webhook.Handler{Svc: svc}).Routes(rt)
	policy := webhook.RetryPolicy{MaxRetries: 3, InitialDelayMs: 1000, BackoffMultiplier: 2, MaxDelayMs: 300_000}
	fixture.Expect(t, fixture.Do(t, env.Edge(rt), fixture.Request{Method: http.MethodPost, Path: "/api/v1/webhooks", Token: admin.Token,
		Body: map[string]any{"name": "Ops", "url": rc.URL + "/in", "events": []string{"device.offline"}, "retryPolicy": policy}}), http.StatusCreated)

	worker, err := webhookworkergroup.Worker(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	worker.Clock = clock.System{} // as in make run: the schedule is real time
	q := &sentQueue{inner: worker.Queue, sent: map[int]time.Time{}, acked: map[int]time.Time{}, delay: map[int]int32{}}
	worker.Queue = q
	var handedMu sync.Mutex
	handed := map[int]time.Time{} // when a poller handed the job of each attempt to the worker
	handle := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		for _, r := range ev.Records {
			var j webhook.Job
			if json.Unmarshal([]byte(r.Body), &j) == nil && j.DeliveryID != "" {
				handedMu.Lock()
				if _, ok := handed[j.Attempt]; !ok {
					handed[j.Attempt] = time.Now()
				}
				handedMu.Unlock()
			}
		}
		return worker.Handle(ctx, ev)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	for _, rq := range routes.Queues {
		if rq.Consumer != "webhook-worker" {
			continue
		}
		for range max(rq.MaxConcurrency, 1) {
			go poll(ctx, env.SQS, rq, env.Resources.Queues[rq.Name], handle, slog.New(slog.DiscardHandler))
		}
	}

	p, err := event.New(env.Clock, "device.offline", org.ID, map[string]any{"deviceId": "d-1", "hostname": "WS-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Events.Raise(ctx, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(90 * time.Second)
	for {
		mu.Lock()
		n := len(arrivals)
		mu.Unlock()
		if n == 4 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d attempts reached the receiver within 90 s, want 4", n)
		}
		time.Sleep(100 * time.Millisecond)
	}
	cancel()

	mu.Lock()
	defer mu.Unlock()
	q.mu.Lock()
	defer q.mu.Unlock()
	handedMu.Lock()
	defer handedMu.Unlock()
	for n := range policy.MaxRetries {
		want := policy.Delay(n)
		attempt := n + 1 // the job of the retry after failed attempt n
		if got := time.Duration(q.delay[attempt]) * time.Second; got != want {
			t.Errorf("retry %d: DelaySeconds %v, want the policy's %v", attempt, got, want)
		}
		sent, acked, got := q.sent[attempt], q.acked[attempt], handed[attempt]
		if sent.IsZero() || acked.IsZero() || got.IsZero() {
			t.Fatalf("retry %d: sent %v, taken %v, handed to the worker %v", attempt, sent, acked, got)
		}
		wait := got.Sub(sent)
		gap := arrivals[attempt].Sub(arrivals[attempt-1])
		t.Logf("retry %d: policy %v; queued to handed over %v; attempt to attempt at the receiver %v",
			attempt, want, wait.Round(time.Millisecond), gap.Round(time.Millisecond))
		// Never before its delay from the call; at most 1 s after the delay
		// from when SQS had taken it.
		if wait < want || got.Sub(acked) > want+time.Second {
			t.Errorf("retry %d was handed to the worker %v after Send was called, %v after SQS took it, want within [%v, %v]",
				attempt, wait, got.Sub(acked), want, want+time.Second)
		}
		if gap < want {
			t.Errorf("retry %d reached the receiver %v after the previous attempt, earlier than the policy's %v", attempt, gap, want)
		}
	}
}
