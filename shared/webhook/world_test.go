package webhook_test

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	sysAdmin    = fixture.SysAdmin
	pxAdmin     = fixture.PXAdmin
	pxTech      = "partner X technician" // beside fixture.World's cast
	pxSelectedB = fixture.PXSelectedB
	pyAdmin     = fixture.PYAdmin
	aAdmin      = fixture.AAdmin
	aNoMFA      = fixture.ANoMFA
	aViewer     = fixture.AViewer
	aRestricted = fixture.ARestricted
	bAdmin      = fixture.BAdmin
	cAdmin      = fixture.CAdmin
)

// dns is a resolver whose answers a test changes (rebinding).
type dns struct {
	mu sync.Mutex
	m  map[string][]string
}

func (d *dns) set(host string, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.m[host] = addrs
}

func (d *dns) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	d.mu.Lock()
	r := resolver(d.m)
	d.mu.Unlock()
	return r.LookupNetIP(ctx, network, host)
}

// receiver is a local HTTPS endpoint answering a script of statuses (the last
// one repeats) and recording every request.
type receiver struct {
	srv    *httptest.Server
	mu     sync.Mutex
	script []int
	got    []*http.Request
	bodies [][]byte
	// handler, when set, answers instead of the script.
	handler http.HandlerFunc
}

func newReceiver(t testing.TB, script ...int) *receiver {
	rc := &receiver{script: script}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rc.mu.Lock()
		rc.got = append(rc.got, r)
		rc.bodies = append(rc.bodies, body)
		n := len(rc.got)
		h := rc.handler
		status := http.StatusOK
		if len(rc.script) > 0 {
			status = rc.script[min(n, len(rc.script))-1]
		}
		rc.mu.Unlock()
		if h != nil {
			h(w, r)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(`{"received":` + strconv.Itoa(n) + `}`))
	}))
	rc.srv.Config.ErrorLog = nil
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return len(rc.got)
}

func (rc *receiver) request(i int) (*http.Request, []byte) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[i], rc.bodies[i]
}

func (rc *receiver) port() string { return strconv.Itoa(rc.srv.Listener.Addr().(*net.TCPAddr).Port) }

// url is the receiver's URL at path, by IP literal.
func (rc *receiver) url(path string) string { return "https://127.0.0.1:" + rc.port() + path }

// caFile writes the receivers' certificates as a PEM bundle (WEBHOOK_CA_FILE).
func caFile(t testing.TB, rcs ...*receiver) string {
	path := filepath.Join(t.TempDir(), "ca.pem")
	var out []byte
	for _, rc := range rcs {
		out = append(out, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rc.srv.Certificate().Raw})...)
	}
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// recordingQueue sends through SQS without the delay (the test moves the fake
// clock instead) and records the DelaySeconds each message asked for.
type recordingQueue struct {
	inner  webhook.Queue
	clock  clock.Clock
	mu     sync.Mutex
	delays map[string][]int32  // by queue URL
	sends  map[string][]string // by queue URL: each send's instant, delay and body
}

func (q *recordingQueue) Send(ctx context.Context, url string, msgs ...webhook.Message) error {
	q.mu.Lock()
	at := q.clock.Now().UnixMilli()
	for i := range msgs {
		q.delays[url] = append(q.delays[url], msgs[i].DelaySeconds)
		q.sends[url] = append(q.sends[url], fmt.Sprint(at, " ", msgs[i].DelaySeconds, " ", msgs[i].Body))
		msgs[i].DelaySeconds = 0
	}
	q.mu.Unlock()
	return q.inner.Send(ctx, url, msgs...)
}

// distinct is recorded(url) without repeated sends. SQS delivers a message
// at least once (an SDK retry of an applied SendMessage makes two), and each
// copy of a job that only hops sends the same next hop at the same instant;
// the claim then makes the attempt once.
func (q *recordingQueue) distinct(url string) []int32 {
	q.mu.Lock()
	defer q.mu.Unlock()
	var out []int32
	seen := map[string]bool{}
	for i, key := range q.sends[url] {
		if !seen[key] {
			seen[key] = true
			out = append(out, q.delays[url][i])
		}
	}
	return out
}

