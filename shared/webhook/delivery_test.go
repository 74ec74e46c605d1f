package webhook_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

type detail struct {
	webhook.Webhook
	DeliveryStats webhook.Stats `json:"deliveryStats"`
}

func (w *world) detail(t testing.TB, id string) detail {
	t.Helper()
	var d detail
	fixture.Expect(t, w.call(t, http.MethodGet, base+"/"+id, aAdmin, nil), http.StatusOK).Decode(t, &d)
	return d
}

type deliveryList struct {
	Data       []webhook.Delivery
	Pagination struct{ Page, Limit, Total int }
}

func (w *world) deliveries(t testing.TB, id, query string) deliveryList {
	t.Helper()
	var l deliveryList
	res := fixture.Expect(t, w.call(t, http.MethodGet, base+"/"+id+"/deliveries"+query, aAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 4)
	res.Decode(t, &l)
	return l
}

// raise publishes a platform event of org A through the outbox publisher.
func (w *world) raise(t testing.TB, typ string, data any) *event.Pending {
	t.Helper()
	p, err := event.New(w.env.Clock, typ, w.a.ID, data)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.Events.Raise(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	return p
}

func (w *world) delays() []int32 { return w.queue.recorded(w.env.Cfg.DeliveryQueueURL) }

// takeJob takes the one job the deliveries queue holds off it and answers its body.
func (w *world) takeJob(t testing.TB) string {
	t.Helper()
	msgs := testenv.Receive(t, w.env.SQS, w.env.Cfg.DeliveryQueueURL, 0)
	if len(msgs) != 1 {
		t.Fatalf("deliveries queue holds %d jobs, want 1", len(msgs))
	}
	if _, err := w.env.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: aws.String(w.env.Cfg.DeliveryQueueURL),
		ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	return aws.ToString(msgs[0].Body)
}

// A receiver answering 500, 500, 200 sees three signed attempts, one second
// and then two seconds apart, and the delivery ends delivered.
func TestRetriesFollowTheScheduleThenDeliver(t *testing.T) {
	rc := newReceiver(t, 500, 500, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in?k=1"), "secret": "whsec-e2e",
		"headers": []map[string]string{{"key": "X-Tenant", "value": "alpha"}}}))
	ev := w.raise(t, "device.offline", map[string]any{"deviceId": "d-1", "hostname": "WS-1"})
	w.raise(t, "device.online", map[string]any{"deviceId": "d-1"}) // not subscribed
	w.pump(t)

	if rc.count() != 3 {
		t.Fatalf("receiver saw %d requests, want 3", rc.count())
	}
	if got := w.delays(); !slices.Equal(got, []int32{0, 1, 2}) {
		t.Errorf("DelaySeconds %v, want [0 1 2] (first job, then 1 s and 2 s)", got)
	}
	var stamps []int64
	var deliveryID string
	for i := range 3 {
		r, body := rc.request(i)
		h := r.Header
		ts := h.Get("X-Service-Signature-Timestamp")
		if ts == "" || ts != h.Get("X-Service-Timestamp") {
			t.Errorf("attempt %d: timestamps %q and %q", i, ts, h.Get("X-Service-Timestamp"))
		}
		if sig := refSignature("whsec-e2e", ts, body); h.Get("X-Service-Signature") != sig {
			t.Errorf("attempt %d: signature %q, independent %q", i, h.Get("X-Service-Signature"), sig)
		}
		if h.Get("Content-Type") != "application/json" || h.Get("User-Agent") != "Service-Webhooks/1.0" ||
			h.Get("X-Service-Event-Type") != "device.offline" || h.Get("X-Service-Event-Id") != ev.Event.ID ||
			h.Get("X-Service-Delivery-Id") == "" || h.Get("X-Tenant") != "alpha" || r.URL.RawQuery != "k=1" || r.Method != http.MethodPost {
			t.Errorf("attempt %d: headers %v url %s", i, h, r.URL)
		}
		if deliveryID == "" {
			deliveryID = h.Get("X-Service-Delivery-Id")
		} else if h.Get("X-Service-Delivery-Id") != deliveryID {
			t.Errorf("attempt %d: another delivery id", i)
		}
		var p map[string]any
		if err := json.Unmarshal(body, &p); err != nil || p["id"] != ev.Event.ID || p["type"] != "device.offline" ||
			p["orgId"] != w.a.ID || p["timestamp"] != ev.Event.Timestamp || p["data"].(map[string]any)["hostname"] != "WS-1" {
			t.Errorf("attempt %d: payload %s", i, body)
		}
		n, _ := strconv.ParseInt(ts, 10, 64)
		stamps = append(stamps, n)
	}
	if stamps[1]-stamps[0] != 1000 || stamps[2]-stamps[1] != 2000 {
		t.Errorf("attempt times %v: want 1 s then 2 s apart", stamps)
	}
	l := w.deliveries(t, wh.ID, "")
	if l.Pagination.Total != 1 || len(l.Data) != 1 {
		t.Fatalf("deliveries %+v", l)
	}
	d := l.Data[0]
	if d.ID != deliveryID || d.Status != "delivered" || d.Attempt != 3 || d.ResponseStatus == nil || *d.ResponseStatus != 200 ||
		d.ResponseBody == nil || *d.ResponseBody != `{"received":3}` || d.ErrorMessage != nil || d.DeliveredAt == nil ||
		d.NextAttemptAt != nil || d.Event != "device.offline" || d.EventID != ev.Event.ID {
		t.Errorf("delivery %+v", d)
	}
	s := w.detail(t, wh.ID)
	if s.SuccessCount != 1 || s.FailureCount != 2 || s.DeliveryStats.Delivered != 1 || s.DeliveryStats.Total != 1 ||
		s.DeliveryStats.Retrying != 0 || s.DeliveryStats.Pending != 0 || s.LastSuccessAt == nil || s.DeliveryStats.LastDeliveredAt == nil {
		t.Errorf("webhook after delivery %+v", s)
	}
	if len(w.dlq(t)) != 0 {
		t.Error("a delivered job is in the DLQ")
	}
}

