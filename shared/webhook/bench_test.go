package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook"
)

// countingQueue counts the worker's own SQS sends.
type countingQueue struct {
	inner webhook.Queue
	n     atomic.Int64
}

func (q *countingQueue) Send(ctx context.Context, url string, msgs ...webhook.Message) error {
	q.n.Add(1)
	return q.inner.Send(ctx, url, msgs...)
}

// BenchmarkDeliveryPipeline delivers b.N signed events end to end through the
// real worker: events are put on the emulator's events queue (as the publisher
// does), four pollers feed both queues to the worker as the Lambda event source
// would, and a local HTTPS receiver verifies nothing but counts and timestamps.
// It reports deliveries/s, p50/p99 from enqueue to arrival, and the DynamoDB
// calls and worker SQS sends per delivery (the event source's receives and
// deletes are reported apart).
func BenchmarkDeliveryPipeline(b *testing.B) {
	rc := newReceiver(b, 200)
	var mu sync.Mutex
	arrived := map[string]time.Time{}
	rc.handler = func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		arrived[r.Header.Get("X-Service-Event-Id")] = time.Now()
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}
	w := newWorld(b, rc)
	w.create(b, aAdmin, hookBody(map[string]any{"url": rc.url("/in"), "secret": "bench-secret"}))
	q := &countingQueue{inner: w.worker.Queue}
	w.worker.Queue = q
	ctx := context.Background()

	// Events as the publisher sends them, stamped with the fake clock.
	sent := make(map[string]time.Time, b.N)
	bodies := make([]string, b.N)
	ids := make([]string, b.N)
	for i := range b.N {
		ids[i] = uuid.NewString()
		raw, _ := json.Marshal(map[string]any{"id": ids[i], "type": "device.offline", "timestamp": clock.Format(w.env.Clock.Now()),
			"orgId": w.a.ID, "data": map[string]any{"deviceId": strconv.Itoa(i)}})
		bodies[i] = string(raw)
	}
	dctx, calls := store.WithCalls(ctx)
	var receives, deletes atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	poll := func(name string) {
		defer wg.Done()
		qu := w.env.Resources.Queues[name]
		for {
			select {
			case <-done:
				return
			default:
			}
			receives.Add(1)
			out, err := w.env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(qu.URL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil || len(out.Messages) == 0 {
				continue
			}
			batch := events.SQSEvent{}
			for _, m := range out.Messages {
				batch.Records = append(batch.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId),
					ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), EventSource: "aws:sqs", EventSourceARN: qu.ARN})
			}
			resp, _ := w.worker.Handle(dctx, batch)
			failed := map[string]bool{}
			for _, f := range resp.BatchItemFailures {
				failed[f.ItemIdentifier] = true
			}
			del := &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(qu.URL)}
			for i, m := range out.Messages {
				if !failed[aws.ToString(m.MessageId)] {
					del.Entries = append(del.Entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: m.ReceiptHandle})
				}
			}
			if len(del.Entries) > 0 {
				deletes.Add(1)
				_, _ = w.env.SQS.DeleteMessageBatch(ctx, del)
			}
		}
	}
	b.ResetTimer()
	start := time.Now()
	for _, name := range []string{"events", "webhook-deliveries", "webhook-deliveries", "webhook-deliveries"} {
		wg.Add(1)
		go poll(name)
	}
	for i := 0; i < b.N; i += 10 {
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(w.env.Cfg.EventsQueueURL)}
		now := time.Now()
		for j := i; j < min(i+10, b.N); j++ {
			in.Entries = append(in.Entries, sqstypes.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(j)), MessageBody: aws.String(bodies[j])})
			sent[ids[j]] = now
		}
		if _, err := w.env.SQS.SendMessageBatch(ctx, in); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(10 * time.Minute)
	for rc.count() < b.N && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	elapsed := time.Since(start)
	close(done)
	wg.Wait()
	b.StopTimer()
	if rc.count() < b.N {
		b.Fatalf("delivered %d of %d", rc.count(), b.N)
	}
	var lat []time.Duration
	mu.Lock()
	for id, t0 := range sent {
		lat = append(lat, arrived[id].Sub(t0))
	}
	mu.Unlock()
	slices.Sort(lat)
	n := float64(b.N)
	b.ReportMetric(n/elapsed.Seconds(), "deliveries/s")
	b.ReportMetric(float64(lat[len(lat)/2].Milliseconds()), "p50-ms")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)].Milliseconds()), "p99-ms")
	b.ReportMetric(float64(calls.N())/n, "dynamodb-calls/delivery")
	b.ReportMetric(float64(q.n.Load())/n, "worker-sqs-sends/delivery")
	b.ReportMetric(float64(receives.Load()+deletes.Load())/n, "event-source-sqs-calls/delivery")
}

// BenchmarkEmulatorGetItem measures what one DynamoDB call costs on the
// emulator here (the pipeline benchmark makes five per delivery), run from ten
// goroutines like a worker batch.
func BenchmarkEmulatorGetItem(b *testing.B) {
	w := newWorld(b)
	wh := w.create(b, aAdmin, hookBody(nil))
	st := webhook.Store{St: w.env.Store}
	b.SetParallelism(5)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := st.Get(context.Background(), w.a.ID, wh.ID); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}