func (q *recordingQueue) recorded(url string) []int32 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]int32(nil), q.delays[url]...)
}

// world is fixture.World (two partners: X with organizations A and B, Y
// with C; one caller per role, and a partner technician) with the webhook
// pieces layered on it: the webhooks routes on a service whose resolver the
// test controls, the admin routes, the worker and receivers. Its lower-case
// fields are the World's, under the names this package's tests use.
type world struct {
	*fixture.World
	env    *testenv.Env
	api    http.Handler
	worker *webhook.Worker
	queue  *recordingQueue
	dns    *dns
	px, py tenant.Partner
	a, b   tenant.Organization
	c      tenant.Organization
	tokens map[string]string
	emails map[string]string // by caller
	ids    map[string]string // user ids by caller
	claims map[string]fixture.Member
}

func newWorld(t testing.TB, rcs ...*receiver) *world {
	t.Helper()
	return newWorldWith(t, nil, rcs...)
}

// newWorldWith is newWorld with more environment settings (name, value, ...).
func newWorldWith(t testing.TB, settings []string, rcs ...*receiver) *world {
	t.Helper()
	vars := append([]string{"WEBHOOK_ALLOW_CIDRS", "127.0.0.1/32"}, settings...)
	if len(rcs) > 0 {
		vars = append(vars, "WEBHOOK_CA_FILE", caFile(t, rcs...))
	}
	fw := fixture.NewWorldWith(t, vars, "admin")
	env := fw.Env
	w := &world{World: fw, env: env, px: fw.PX, py: fw.PY, a: fw.A, b: fw.B, c: fw.C,
		tokens: fw.Tokens, emails: fw.Emails, ids: fw.Users, claims: fw.Members, dns: &dns{m: map[string][]string{
			"hooks.example.com": {"93.184.216.34"}, "example.com": {"127.0.0.1"}}}}
	svc, err := webhooksgroup.Service(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	svc.Guard.Resolver = w.dns
	rt := env.Router()
	(&webhook.Handler{Svc: svc}).Routes(rt)
	hooks := env.Edge(rt)
	w.api = http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/api/v1/webhooks") {
			hooks.ServeHTTP(rw, r)
			return
		}
		fw.API.ServeHTTP(rw, r)
	})
	if w.worker, err = webhookworkergroup.Worker(env.Deps); err != nil {
		t.Fatal(err)
	}
	w.worker.Guard.Resolver = w.dns
	w.queue = &recordingQueue{inner: w.worker.Queue, clock: env.Clock, delays: map[string][]int32{}, sends: map[string][]string{}}
	w.worker.Queue = w.queue

	m := fixture.Member{Scope: authz.ScopePartner, PartnerID: w.px.ID, RoleID: role.PartnerTechnicianID, OrgAccess: authz.OrgAccessAll, MFA: true}
	c := fixture.User(t, env, m)
	w.tokens[pxTech], w.emails[pxTech], w.ids[pxTech], w.claims[pxTech] = c.Token, c.Email, c.UserID, m
	return w
}