// A receiver that always answers 500 gets exactly 6 attempts (5 retries at 1,
// 2, 4, 8, 16 s); the delivery fails and its job is in the dead-letter queue,
// from which an administrator redrives it as a new delivery.
func TestExhaustedRetriesGoToTheDLQAndRedrive(t *testing.T) {
	rc := newReceiver(t, 500)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	w.raise(t, "alert.triggered", map[string]any{"alertId": "a-1"})
	w.pump(t)

	if rc.count() != 6 {
		t.Fatalf("receiver saw %d requests, want 6", rc.count())
	}
	if got := w.delays(); !slices.Equal(got, []int32{0, 1, 2, 4, 8, 16}) {
		t.Errorf("DelaySeconds %v, want [0 1 2 4 8 16]", got)
	}
	l := w.deliveries(t, wh.ID, "?status=failed")
	if l.Pagination.Total != 1 || l.Data[0].Attempt != 6 || l.Data[0].ErrorMessage == nil || *l.Data[0].ErrorMessage != "HTTP 500" ||
		*l.Data[0].ResponseStatus != 500 || l.Data[0].NextAttemptAt != nil {
		t.Fatalf("failed deliveries %+v", l)
	}
	failed := l.Data[0]
	jobs := w.dlq(t)
	if len(jobs) != 1 || jobs[0].DeliveryID != failed.ID || jobs[0].Reason != "retries exhausted" || jobs[0].Attempt != 5 {
		t.Fatalf("DLQ %+v", jobs)
	}
	s := w.detail(t, wh.ID)
	if s.FailureCount != 6 || s.SuccessCount != 0 || s.DeliveryStats.Failed != 1 || s.DeliveryStats.Retrying != 0 {
		t.Errorf("webhook %+v", s)
	}

	// Inspect and redrive through the admin routes (both prefixes).
	var view webhook.DLQView
	fixture.Expect(t, w.call(t, http.MethodGet, "/admin/webhook-dlq", sysAdmin, nil), http.StatusOK).Decode(t, &view)
	if view.Count != 1 || len(view.Sample) != 1 || *view.Sample[0].DeliveryID != failed.ID {
		t.Fatalf("DLQ view %+v", view)
	}
	rc.mu.Lock()
	rc.script = []int{200}
	rc.mu.Unlock()
	var rr webhook.RedriveResult
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/admin/webhook-dlq/redrive", sysAdmin, nil), http.StatusOK).Decode(t, &rr)
	if rr.Redriven != 1 || rr.Remaining != 0 {
		t.Fatalf("redrive %+v", rr)
	}
	w.pump(t)
	if rc.count() != 7 {
		t.Errorf("receiver saw %d requests after the redrive, want 7", rc.count())
	}
	all := w.deliveries(t, wh.ID, "")
	if all.Pagination.Total != 2 || all.Data[0].Status != "delivered" || all.Data[0].Attempt != 1 || all.Data[1].ID != failed.ID {
		t.Errorf("after redrive (newest first) %+v", all)
	}

	// Retry: only failed deliveries.
	res := fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/retry/"+all.Data[0].ID, aAdmin, nil), http.StatusBadRequest)
	if res.JSON(t)["error"] != "Only failed deliveries can be retried" {
		t.Errorf("retry of a delivered one: %s", res.Body)
	}
	var q struct {
		Message  string
		Delivery map[string]any
	}
	res = fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/retry/"+failed.ID, aAdmin, nil), http.StatusAccepted)
	fixture.Budget(t, res, 5)
	res.Decode(t, &q)
	if q.Delivery["status"] != "pending" || q.Delivery["attempt"] != float64(0) || q.Delivery["id"] == failed.ID {
		t.Errorf("retry answer %+v", q)
	}
	w.pump(t)
	if rc.count() != 8 {
		t.Errorf("receiver saw %d requests after the retry, want 8", rc.count())
	}
	// The redriven and the retried sends are the same delivery to the
	// receiver: every request carried the failed delivery's id (issue 30: a
	// redrive gave each a new X-Service-Delivery-Id).
	for i := range rc.count() {
		if r, _ := rc.request(i); r.Header.Get("X-Service-Delivery-Id") != failed.ID {
			t.Errorf("request %d: X-Service-Delivery-Id %q, want the first delivery's %s", i, r.Header.Get("X-Service-Delivery-Id"), failed.ID)
		}
	}
	s = w.detail(t, wh.ID)
	if s.DeliveryStats.Total != 3 || s.DeliveryStats.Delivered != 2 || s.DeliveryStats.Failed != 1 || s.SuccessCount != 2 {
		t.Errorf("stats %+v", s.DeliveryStats)
	}
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/retry/"+testenv.Start.Format("")+failed.ID[:0]+"00000000-0000-4000-8000-000000000000", aAdmin, nil), http.StatusNotFound)
}

