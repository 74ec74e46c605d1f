package webhook_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
)

// sentMail records what the mailer delivers from the mail queue.
type sentMail struct {
	mu   sync.Mutex
	sent []notify.Email
}

func (m *sentMail) SendEmail(_ context.Context, e notify.Email) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, e)
	return nil
}

func (m *sentMail) SendSMS(context.Context, string, string) error { return nil }

func (m *sentMail) to() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.sent {
		out = append(out, e.To)
	}
	slices.Sort(out)
	return out
}

// failingWorld is a world whose webhooks fail after 3 consecutive failed
// deliveries over an hour, with a mailer recording what the mail queue
// carries, and a webhook of A that makes one attempt a delivery.
func failingWorld(t *testing.T, rc *receiver) (*world, webhook.Webhook, *sentMail) {
	w := newWorldWith(t, []string{"WEBHOOK_FAILURE_THRESHOLD", "3", "WEBHOOK_FAILURE_WINDOW_HOURS", "1"}, rc)
	if w.worker.Failure != (webhook.FailurePolicy{Threshold: 3, Window: time.Hour}) {
		t.Fatalf("worker failure policy %+v: the settings are not wired", w.worker.Failure)
	}
	mail := &sentMail{}
	w.env.UseMailer(&notify.Worker{Send: mail, Log: w.worker.Log})
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in"), "retryPolicy": map[string]any{"maxRetries": 0}}))
	return w, wh, mail
}

func (w *world) raiseN(t *testing.T, n int) {
	for range n {
		w.raise(t, "device.offline", map[string]any{"deviceId": "d-1"})
	}
}

func (w *world) failedAudits(t *testing.T, id string) int {
	recs, err := audit.List(t.Context(), w.env.Store, audit.Tenant(w.a.ID, ""), 200)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Action == "webhook.failed" && r.ResourceID == id && r.Actor.Type == "system" {
			n++
		}
	}
	return n
}

// A receiver failing every delivery: three failed deliveries within the hour
// leave the webhook active (the run is not old enough); once the first of the
// run is an hour old, ten deliveries failing at once (one batch, handled
// concurrently) stop it exactly once: one webhook.failed audit row, one
// e-mail to each administrator of the organization (organizations:write,
// active) through the mail queue and none to a viewer or another
// organization. A failed webhook receives no new event.
func TestFailingWebhookStopsOnceAndTellsItsAdmins(t *testing.T) {
	rc := newReceiver(t, 500)
	w, wh, mail := failingWorld(t, rc)

	w.raiseN(t, 3)
	w.pump(t)
	if d := w.detail(t, wh.ID); d.Status != webhook.StatusActive || rc.count() != 3 || d.DeliveryStats.Failed != 3 {
		t.Fatalf("after 3 failures within the window: status %s, %d requests, %+v", d.Status, rc.count(), d.DeliveryStats)
	}

	w.env.Clock.Advance(time.Hour)
	w.signIn(t, aAdmin)
	w.raiseN(t, 10)
	w.pump(t)
	if d := w.detail(t, wh.ID); d.Status != webhook.StatusFailed {
		t.Fatalf("after 13 failures over an hour: status %s", d.Status)
	}
	if n := w.failedAudits(t, wh.ID); n != 1 {
		t.Errorf("%d webhook.failed audit rows, want 1", n)
	}
	w.env.DeliverMail(t)
	want := []string{w.emails[aAdmin], w.emails[aNoMFA], w.emails[aRestricted], w.emails[fixture.AGroupOnly]}
	slices.Sort(want)
	if got := mail.to(); !slices.Equal(got, want) {
		t.Errorf("mail to %v, want one each to A's admins %v", got, want)
	}
	for _, e := range mail.sent {
		if e.Subject == "" || !strings.Contains(e.Text, wh.ID) {
			t.Errorf("mail %+v does not name the webhook", e)
		}
	}

	seen := rc.count()
	w.raiseN(t, 2)
	w.pump(t)
	if rc.count() != seen || w.detail(t, wh.ID).DeliveryStats.Total != 13 {
		t.Errorf("a failed webhook received: %d requests (was %d)", rc.count(), seen)
	}
}

