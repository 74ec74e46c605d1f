package tests

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/tests/testenv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"
	"github.com/gale-rmm/gale/tests/fixture"
)

// hookSink is one HTTPS receiver recording the event types delivered to it.
type hookSink struct {
	srv   *httptest.Server
	mu    sync.Mutex
	types []string
}

func newHookSink(t *testing.T) *hookSink {
	s := &hookSink{}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var ev struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(body, &ev)
		s.mu.Lock()
		s.types = append(s.types, ev.Type)
		s.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	s.srv.Config.ErrorLog = nil
	s.srv.StartTLS()
	t.Cleanup(s.srv.Close)
	return s
}

func (s *hookSink) got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := slices.Clone(s.types)
	slices.Sort(out)
	return out
}

// TestElevationEventsReachOnlyTheOrganizationsWebhooks: the elevation.*
// events of a request of organization A are delivered to A's webhooks
// subscribed to them, and to no webhook of B (same partner) or C (another
// partner) subscribed to the same types, nor to A's webhook of other types.
func TestElevationEventsReachOnlyTheOrganizationsWebhooks(t *testing.T) {
	t.Parallel()
	fns := []string{"webhooks", "pam", "agents", "devices", "enrollment-keys"}
	w := fixture.NewWorld(t, fns...)
	sinks := map[string]*hookSink{"a": newHookSink(t), "a-other": newHookSink(t), "b": newHookSink(t), "c": newHookSink(t)}
	var pemBundle []byte
	for _, s := range sinks {
		pemBundle = append(pemBundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: s.srv.Certificate().Raw})...)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pemBundle, 0o600); err != nil {
		t.Fatal(err)
	}
	w.Env.Deps.Cfg.OutboundAllowCIDRs = []string{"127.0.0.1/32"}
	w.Env.Deps.Cfg.OutboundCAFile = ca
	w.API = fixture.API(t, w.Env, fns...)
	worker, err := webhookworkergroup.Worker(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	elevation := []string{"elevation.requested", "elevation.approved", "elevation.denied", "elevation.revoked"}
	for name, caller := range map[string]string{"a": fixture.AAdmin, "a-other": fixture.AAdmin, "b": fixture.BAdmin, "c": fixture.CAdmin} {
		evs := elevation
		if name == "a-other" {
			evs = []string{"device.offline"}
		}
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/webhooks", caller, map[string]any{"name": "hook " + name,
			"url": sinks[name].srv.URL + "/in", "events": evs}), http.StatusCreated)
	}
	devID, tok := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "ws-a1")
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+devID+"/elevation-requests", tok,
		map[string]any{"subject_username": `CORP\carol`, "target_executable_path": `C:\Tools\setup.exe`}), http.StatusCreated)
	id := res.JSON(t)["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+id+"/respond", fixture.ATech,
		map[string]any{"decision": "approve"}), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+id+"/revoke", fixture.AAdmin,
		map[string]any{"reason": "done"}), http.StatusOK)
	pumpWebhooks(t, w, worker.Handle)
	if got, want := sinks["a"].got(), []string{"elevation.approved", "elevation.requested", "elevation.revoked"}; !slices.Equal(got, want) {
		t.Fatalf("A's webhook got %v, want %v", got, want)
	}
	for _, name := range []string{"a-other", "b", "c"} {
		if got := sinks[name].got(); len(got) != 0 {
			t.Errorf("webhook %s got %v", name, got)
		}
	}

	// The control: B's and C's webhooks do receive their own organization's
	// requests (and A's receives nothing more).
	for _, o := range []struct{ caller, orgID, siteID string }{{fixture.BAdmin, w.B.ID, ""}, {fixture.CAdmin, w.C.ID, w.C1.ID}} {
		d, tk := w.Device(t, o.caller, o.orgID, o.siteID, "ws-"+o.orgID[:6])
		fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d+"/elevation-requests", tk,
			map[string]any{"subject_username": `CORP\dave`, "target_executable_path": `C:\Tools\x.exe`}), http.StatusCreated)
	}
	pumpWebhooks(t, w, worker.Handle)
	if got, want := sinks["a"].got(), []string{"elevation.approved", "elevation.requested", "elevation.revoked"}; !slices.Equal(got, want) {
		t.Fatalf("A's webhook got %v, want %v", got, want)
	}
	for _, name := range []string{"b", "c"} {
		if got := sinks[name].got(); !slices.Equal(got, []string{"elevation.requested"}) {
			t.Errorf("webhook %s got %v, want its own elevation.requested", name, got)
		}
	}
	if got := sinks["a-other"].got(); len(got) != 0 {
		t.Errorf("A's device.offline webhook got %v", got)
	}
}

// pumpWebhooks feeds the events and deliveries queues to the webhook worker
// until both are empty (the receivers answer 200: no retry waits).
func pumpWebhooks(t *testing.T, w *fixture.World, handle func(context.Context, events.SQSEvent) (events.SQSEventResponse, error)) {
	t.Helper()
	ctx := context.Background()
	for round := 0; round < 50; round++ {
		n := 0
		for _, name := range []string{"events", "webhook-deliveries"} {
			q := w.Env.Resources.Queues[name]
			msgs := testenv.Receive(t, w.Env.SQS, q.URL, 0)
			if len(msgs) == 0 {
				continue
			}
			batch := events.SQSEvent{}
			for _, m := range msgs {
				batch.Records = append(batch.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId), ReceiptHandle: aws.ToString(m.ReceiptHandle),
					Body: aws.ToString(m.Body), Attributes: m.Attributes, EventSource: "aws:sqs", EventSourceARN: q.ARN, AWSRegion: "us-east-1"})
			}
			resp, err := handle(ctx, batch)
			if err != nil || len(resp.BatchItemFailures) > 0 {
				t.Fatalf("worker: %v %+v", err, resp.BatchItemFailures)
			}
			for _, m := range msgs {
				if _, err := w.Env.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
			n += len(msgs)
		}
		if n == 0 {
			return
		}
	}
	t.Fatal("queues never drained")
}