// A redelivered event makes no second delivery, and a duplicate job for an
// attempt already made sends nothing.
func TestDuplicatesSendNothingTwice(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	ev := w.raise(t, "device.offline", map[string]any{"deviceId": "d-1"})
	body, _ := json.Marshal(ev.Event)
	w.send(t, w.env.Cfg.EventsQueueURL, string(body))
	w.pump(t)
	if rc.count() != 1 {
		t.Fatalf("receiver saw %d requests for one event sent twice", rc.count())
	}
	l := w.deliveries(t, wh.ID, "")
	if l.Pagination.Total != 1 {
		t.Fatalf("%d deliveries", l.Pagination.Total)
	}
	job, _ := json.Marshal(webhook.Job{OrgID: w.a.ID, WebhookID: wh.ID, DeliveryID: l.Data[0].ID, Attempt: 0})
	w.send(t, w.env.Cfg.DeliveryQueueURL, string(job))
	w.send(t, w.env.Cfg.DeliveryQueueURL, string(job))
	w.pump(t)
	if rc.count() != 1 {
		t.Errorf("receiver saw %d requests after duplicate jobs", rc.count())
	}
	if s := w.detail(t, wh.ID); s.SuccessCount != 1 || s.DeliveryStats.Total != 1 {
		t.Errorf("counters after duplicates %+v", s)
	}
}