// A delivered delivery ends the run: two failures, a success, an hour, two
// failures leave the webhook active (without the reset, four failures the
// first an hour old would stop it).
func TestASuccessResetsTheRun(t *testing.T) {
	rc := newReceiver(t, 500, 500, 200, 500)
	w, wh, _ := failingWorld(t, rc)
	for range 3 {
		w.raiseN(t, 1)
		w.pump(t)
	}
	w.env.Clock.Advance(2 * time.Hour)
	w.signIn(t, aAdmin)
	w.raiseN(t, 2)
	w.pump(t)
	if d := w.detail(t, wh.ID); d.Status != webhook.StatusActive || d.DeliveryStats.Failed != 4 || d.DeliveryStats.Delivered != 1 {
		t.Fatalf("status %s, stats %+v", d.Status, d.DeliveryStats)
	}
	if n := w.failedAudits(t, wh.ID); n != 0 {
		t.Errorf("%d webhook.failed rows", n)
	}
}

// Re-enabled by PATCH status active, a failed webhook starts a new run and
// receives only events that happen from then on: an event raised while it was
// failed and still waiting in the queue when it was re-enabled is not
// delivered. The run that stopped it is over: a failure right after
// re-enabling (the receiver still failing) does not stop it again.
func TestReenabledWebhookResumesWithNewEventsOnly(t *testing.T) {
	rc := newReceiver(t, 500)
	w, wh, _ := failingWorld(t, rc)
	w.raiseN(t, 1)
	w.pump(t)
	w.env.Clock.Advance(time.Hour)
	w.signIn(t, aAdmin)
	w.raiseN(t, 2) // one batch: both read the run at 1 before either wrote
	w.pump(t)
	if d := w.detail(t, wh.ID); d.Status != webhook.StatusFailed {
		run, since, err := webhook.FailRun(t.Context(), w.worker.St, w.a.ID, wh.ID)
		var outcomes []string
		for _, dl := range w.deliveries(t, wh.ID, "").Data {
			outcomes = append(outcomes, fmt.Sprintf("%s/%d at %s", dl.Status, dl.Attempt, dl.CreatedAt))
		}
		t.Fatalf("status %s after 3 failures over an hour (run %d since %q %v; receiver saw %d; deliveries %v; now %s)",
			d.Status, run, since, err, rc.count(), outcomes, w.env.Clock.Now().Format(time.RFC3339Nano))
	}
	seen := rc.count()

	stale := w.raise(t, "device.offline", map[string]any{"deviceId": "raised-while-failed"}) // queued, not yet fanned out
	w.env.Clock.Advance(time.Second)
	var got webhook.Webhook
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+wh.ID, aAdmin, map[string]any{"status": "active"}), http.StatusOK).Decode(t, &got)
	if got.Status != webhook.StatusActive {
		t.Fatalf("PATCH answered %+v", got)
	}
	w.env.Clock.Advance(time.Second)
	fresh := w.raise(t, "device.offline", map[string]any{"deviceId": "raised-after"})
	w.pump(t)
	if rc.count() != seen+1 {
		t.Fatalf("%d requests after re-enabling, want 1", rc.count()-seen)
	}
	r, body := rc.request(seen)
	if id := r.Header.Get("X-Service-Event-Id"); id != fresh.Event.ID || id == stale.Event.ID {
		t.Errorf("delivered event %s (%s), want only the new one %s", id, body, fresh.Event.ID)
	}
	if d := w.detail(t, wh.ID); d.Status != webhook.StatusActive {
		t.Errorf("status %s after one failure of a new run", d.Status)
	}
	if n := w.failedAudits(t, wh.ID); n != 1 {
		t.Errorf("%d webhook.failed rows, want 1", n)
	}
}

// A delivery that fails because its webhook was not active (a test delivery
// of a paused webhook) is not the receiver's failure: the run does not grow.
func TestNotActiveFailuresAreNotCounted(t *testing.T) {
	rc := newReceiver(t, 500)
	w, wh, _ := failingWorld(t, rc)
	w.raiseN(t, 2)
	w.pump(t)
	run, since, err := webhook.FailRun(t.Context(), w.worker.St, w.a.ID, wh.ID)
	if err != nil || run != 2 || since == "" {
		t.Fatalf("run %d since %q (%v), want 2", run, since, err)
	}
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+wh.ID, aAdmin, map[string]any{"status": "paused"}), http.StatusOK)
	w.env.Clock.Advance(time.Second) // the test delivery sorts first
	fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	w.pump(t)
	l := w.deliveries(t, wh.ID, "?limit=1")
	if len(l.Data) != 1 || l.Data[0].ErrorMessage == nil || *l.Data[0].ErrorMessage != "Webhook is not active" {
		t.Fatalf("test delivery of a paused webhook: %+v", l.Data)
	}
	if run2, since2, err := webhook.FailRun(t.Context(), w.worker.St, w.a.ID, wh.ID); err != nil || run2 != 2 || since2 != since {
		t.Errorf("run %d since %q after a not-active failure, want 2 since %q (%v)", run2, since2, since, err)
	}
}
