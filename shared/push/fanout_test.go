package push_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/app/pushgroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/notify/awsnotify"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/push"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
)

func email(t *testing.T, w *fixture.World, caller string) string {
	t.Helper()
	var u struct {
		Email string `dynamodbav:"email"`
	}
	if err := w.Env.Store.Get(context.Background(), "USER#"+w.Users[caller], "PROFILE", &u); err != nil {
		t.Fatal(err)
	}
	return u.Email
}

// TestMobileFanOut: a pending request sends one mobile approval request to
// each eligible approver with a push target (technicians and admins of the
// organization and its partner holding devices:execute over the device's
// site) and one push message per target; never to the subject, a viewer, a
// technician of another site, another organization of the partner, another
// partner or the platform's system scope. The fan-out makes 3 + 1 DynamoDB
// calls for one batch; the first decision closes the siblings.
func TestMobileFanOut(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, groups...)
	fixture.Expect(t, register(t, w, fixture.ATech, "apns", apnsToken(1)), http.StatusCreated)
	fixture.Expect(t, register(t, w, fixture.ATech, "fcm", fcmToken("tech")), http.StatusCreated)
	for i, c := range []string{fixture.AAdmin, fixture.ARestricted, fixture.AGroupOnly, fixture.AViewer, fixture.PXAdmin,
		fixture.PXSelectedB, fixture.PYAdmin, fixture.BAdmin, fixture.CAdmin, fixture.SysAdmin} {
		fixture.Expect(t, register(t, w, c, "fcm", fcmToken(string(rune('a'+i)))), http.StatusCreated)
	}
	pushes(t, w) // nothing so far
	devID, tok := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "ws-a1")
	subject := `CORP\` + strings.Split(email(t, w, fixture.AAdmin), "@")[0] // the org admin asks
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+devID+"/elevation-requests", tok,
		map[string]any{"subject_username": subject, "target_executable_path": `C:\Tools\setup.exe`}), http.StatusCreated)
	var out struct{ ID, Status string }
	res.Decode(t, &out)
	if out.Status != "pending" {
		t.Fatalf("ingest %s", res.Body)
	}
	// Nothing of the fan-out ran in the request: the event written in its
	// transaction queues it, and the webhook-worker runs it.
	if got := approvals(t, w, w.A.ID, out.ID); len(got) != 0 {
		t.Fatalf("the ingest request fanned out: %v", got)
	}
	if n := len(pushes(t, w)); n != 0 {
		t.Fatalf("the ingest request sent %d pushes", n)
	}
	evs := consume(t, w)
	rows := approvals(t, w, w.A.ID, out.ID)
	if got, want := names(w, rows, "pending"), fixture.Sorted(fixture.ATech, fixture.ARestricted, fixture.PXAdmin); !slices.Equal(got, want) {
		t.Fatalf("approvers %v, want %v", got, want)
	}
	msgs := pushes(t, w)
	if len(msgs) != 4 { // the technician's two phones, the restricted admin's, the partner admin's
		t.Fatalf("%d push messages: %+v", len(msgs), msgs)
	}
	for _, m := range msgs {
		if m.Data["elevationRequestId"] != out.ID || m.Data["orgId"] != w.A.ID || m.Subject != push.PushTitle ||
			strings.Contains(m.Text, "setup.exe") || m.Data["expiresAt"] != clock.Format(w.Env.Clock.Now().Add(push.MobileLifetime)) {
			t.Fatalf("push %+v", m)
		}
	}
	as, _ := push.Store{St: w.Env.Store}.Approvals(context.Background(), w.A.ID, out.ID)
	if len(as) == 0 || as[0].ExpiresAt != clock.Format(w.Env.Clock.Now().Add(push.MobileLifetime)) {
		t.Fatalf("approval rows %+v", as)
	}
	// The queue redelivers the event (a failed or timed-out run): the rows
	// are written once, the pushes of the pending ones sent again with the
	// same approval ids.
	redeliver(t, w, evs)
	again, _ := push.Store{St: w.Env.Store}.Approvals(context.Background(), w.A.ID, out.ID)
	if len(again) != len(as) || again[0].ID != as[0].ID {
		t.Fatalf("redelivery rewrote the rows: %+v, was %+v", again, as)
	}
	if n := len(pushes(t, w)); n != 4 {
		t.Fatalf("redelivery sent %d pushes, want the 4 again", n)
	}

	// The fan-out's own cost, for a request of site A2 by someone else: two
	// member queries, one BatchGetItem, one transaction.
	site := w.A2.ID
	r := &pam.Request{ID: pam.NewRequestID(w.Env.Clock.Now()), OrgID: w.A.ID, PartnerID: w.PX.ID, DeviceID: devID, SiteID: &site,
		Status: pam.StatusPending, SubjectUsername: `CORP\someone`, FlowType: pam.FlowUAC, RequestedAt: clock.Format(w.Env.Clock.Now())}
	if err := w.Env.Store.Do(context.Background(), pam.CreateRequestWrite(r, w.Env.Cfg.PAMPendingTTL)); err != nil {
		t.Fatal(err)
	}
	ctx, calls := store.WithCalls(context.Background())
	if err := pushgroup.Mobile(w.Env.Deps).FanOut(ctx, r); err != nil {
		t.Fatal(err)
	}
	fixture.Budget(t, fixture.Response{DBCalls: calls.N()}, 4)
	if calls.N() != 4 {
		t.Fatalf("fan-out made %d DynamoDB calls, documented 4", calls.N())
	}
	if got, want := names(w, approvals(t, w, w.A.ID, r.ID), "pending"), fixture.Sorted(fixture.ATech, fixture.AAdmin, fixture.PXAdmin); !slices.Equal(got, want) {
		t.Fatalf("site A2 approvers %v, want %v", got, want)
	}
	if n := len(pushes(t, w)); n != 4 {
		t.Fatalf("site A2: %d pushes", n)
	}

	// The first decision: the decider's row decided, the siblings expired.
	// Respond's budget grows by the Query of the rows and their transaction
	// (a request without mobile approvals reads nothing more).
	res = fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+out.ID+"/respond", fixture.ATech,
		map[string]any{"decision": "approve"}), http.StatusOK)
	fixture.Budget(t, res, 4+2)
	rows = approvals(t, w, w.A.ID, out.ID)
	if got := names(w, rows, "decided"); !slices.Equal(got, []string{fixture.ATech}) {
		t.Fatalf("decided %v (%v)", got, rows)
	}
	if got := names(w, rows, "expired"); !slices.Equal(got, fixture.Sorted(fixture.ARestricted, fixture.PXAdmin)) {
		t.Fatalf("expired %v", got)
	}
	// The other request's rows are untouched.
	if got := names(w, approvals(t, w, w.A.ID, r.ID), "pending"); len(got) != 3 {
		t.Fatalf("sibling request's rows %v", got)
	}

	// A request decided before its fan-out wrote anything: no rows, no push.
	r3 := *r
	r3.ID = pam.NewRequestID(w.Env.Clock.Now())
	r3.Keys = store.Keys{}
	if err := w.Env.Store.Do(context.Background(), pam.CreateRequestWrite(&r3, w.Env.Cfg.PAMPendingTTL)); err != nil {
		t.Fatal(err)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+r3.ID+"/respond", fixture.AAdmin,
		map[string]any{"decision": "deny"}), http.StatusOK)
	if err := pushgroup.Mobile(w.Env.Deps).FanOut(context.Background(), &r3); err != nil {
		t.Fatal(err)
	}
	if got := approvals(t, w, w.A.ID, r3.ID); len(got) != 0 {
		t.Fatalf("a decided request fanned out: %v", got)
	}
	if n := len(pushes(t, w)); n != 0 {
		t.Fatalf("a decided request sent %d pushes", n)
	}

	// A request that is not pending fans out nothing.
	r2 := *r
	r2.ID, r2.Status = pam.NewRequestID(w.Env.Clock.Now()), pam.StatusAutoApproved
	if err := pushgroup.Mobile(w.Env.Deps).FanOut(context.Background(), &r2); err != nil {
		t.Fatal(err)
	}
	if got := approvals(t, w, w.A.ID, r2.ID); len(got) != 0 {
		t.Fatalf("auto-approved request fanned out: %v", got)
	}
}

// TestMobileExpiry: the sweeper's expiry of a pending request closes its
// mobile approval requests too, every one as expired.
func TestMobileExpiry(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, groups...)
	fixture.Expect(t, register(t, w, fixture.ATech, "fcm", fcmToken("tech")), http.StatusCreated)
	devID, tok := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "ws-a1")
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+devID+"/elevation-requests", tok,
		map[string]any{"subject_username": `CORP\carol`, "target_executable_path": `C:\Tools\setup.exe`}), http.StatusCreated)
	id := res.JSON(t)["id"].(string)
	consume(t, w)
	if got := names(w, approvals(t, w, w.A.ID, id), "pending"); !slices.Equal(got, []string{fixture.ATech}) {
		t.Fatalf("approvers %v", got)
	}
	w.Env.Clock.Advance(w.Env.Cfg.PAMPendingTTL + 1)
	if _, err := pamgroup.Service(w.Env.Deps).Expire(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := names(w, approvals(t, w, w.A.ID, id), "expired"); !slices.Equal(got, []string{fixture.ATech}) {
		t.Fatalf("after expiry %v", approvals(t, w, w.A.ID, id))
	}
}

// TestPushDelivery: the mailer delivers push messages through SNS platform
// endpoints (moto), one endpoint per token, and drops the messages of a
// platform with no platform application.
func TestPushDelivery(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users")
	ctx := context.Background()
	client := sns.NewFromConfig(w.Env.AWS)
	apps := map[string]string{}
	for _, p := range []string{"APNS", "GCM"} {
		out, err := client.CreatePlatformApplication(ctx, &sns.CreatePlatformApplicationInput{Name: aws.String("gale-" + strings.ToLower(p) + "-" + w.A.ID[:8]),
			Platform: aws.String(p), Attributes: map[string]string{"PlatformCredential": "test", "PlatformPrincipal": "test"}})
		if err != nil {
			t.Fatal(err)
		}
		apps[p] = aws.ToString(out.PlatformApplicationArn)
	}
	n := awsnotify.New(w.Env.AWS, "no-reply@gale.example.com")
	n.APNSApp, n.FCMApp = apps["APNS"], apps["GCM"]
	worker := &notify.Worker{Send: n, Push: n, Log: w.Env.Log}
	q := w.Env.Notify
	msgs := []notify.Message{
		{Kind: notify.KindPush, To: apnsToken(3), Platform: "apns", Subject: push.PushTitle, Text: push.PushText, Data: map[string]string{"elevationRequestId": "r1"}},
		{Kind: notify.KindPush, To: fcmToken("d"), Platform: "fcm", Subject: push.PushTitle, Text: push.PushText, Data: map[string]string{"elevationRequestId": "r1"}},
	}
	if err := q.EnqueueAll(ctx, msgs); err != nil {
		t.Fatal(err)
	}
	var ev events.SQSEvent
	for _, m := range pushes(t, w) {
		body, _ := jsonString(m)
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: m.Platform, Body: body})
	}
	if len(ev.Records) != 2 {
		t.Fatalf("%d queued", len(ev.Records))
	}
	out, err := worker.Handle(ctx, ev)
	if err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("delivery failed: %v %+v", err, out.BatchItemFailures)
	}
	for p, tok := range map[string]string{"APNS": apnsToken(3), "GCM": fcmToken("d")} {
		eps, err := client.ListEndpointsByPlatformApplication(ctx, &sns.ListEndpointsByPlatformApplicationInput{PlatformApplicationArn: aws.String(apps[p])})
		if err != nil {
			t.Fatal(err)
		}
		if len(eps.Endpoints) != 1 || eps.Endpoints[0].Attributes["Token"] != tok {
			t.Fatalf("%s endpoints %+v", p, eps.Endpoints)
		}
	}
	// Delivering the same token again reuses its endpoint.
	if out, err := worker.Handle(ctx, ev); err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("second delivery: %v %+v", err, out.BatchItemFailures)
	}
	// No platform application: dropped, not retried.
	n.FCMApp = ""
	if out, err := worker.Handle(ctx, events.SQSEvent{Records: ev.Records[1:]}); err != nil || len(out.BatchItemFailures) != 0 {
		t.Fatalf("unconfigured platform: %v %+v", err, out.BatchItemFailures)
	}
}

// consume drains the events queue into the webhook-worker (the consumer that
// runs the mobile fan-out) and returns the events.
func consume(t *testing.T, w *fixture.World) []map[string]any {
	t.Helper()
	evs := fixture.Events(t, w)
	redeliver(t, w, evs)
	return evs
}

// redeliver hands evs to the webhook-worker as messages of the events queue.
func redeliver(t *testing.T, w *fixture.World, evs []map[string]any) {
	t.Helper()
	wk, err := webhookworkergroup.Worker(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	var batch events.SQSEvent
	for i, ev := range evs {
		body, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		batch.Records = append(batch.Records, events.SQSMessage{MessageId: fmt.Sprint("m", i), Body: string(body),
			EventSourceARN: "arn:aws:sqs:us-east-1:000000000000:" + app.QueueName(w.Env.Cfg.EventsQueueURL)})
	}
	resp, err := wk.Handle(context.Background(), batch)
	if err != nil || len(resp.BatchItemFailures) > 0 {
		t.Fatalf("events worker: %v %+v", err, resp.BatchItemFailures)
	}
}