func (w *world) send(t testing.TB, url, body string) {
	t.Helper()
	if _, err := w.env.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String(body)}); err != nil {
		t.Fatal(err)
	}
}

// DNS rebinding: a name that resolved to an allowed address when the webhook
// was saved (and on a first delivery) and resolves to a blocked one later
// fails at once with `Unsafe webhook URL`, with no request and no retry.
func TestRebindingFailsUnsafeWithoutARequest(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": "https://example.com:" + rc.port() + "/in"}))
	res := fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	fixture.Budget(t, res, 4)
	w.pump(t)
	if rc.count() != 1 {
		t.Fatalf("first delivery: receiver saw %d", rc.count())
	}
	for _, addr := range []string{"169.254.169.254", "10.0.0.7", "127.0.0.2", "::1", "::ffff:127.0.0.2", "64:ff9b::a9fe:a9fe"} {
		w.dns.set("example.com", addr)
		w.env.Clock.Advance(time.Second)
		before := len(w.delays())
		res := fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, map[string]any{"event": "device.offline"}), http.StatusAccepted)
		var q struct{ Delivery struct{ ID string } }
		res.Decode(t, &q)
		w.pump(t)
		if rc.count() != 1 {
			t.Fatalf("%s: receiver saw a request", addr)
		}
		if got := len(w.delays()) - before; got != 0 {
			t.Errorf("%s: the worker sent %d jobs, want none (no retry)", addr, got)
		}
		l := w.deliveries(t, wh.ID, "?limit=1")
		d := l.Data[0]
		if d.ID != q.Delivery.ID || d.Status != "failed" || d.ErrorMessage == nil || *d.ErrorMessage != "Unsafe webhook URL" ||
			d.Attempt != 1 || d.ResponseStatus != nil {
			t.Errorf("%s: delivery %+v", addr, d)
		}
	}
	if len(w.dlq(t)) != 0 {
		t.Error("an unsafe delivery went to the DLQ")
	}
	// A name public at validation and private at delivery.
	w.dns.set("example.com", "93.184.216.34")
	wh2 := w.create(t, aAdmin, hookBody(map[string]any{"url": "https://example.com:" + rc.port() + "/other"}))
	w.dns.set("example.com", "192.168.1.1")
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh2.ID+"/test", aAdmin, nil), http.StatusAccepted)
	w.pump(t)
	if d := w.deliveries(t, wh2.ID, "").Data[0]; rc.count() != 1 || d.Status != "failed" || *d.ErrorMessage != "Unsafe webhook URL" {
		t.Errorf("public then private: %d requests, %+v", rc.count(), d)
	}
}

// Redirects are never followed, to a private address or anywhere else.
func TestRedirectsAreNotFollowed(t *testing.T) {
	target := newReceiver(t, 200)
	rc := newReceiver(t)
	w := newWorld(t, rc, target)
	for i, loc := range []string{target.url("/internal"), "https://10.0.0.1/", "https://169.254.169.254/latest/meta-data"} {
		rc.mu.Lock()
		rc.handler = func(rw http.ResponseWriter, r *http.Request) { http.Redirect(rw, r, loc, http.StatusFound) }
		rc.mu.Unlock()
		wh := w.create(t, aAdmin, hookBody(map[string]any{"name": fmt.Sprint("r", i), "url": rc.url("/in"),
			"retryPolicy": map[string]any{"maxRetries": 0}}))
		fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
		w.pump(t)
		d := w.deliveries(t, wh.ID, "").Data[0]
		if d.Status != "failed" || d.ResponseStatus == nil || *d.ResponseStatus != http.StatusFound || *d.ErrorMessage != "HTTP 302" {
			t.Errorf("redirect to %s: %+v", loc, d)
		}
	}
	if target.count() != 0 {
		t.Errorf("redirect target got %d requests", target.count())
	}
}

