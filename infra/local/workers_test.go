package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/tests/testenv"
)

// Issue 19 finding 7: one poller per queue waited for a whole batch, so one
// receiver that timed out delayed every delivery behind it (retries due after
// 1 s ran after a median of 94 s). With the mapping's MaxConcurrency pollers, a
// batch that hangs does not hold back the next one.
func TestOneSlowBatchDoesNotHoldTheQueue(t *testing.T) {
	env := testenv.New(t)
	q := routes.Queue{Name: "webhook-deliveries", BatchSize: 1, MaxConcurrency: 2}
	res := env.Resources.Queues[q.Name]
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	release := make(chan struct{})
	done := make(chan string, 2)
	var once, released sync.Once
	handle := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		body := ev.Records[0].Body
		if body == "slow" {
			once.Do(func() {
				select { // hangs until the fast message has been handled
				case <-release:
				case <-ctx.Done():
				}
			})
			done <- body
		} else {
			// Reported before the slow batch is let go, so the order seen
			// is the order handled.
			done <- body
			released.Do(func() { close(release) })
		}
		return events.SQSEventResponse{}, nil
	}
	for _, body := range []string{"slow", "fast"} {
		if _, err := env.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(res.URL), MessageBody: aws.String(body)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond) // received in this order
	}
	for range max(q.MaxConcurrency, 1) {
		go poll(ctx, env.SQS, q, res, handle, slog.New(slog.DiscardHandler))
	}
	var got []string
	for len(got) < 2 {
		select {
		case b := <-done:
			got = append(got, b)
		case <-time.After(45 * time.Second):
			t.Fatalf("handled %v: a hanging batch held back the queue", got)
		}
	}
	if got[0] != "fast" {
		t.Fatalf("order %v, want the fast message first", got)
	}
	for _, q := range routes.Queues {
		if q.MaxConcurrency < 2 {
			t.Errorf("queue %s: MaxConcurrency %d, want at least 2 (the mapping's minimum)", q.Name, q.MaxConcurrency)
		}
	}
}

// A GET body is never read (no route takes one), and a declared body over the
// largest any route accepts is refused without reading it.
func TestGatewayReadsNoBodyItWillNotUse(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/api/v1/health", strings.NewReader(strings.Repeat("x", 9<<20)))
	ev, err := toEvent(r, 4<<20)
	if err != nil || ev.Body != "" {
		t.Fatalf("GET with 9 MiB: body %d bytes, %v", len(ev.Body), err)
	}
	r = httptest.NewRequest(http.MethodPost, "/api/v1/users", strings.NewReader(strings.Repeat("x", 5<<20)))
	if _, err := toEvent(r, 4<<20); err == nil {
		t.Fatal("5 MiB accepted")
	}
}
