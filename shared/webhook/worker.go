package webhook

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// Doer sends one HTTP request; *http.Client (NewHTTPClient) satisfies it.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// Worker consumes the events queue (fan-out) and the deliveries queue
// (attempts), the webhook-worker function's two event sources.
//
// Reads and writes: an event reads one Query of its organization's webhooks
// and writes one transaction per matching webhook (the delivery and its
// count), plus one SendMessageBatch per ten jobs. An attempt makes the claim (UpdateItem
// returning the delivery), the webhook (GetItem) and the outcome (a
// transaction of the delivery and the webhook's counters), plus one
// SendMessage when it schedules a retry or dead-letters the job. A delivery
// that ends failed while its webhook's failure run is older than the window
// may add a GetItem (the run as it is now) and the transition's transaction;
// the one transition that wins also reads the organization's members and
// their roles and accounts, and enqueues their e-mails (failing.go).
type Worker struct {
	St    Store
	Box   *secret.Box
	Guard *outbound.Guard
	HTTP  Doer
	Queue Queue
	Clock clock.Clock
	// EventsQueueName identifies messages of the events queue: the last part of
	// their source ARN. Every other message is a delivery job.
	EventsQueueName  string
	DeliveryQueueURL string
	DLQURL           string
	Log              *slog.Logger
	// React runs the platform's own side effects of an event (the mobile
	// approval fan-out of elevation.requested, shared/push), beside the
	// webhook fan-out; nil runs none. Both are idempotent: an error of
	// either fails the message, which the queue redelivers.
	React func(ctx context.Context, typ, orgID string, data json.RawMessage) error
	// Failure is when a failing webhook stops (zero fields: DefaultFailure);
	// Users, Roles and Mail find and e-mail the organization's administrators
	// when one does (failing.go).
	Failure FailurePolicy
	Users   Users
	Roles   Roles
	Mail    Mailer
}