// Only active webhooks subscribed to the type get deliveries; a paused
// webhook's pending delivery fails without a request.
func TestOnlyActiveSubscribedWebhooksReceive(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	on := w.create(t, aAdmin, hookBody(map[string]any{"name": "on", "url": rc.url("/on")}))
	off := w.create(t, aAdmin, hookBody(map[string]any{"name": "off", "url": rc.url("/off")}))
	other := w.create(t, aAdmin, hookBody(map[string]any{"name": "other", "url": rc.url("/other"), "events": []string{"patch.failed"}}))
	inB := w.create(t, bAdmin, hookBody(map[string]any{"name": "b", "url": rc.url("/b")}))
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+off.ID, aAdmin, map[string]any{"status": "paused"}), http.StatusOK)
	w.raise(t, "device.offline", nil)
	w.pump(t)
	if rc.count() != 1 {
		t.Fatalf("receiver saw %d requests, want 1", rc.count())
	}
	if r, _ := rc.request(0); r.URL.Path != "/on" {
		t.Errorf("delivered to %s", r.URL.Path)
	}
	for _, id := range []string{off.ID, other.ID} {
		if l := w.deliveries(t, id, ""); l.Pagination.Total != 0 {
			t.Errorf("webhook %s got %d deliveries", id, l.Pagination.Total)
		}
	}
	var l deliveryList
	fixture.Expect(t, w.call(t, http.MethodGet, base+"/"+inB.ID+"/deliveries", bAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != 0 {
		t.Error("another organization's webhook got the event")
	}
	// A test of a paused webhook fails without a request.
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+off.ID+"/test", aAdmin, nil), http.StatusAccepted)
	w.pump(t)
	if d := w.deliveries(t, off.ID, "").Data[0]; rc.count() != 1 || d.Status != "failed" || *d.ErrorMessage != "Webhook is not active" {
		t.Errorf("paused test: %+v", d)
	}
	_ = on
}

// An event held back (in the outbox by throttling, or in the queue) reaches
// only the webhooks that existed when it happened: created at or before its
// timestamp. Issue 30: a webhook created while the event waited received it.
func TestAHeldEventSkipsWebhooksCreatedAfterIt(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	w.create(t, aAdmin, hookBody(map[string]any{"name": "before", "url": rc.url("/before")}))
	held, err := event.New(w.env.Clock, "device.offline", w.a.ID, map[string]any{"deviceId": "d-held"})
	if err != nil {
		t.Fatal(err)
	}
	// The same instant as the event: at or after it was created receives it.
	w.create(t, aAdmin, hookBody(map[string]any{"name": "same instant", "url": rc.url("/same")}))
	w.env.Clock.Advance(time.Minute)
	late := w.create(t, aAdmin, hookBody(map[string]any{"name": "after", "url": rc.url("/after")}))
	// The held event is sent only now, a minute after it happened.
	if err := w.env.Events.Raise(context.Background(), held); err != nil {
		t.Fatal(err)
	}
	w.pump(t)
	var paths []string
	for i := range rc.count() {
		r, _ := rc.request(i)
		paths = append(paths, r.URL.Path)
	}
	slices.Sort(paths)
	if !slices.Equal(paths, []string{"/before", "/same"}) {
		t.Fatalf("the held event went to %v, want /before and /same", paths)
	}
	if l := w.deliveries(t, late.ID, ""); l.Pagination.Total != 0 {
		t.Fatalf("the webhook created after the event has deliveries %+v", l)
	}
	// An event that happens after the late webhook was created reaches it.
	w.raise(t, "device.offline", map[string]any{"deviceId": "d-new"})
	w.pump(t)
	if l := w.deliveries(t, late.ID, ""); l.Pagination.Total != 1 {
		t.Fatalf("the late webhook's deliveries of a later event %+v", l)
	}
}