// signIn gives caller a new session at the fake clock's time (a test that
// moves the clock past the access token's lifetime calls it).
func (w *world) signIn(t testing.TB, caller string) {
	t.Helper()
	m := w.claims[caller]
	pair, sw, err := w.env.Sessions.Start(w.ids[caller], session.Claims{Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, MFA: m.MFA},
		"127.0.0.1", "fixture")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.env.Store.Do(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	w.tokens[caller] = pair.AccessToken
}

// call serves one request as caller.
func (w *world) call(t testing.TB, method, path, caller string, body any) fixture.Response {
	t.Helper()
	tok, ok := w.tokens[caller]
	if !ok {
		t.Fatalf("no caller %q", caller)
	}
	return fixture.Do(t, w.api, fixture.Request{Method: method, Path: path, Token: tok, Body: body})
}

// create makes a webhook as caller and returns it.
func (w *world) create(t testing.TB, caller string, body map[string]any) webhook.Webhook {
	t.Helper()
	var wh webhook.Webhook
	fixture.Expect(t, w.call(t, http.MethodPost, "/api/v1/webhooks", caller, body), http.StatusCreated).Decode(t, &wh)
	return wh
}

// pump feeds the emulator's events and deliveries queues to the worker, as
// the Lambda event sources would (batches of up to 10, failed records left in
// the queue), until both are empty. After each round it moves the fake clock
// by the longest delay that round asked for, so attempts happen at the
// schedule's times. It returns the number of records handled.
func (w *world) pump(t testing.TB) int {
	t.Helper()
	ctx := context.Background()
	total := 0
	var wait int32 // seconds a receive waits: 1 after a round that sent deliveries
	for round := 0; round < 200; round++ {
		before := len(w.queue.recorded(w.env.Cfg.DeliveryQueueURL))
		n := 0
		for _, name := range []string{"events", "webhook-deliveries"} {
			q := w.env.Resources.Queues[name]
			// A round that sent deliveries expects them: the receive long-polls
			// for them (as Lambda's event source does) rather than taking one
			// empty short poll for a drained queue (seen once under load).
			msgs := testenv.Receive(t, w.env.SQS, q.URL, waitFor(name, wait))
			if len(msgs) == 0 {
				continue
			}
			batch := events.SQSEvent{}
			for _, m := range msgs {
				batch.Records = append(batch.Records, events.SQSMessage{MessageId: aws.ToString(m.MessageId),
					ReceiptHandle: aws.ToString(m.ReceiptHandle), Body: aws.ToString(m.Body), Attributes: m.Attributes,
					EventSource: "aws:sqs", EventSourceARN: q.ARN, AWSRegion: "us-east-1"})
			}
			resp, err := w.worker.Handle(ctx, batch)
			if err != nil {
				t.Fatal(err)
			}
			failed := map[string]bool{}
			for _, f := range resp.BatchItemFailures {
				failed[f.ItemIdentifier] = true
			}
			if len(failed) > 0 {
				t.Fatalf("worker failed %d records of %s", len(failed), name)
			}
			for _, m := range msgs {
				if _, err := w.env.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q.URL), ReceiptHandle: m.ReceiptHandle}); err != nil {
					t.Fatal(err)
				}
			}
			n += len(msgs)
		}
		if n == 0 {
			return total
		}
		total += n
		var longest int32
		sent := w.queue.recorded(w.env.Cfg.DeliveryQueueURL)[before:]
		for _, d := range sent {
			longest = max(longest, d)
		}
		wait = 0
		if len(sent) > 0 {
			wait = 1
		}
		w.env.Clock.Advance(time.Duration(longest) * time.Second)
	}
	t.Fatal("queues never drained")
	return total
}

// waitFor is the long poll of a pump's receive from queue name.
func waitFor(name string, wait int32) int32 {
	if name == "webhook-deliveries" {
		return wait
	}
	return 0
}

// dlq receives what the deliveries' dead-letter queue holds (and leaves it).
func (w *world) dlq(t testing.TB) []webhook.Job {
	t.Helper()
	ctx := context.Background()
	out, err := w.env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(w.env.Cfg.DeliveryDLQURL), MaxNumberOfMessages: 10})
	if err != nil {
		t.Fatal(err)
	}
	var jobs []webhook.Job
	for _, m := range out.Messages {
		if _, err := w.env.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: aws.String(w.env.Cfg.DeliveryDLQURL),
			ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
			t.Fatal(err)
		}
		var j webhook.Job
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &j); err != nil {
			t.Fatal(err)
		}
		jobs = append(jobs, j)
	}
	return jobs
}