// Handle processes an SQS batch, its records concurrently, and reports each
// failed record, so only those are retried (ReportBatchItemFailures).
func (w *Worker) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, m := range batch.Records {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := w.handle(ctx, m); err != nil {
				w.Log.WarnContext(ctx, "message failed", "messageId", m.MessageId, "err", err)
				mu.Lock()
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	// Metrics (shared/httpapi/metrics.go): messages and failures per batch.
	w.Log.InfoContext(ctx, "batch", "messages", len(batch.Records), "batchItemFailures", len(resp.BatchItemFailures))
	return resp, nil
}

func (w *Worker) handle(ctx context.Context, m events.SQSMessage) error {
	if w.fromEvents(m) {
		err := w.fanOut(ctx, m.Body)
		if w.React == nil {
			return err
		}
		var ev payload
		if json.Unmarshal([]byte(m.Body), &ev) != nil || ev.Type == "" {
			return err
		}
		return errors.Join(err, w.React(ctx, ev.Type, ev.OrgID, ev.Data))
	}
	var j Job
	if err := json.Unmarshal([]byte(m.Body), &j); err != nil || !valid.IsUUID(j.OrgID) || !valid.IsUUID(j.WebhookID) ||
		!valid.IsUUID(j.DeliveryID) || j.Attempt < 0 {
		return errBadJob
	}
	return w.attempt(ctx, j)
}

func (w *Worker) fromEvents(m events.SQSMessage) bool {
	name := m.EventSourceARN[strings.LastIndex(m.EventSourceARN, ":")+1:]
	return name == w.EventsQueueName
}

type workerErr string

func (e workerErr) Error() string { return string(e) }

const (
	errBadEvent = workerErr("message is not a platform event")
	errBadJob   = workerErr("message is not a delivery job")
	// errNotYet: the job arrived before the previous attempt's outcome was
	// written; the message is retried after its visibility timeout.
	errNotYet = workerErr("previous attempt not recorded yet")
)

// payload is the body sent: the event as published (shared/event.Event), data
// kept byte for byte.
type payload struct {
	ID        string          `json:"id"`
	Type      string          `json:"type"`
	Timestamp string          `json:"timestamp"`
	OrgID     string          `json:"orgId"`
	Data      json.RawMessage `json:"data"`
}

// fanOut creates one pending delivery per active webhook of the event's
// organization subscribed to its type and created at or before the event
// happened, and enqueues their jobs. An event waits in the outbox (a send
// failed or was throttled) or in the queue for a while: a webhook created
// meanwhile did not exist when it happened and never receives it. A
// redelivered event finds its deliveries already made (same ids) and only
// enqueues again; the claim makes the extra jobs harmless.
func (w *Worker) fanOut(ctx context.Context, body string) error {
	var ev payload
	if err := json.Unmarshal([]byte(body), &ev); err != nil || ev.ID == "" || ev.Type == "" {
		return errBadEvent
	}
	if !valid.IsUUID(ev.OrgID) {
		return nil // not an organization's event: no webhook can subscribe
	}
	// The event's time (its timestamp is when it was raised); an event
	// without a readable one is taken as happening now.
	at, err := time.Parse(time.RFC3339Nano, ev.Timestamp)
	if err != nil {
		at = w.Clock.Now()
	}
	hooks, err := w.St.List(ctx, ev.OrgID)
	if err != nil {
		return err
	}
	var subscribed []record
	for _, h := range hooks {
		if h.Status == StatusActive && !h.Deleting && slices.Contains(h.Events, ev.Type) && !createdAfter(h, at) {
			subscribed = append(subscribed, h)
		}
	}
	if len(subscribed) == 0 {
		return nil
	}
	if len(ev.Data) == 0 {
		ev.Data = json.RawMessage("null")
	}
	sent, err := json.Marshal(ev)
	if err != nil {
		return fmt.Errorf("fan out %s: %w", ev.ID, err)
	}
	now := clock.Format(w.Clock.Now())
	var jobs []Message
	for _, h := range subscribed {
		d := &Delivery{ID: DeliveryID(ev.ID, h.ID, at), WebhookID: h.ID, OrgID: h.OrgID, Status: DeliveryPending,
			Event: ev.Type, EventID: ev.ID, Body: string(sent), CreatedAt: now}
		d.Keys = DeliveryKey(d.OrgID, d.WebhookID, d.ID)
		put, cnt := w.St.newDeliveryWrites(d, w.Clock.Now())
		tx := &store.Tx{}
		tx.Include(put)
		tx.Include(cnt)
		if err := w.St.St.Commit(ctx, tx); err != nil {
			var te *store.TxError
			switch {
			case errors.As(err, &te) && te.FailedOn(cnt) && !te.FailedOn(put):
				continue // webhook deleted meanwhile
			case !(errors.As(err, &te) && te.FailedOn(put)):
				return fmt.Errorf("fan out %s to %s: %w", ev.ID, h.ID, err)
			}
			// Made by an earlier receipt of this event: enqueue again.
		}
		jobs = append(jobs, jobMessage(Job{OrgID: d.OrgID, WebhookID: d.WebhookID, DeliveryID: d.ID}, 0))
	}
	return w.Queue.Send(ctx, w.DeliveryQueueURL, jobs...)
}

// createdAfter reports whether webhook h was created, or last made active
// again, after instant at: an event that happened while it did not exist, or
// while it was stopped, is not its to receive. A webhook whose times cannot be
// read is taken as older than every event.
func createdAfter(h record, at time.Time) bool {
	for _, t := range []string{h.CreatedAt, h.ActiveSince} {
		if c, err := time.Parse(time.RFC3339Nano, t); err == nil && c.After(at) {
			return true
		}
	}
	return false
}

func jobMessage(j Job, delay int32) Message {
	b, _ := json.Marshal(j)
	return Message{Body: string(b), DelaySeconds: delay}
}

// claimFor is how long a claim holds an attempt: the delivery timeout and a
// margin, less than the queue's visibility timeout, so a worker that dies
// mid-attempt leaves the attempt to the message's next receipt.
const claimFor = Timeout + 15*time.Second

// Error messages recorded on deliveries.
const (
	msgUnsafe    = "Unsafe webhook URL"
	msgNotActive = "Webhook is not active"
)

// attempt makes one attempt of a delivery.
func (w *Worker) attempt(ctx context.Context, j Job) error {
	now := w.Clock.Now()
	if j.NotBefore > now.UnixMilli() {
		// A wait longer than SQS allows: hop again.
		wait := time.Duration(j.NotBefore-now.UnixMilli()) * time.Millisecond
		return w.Queue.Send(ctx, w.DeliveryQueueURL, jobMessage(j, delaySeconds(wait)))
	}
	claimID := newClaimID()
	d, err := w.St.claim(ctx, j, claimID, now.UnixMilli(), now.Add(claimFor).UnixMilli())
	if isConflict(err) {
		return w.unclaimed(ctx, j)
	}
	if err != nil {
		return err
	}
	h, err := w.St.Get(ctx, j.OrgID, j.WebhookID)
	if isNotFound(err) {
		return nil // deleted: its deliveries go with it
	}
	if err != nil {
		return err
	}
	if h.Deleting {
		return nil
	}
	r := result{from: d.Status, attempts: d.Attempt + 1, at: clock.Format(now)}
	if h.Status != StatusActive {
		r.to, r.errorMessage = DeliveryFailed, ptr(msgNotActive)
		return w.record(ctx, d, claimID, r)
	}
	hook, err := w.open(h)
	if err != nil {
		return err
	}
	w.send(ctx, hook, d, now, &r)
	var next *Message
	var nextURL string
	switch {
	case r.to == DeliveryDelivered, r.to == DeliveryFailed:
	case d.Attempt < hook.policy.MaxRetries:
		r.to = DeliveryRetrying
		delay := hook.policy.Delay(d.Attempt)
		at := now.Add(delay)
		r.nextAttemptAt = ptr(clock.Format(at))
		nj := Job{OrgID: j.OrgID, WebhookID: j.WebhookID, DeliveryID: j.DeliveryID, Attempt: r.attempts}
		if delay > MaxSQSDelay {
			nj.NotBefore = at.UnixMilli()
		}
		m := jobMessage(nj, delaySeconds(delay))
		next, nextURL = &m, w.DeliveryQueueURL
	default:
		r.to = DeliveryFailed
		dj := j
		dj.Reason, dj.FailedAt = "retries exhausted", r.at
		m := jobMessage(dj, 0)
		next, nextURL = &m, w.DLQURL
	}
	// The next job goes out before the outcome is written: a crash between the
	// two repeats this attempt (its message comes back) rather than losing the
	// retry; the early job finds its attempt not recorded yet and waits.
	if next != nil {
		if err := w.Queue.Send(ctx, nextURL, *next); err != nil {
			return err
		}
	}
	if err := w.record(ctx, d, claimID, r); err != nil {
		return err
	}
	return w.stopIfFailing(ctx, h, d, r)
}

// record writes an attempt's outcome while the claim holds.
func (w *Worker) record(ctx context.Context, d *Delivery, claimID string, r result) error {
	dw, ww := outcomeWrites(d, claimID, r)
	tx := &store.Tx{}
	tx.Include(dw)
	tx.Include(ww)
	err := w.St.St.Commit(ctx, tx)
	if isConflict(err) {
		// The claim expired and another receipt took the attempt over, or the
		// webhook was deleted: that receipt (or the deletion) decides.
		w.Log.WarnContext(ctx, "attempt outcome not recorded: claim lost", "deliveryId", d.ID)
		return nil
	}
	if err == nil { // metrics (shared/httpapi/metrics.go): deliveries by outcome
		w.Log.InfoContext(ctx, "delivery", "outcome", r.to, "attempts", r.attempts)
	}
	return err
}

// unclaimed decides about a job whose claim was refused: a duplicate of an
// attempt already made (or in flight) is dropped; a job that arrived before the
// previous attempt's outcome was written waits.
func (w *Worker) unclaimed(ctx context.Context, j Job) error {
	d, err := w.St.Delivery(ctx, j.OrgID, j.WebhookID, j.DeliveryID)
	switch {
	case isNotFound(err):
		return nil
	case err != nil:
		return err
	case d.Attempt < j.Attempt && (d.Status == DeliveryPending || d.Status == DeliveryRetrying):
		return errNotYet
	}
	return nil
}

func newClaimID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func ptr[T any](v T) *T { return &v }

// hook is a webhook opened for sending.
type hook struct {
	url     string
	secret  []byte
	headers []Header
	policy  RetryPolicy
}

func (w *Worker) open(h *record) (*hook, error) {
	return openRecord(w.Box, h)
}

// openRecord unseals a webhook's URL, secret and headers.
func openRecord(box *secret.Box, h *record) (*hook, error) {
	u, err := box.Open(h.URL, sealContext(h.ID, "url"))
	if err != nil {
		return nil, fmt.Errorf("webhook %s: url: %w", h.ID, err)
	}
	out := &hook{url: string(u), policy: h.policy()}
	if h.Secret != "" {
		if out.secret, err = box.Open(h.Secret, sealContext(h.ID, "secret")); err != nil {
			return nil, fmt.Errorf("webhook %s: secret: %w", h.ID, err)
		}
	}
	if h.Headers != "" {
		raw, err := box.Open(h.Headers, sealContext(h.ID, "headers"))
		if err != nil {
			return nil, fmt.Errorf("webhook %s: headers: %w", h.ID, err)
		}
		if err := json.Unmarshal(raw, &out.headers); err != nil {
			return nil, fmt.Errorf("webhook %s: headers: %w", h.ID, err)
		}
	}
	return out, nil
}

// sealContext binds a sealed field to its webhook.
func sealContext(id, field string) string { return "webhook:" + id + ":" + field }

// send makes the HTTP request of one attempt and fills r: to is delivered on a
// 2xx, failed when the destination is unsafe (no request was made), and left
// empty for the retry policy otherwise.
func (w *Worker) send(ctx context.Context, h *hook, d *Delivery, now time.Time, r *result) {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	start := time.Now()
	if err := w.Guard.CheckNow(ctx, h.url); err != nil {
		var unsafe *outbound.UnsafeError
		if errors.As(err, &unsafe) {
			r.to, r.errorMessage = DeliveryFailed, ptr(msgUnsafe)
			return
		}
		r.responseTimeMs = time.Since(start).Milliseconds()
		r.errorMessage = ptr("DNS resolution failed")
		return
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.url, bytes.NewReader([]byte(d.Body)))
	if err != nil {
		r.to, r.errorMessage = DeliveryFailed, ptr(msgUnsafe)
		return
	}
	ts := strconv.FormatInt(now.UnixMilli(), 10)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("X-Service-Delivery-Id", d.SentID())
	req.Header.Set("X-Service-Event-Id", d.EventID)
	req.Header.Set("X-Service-Event-Type", d.Event)
	req.Header.Set("X-Service-Timestamp", ts)
	if len(h.secret) > 0 {
		req.Header.Set("X-Service-Signature", Sign(h.secret, ts, []byte(d.Body)))
		req.Header.Set("X-Service-Signature-Timestamp", ts)
	}
	for _, hd := range h.headers {
		req.Header.Set(hd.Key, hd.Value)
	}
	resp, err := w.HTTP.Do(req)
	r.responseTimeMs = time.Since(start).Milliseconds()
	if err != nil {
		var unsafe *outbound.UnsafeError
		if errors.As(err, &unsafe) {
			r.to, r.errorMessage = DeliveryFailed, ptr(msgUnsafe)
			return
		}
		r.errorMessage = ptr(transportError(err))
		return
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 4*MaxResponseBody))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // let the connection be reused
	body := truncate(strings.ToValidUTF8(string(raw), "\uFFFD"), MaxResponseBody)
	r.responseStatus, r.responseBody = ptr(resp.StatusCode), &body
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		r.to = DeliveryDelivered
		return
	}
	r.errorMessage = ptr("HTTP " + strconv.Itoa(resp.StatusCode))
}

// transportError names a failed request without internal detail.
func transportError(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Client.Timeout"):
		return "Request timed out"
	case strings.Contains(err.Error(), "tls:") || strings.Contains(err.Error(), "x509:"):
		return "TLS handshake failed"
	case strings.Contains(err.Error(), "no such host"):
		return "DNS resolution failed"
	}
	return "Connection failed"
}

// truncate keeps the first n characters of s.
func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