// Counters stay exact when many deliveries of one webhook run concurrently
// (the worker handles each batch's records at once).
func TestCountersStayExactUnderConcurrency(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	const n = 30
	for i := range n {
		w.raise(t, "device.offline", map[string]any{"i": i})
	}
	w.pump(t)
	s := w.detail(t, wh.ID)
	if rc.count() != n || s.SuccessCount != n || s.DeliveryStats.Delivered != n || s.DeliveryStats.Total != n || s.DeliveryStats.Pending != 0 {
		t.Errorf("%d requests; webhook %+v", rc.count(), s)
	}
	l := w.deliveries(t, wh.ID, "?limit=7&page=5")
	if l.Pagination.Total != n || len(l.Data) != 2 {
		t.Errorf("last page %+v", l.Pagination)
	}
	// Newest first: ids are time-ordered by event time.
	all := w.deliveries(t, wh.ID, "?limit=100")
	for i := 1; i < len(all.Data); i++ {
		if all.Data[i-1].ID < all.Data[i].ID {
			t.Fatalf("deliveries not newest first at %d", i)
		}
	}
}

// A worker that dies holding an attempt loses nothing: a duplicate receipt
// while its claim lives sends nothing, and the message's next receipt after
// the claim lapses (the visibility timeout is longer) makes the attempt.
func TestAWorkerKilledMidDeliveryLosesNothing(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	ctx := context.Background()
	// The dying worker's receipt: the message is taken off the queue here
	// (the pump would otherwise wait for the receipt's hold to end) and
	// comes back below as SQS returns it, with the same body.
	body := w.takeJob(t)
	var j webhook.Job
	if err := json.Unmarshal([]byte(body), &j); err != nil {
		t.Fatal(err)
	}
	// The dying worker claimed the attempt, then vanished.
	if _, err := webhook.Claim(ctx, webhook.Store{St: w.env.Store}, j, w.env.Clock.Now()); err != nil {
		t.Fatal(err)
	}
	w.send(t, w.env.Cfg.DeliveryQueueURL, body)
	w.pump(t)
	if rc.count() != 0 {
		t.Fatalf("a duplicate receipt sent while the claim lived")
	}
	// The visibility timeout (60 s) outlasts the claim (45 s): the message
	// comes back after the claim has lapsed.
	w.env.Clock.Advance(61 * time.Second)
	w.send(t, w.env.Cfg.DeliveryQueueURL, body)
	w.pump(t)
	d := w.deliveries(t, wh.ID, "").Data[0]
	if rc.count() != 1 || d.Status != "delivered" || d.Attempt != 1 {
		t.Errorf("%d requests; delivery %+v", rc.count(), d)
	}
}

// A wait longer than SQS's 900 s delay limit hops: the job comes back early,
// is sent on again with the rest of the wait, and the attempt happens at its
// time, with no DynamoDB work on the hops.
func TestLongWaitsHopOverTheSQSDelayLimit(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	var j webhook.Job
	if err := json.Unmarshal([]byte(w.takeJob(t)), &j); err != nil {
		t.Fatal(err)
	}
	due := w.env.Clock.Now().Add(2000 * time.Second)
	j.NotBefore = due.UnixMilli()
	body, _ := json.Marshal(j)
	w.send(t, w.env.Cfg.DeliveryQueueURL, string(body))
	w.pump(t)
	if got := w.queue.distinct(w.env.Cfg.DeliveryQueueURL); !slices.Equal(got, []int32{900, 900, 200}) {
		t.Errorf("hops %v, want [900 900 200] (all sends: %v)", got, w.delays())
	}
	r, _ := rc.request(0)
	if rc.count() != 1 || r.Header.Get("X-Service-Timestamp") != strconv.FormatInt(due.UnixMilli(), 10) {
		t.Errorf("%d requests, at %s, want one at %d", rc.count(), r.Header.Get("X-Service-Timestamp"), due.UnixMilli())
	}
}
