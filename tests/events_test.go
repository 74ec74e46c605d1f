package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/app/mailergroup"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/app/webhookworkergroup"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/sweep"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// The recorded trigger events of events/ replayed through each function's real
// handler. See events/README.md for the layout and naming.

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// httpEventName is <name>.<expected status>.json.
var httpEventName = regexp.MustCompile(`^([a-z0-9-]+)\.([1-5][0-9][0-9])\.json$`)

func eventsDir(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "events")
		}
		if parent := filepath.Dir(dir); parent != dir {
			dir = parent
			continue
		}
		t.Fatal("no go.mod above the test directory")
	}
}

// files lists events/<function>/*.json.
func files(t *testing.T, function string) []string {
	t.Helper()
	out, err := filepath.Glob(filepath.Join(eventsDir(t), function, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// load strictly decodes a recorded event, so a misspelt field fails the test
// instead of silently being dropped.
func load(t *testing.T, path string, v any) { loadSeeded(t, path, nil, v) }

// placeholder is {{name}} in a recording: a value of the seeded world
// (seedReplay), so that a successful call's recording holds no credential.
var placeholder = regexp.MustCompile(`\{\{(\w+)\}\}`)

// loadSeeded is load with every placeholder replaced by its value in seed;
// one the seed does not know fails the test.
func loadSeeded(t *testing.T, path string, seed map[string]string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b = placeholder.ReplaceAllFunc(b, func(m []byte) []byte {
		val, ok := seed[string(m[2:len(m)-2])]
		if !ok {
			t.Fatalf("%s: unknown placeholder %s", path, m)
		}
		return []byte(val)
	})
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

func TestEveryFunctionHasRecordedEvents(t *testing.T) {
	entries, err := os.ReadDir(eventsDir(t))
	if err != nil {
		t.Fatal(err)
	}
	fns := routes.Functions()
	for _, e := range entries {
		if e.IsDir() && !slices.Contains(fns, e.Name()) {
			t.Errorf("events/%s is not a function of the route table", e.Name())
		}
	}
	for _, fn := range fns {
		if len(files(t, fn)) == 0 {
			t.Errorf("function %s has no recorded event in events/%s", fn, fn)
		}
	}
	// The main route groups replay a successful call too, not only refusals
	// (issue 35: 2 of 48 recordings were successes).
	for _, fn := range []string{"auth", "api-keys", "devices", "webhooks", "pam", "organizations", "sites", "roles", "health"} {
		if !slices.ContainsFunc(files(t, fn), func(p string) bool {
			m := httpEventName.FindStringSubmatch(filepath.Base(p))
			return m != nil && m[2][0] == '2'
		}) {
			t.Errorf("events/%s has no recording of a successful call (<name>.2xx.json)", fn)
		}
	}
}

// recordedPassword is the seeded admin's password, in auth/login.200.json.
const recordedPassword = "Recorded-Password-1!"

// seedReplay gives the recordings of successful calls what they act on: an
// organization whose admin (recorded-admin@example.com) has a session that
// passed MFA, an enrolled device and a pending elevation request. It returns
// the placeholders' values: accessToken, orgId, deviceId, elevationRequestId.
func seedReplay(t *testing.T, env *testenv.Env) map[string]string {
	t.Helper()
	p := fixture.Partner(t, env, "Recorded Partner")
	o := fixture.Org(t, env, p.ID, "Recorded Org")
	admin := fixture.User(t, env, fixture.Member{Email: "recorded-admin@example.com", Password: recordedPassword,
		Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	w := &fixture.World{Env: env, API: fixture.API(t, env), Tokens: map[string]string{"admin": admin.Token}}
	dev, tok := w.Device(t, "admin", o.ID, "", "ws-recorded")
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+dev+"/elevation-requests", tok, map[string]any{
		"subject_username": `CORP\carol`, "target_executable_path": `C:\Tools\setup.exe`, "target_executable_signer": "Contoso Ltd",
		"pid": 4242, "parent_image": `C:\Windows\explorer.exe`, "command_line": `"C:\Tools\setup.exe" /quiet`,
		"observed_at": "2026-11-01T08:59:59.000Z"}), http.StatusCreated)
	var e struct{ ID string }
	res.Decode(t, &e)
	return map[string]string{"accessToken": admin.Token, "orgId": o.ID, "deviceId": dev, "elevationRequestId": e.ID}
}

func TestReplayHTTPEvents(t *testing.T) {
	env := testenv.New(t)
	seed := seedReplay(t, env)
	builders := groups.Builders()
	for _, g := range routes.Groups {
		fn := g.Function
		paths := files(t, fn)
		if len(paths) == 0 {
			continue // reported by TestEveryFunctionHasRecordedEvents
		}
		h, err := builders[fn](env.Deps)
		if err != nil {
			t.Fatalf("build %s: %v", fn, err)
		}
		proxy := httpadapter.NewV2(h).ProxyWithContext
		for _, path := range paths {
			base := filepath.Base(path)
			t.Run(fn+"/"+base, func(t *testing.T) {
				m := httpEventName.FindStringSubmatch(base)
				if m == nil {
					t.Fatalf("%s: name it <name>.<expected status>.json", base)
				}
				want, _ := strconv.Atoi(m[2])
				var ev events.APIGatewayV2HTTPRequest
				loadSeeded(t, path, seed, &ev)
				checkHTTPEvent(t, fn, ev)

				res, err := proxy(context.Background(), ev)
				if err != nil {
					t.Fatalf("handler error: %v", err)
				}
				if res.StatusCode != want {
					t.Fatalf("%s %s answered %d %s, want %d (rename the file when a feature lands)",
						ev.RequestContext.HTTP.Method, ev.RawPath, res.StatusCode, res.Body, want)
				}
				if !strings.HasPrefix(header(res.Headers, "Content-Type"), "application/json") {
					t.Errorf("Content-Type = %q, want JSON", header(res.Headers, "Content-Type"))
				}
				if header(res.Headers, "X-Request-Id") == "" {
					t.Error("no X-Request-Id header")
				}
				if res.StatusCode >= 400 {
					var body map[string]any
					if err := json.Unmarshal([]byte(res.Body), &body); err != nil {
						t.Fatalf("error body %q is not JSON: %v", res.Body, err)
					}
					if body["error"] == nil || body["code"] == nil || body["requestId"] != header(res.Headers, "X-Request-Id") {
						t.Errorf("error body %s is not the envelope {error, code, requestId}", res.Body)
					}
				}
			})
		}
	}
}

// checkHTTPEvent keeps the recordings honest: payload v2 as API Gateway sends
// it, addressed to the function whose folder holds it.
func checkHTTPEvent(t *testing.T, fn string, ev events.APIGatewayV2HTTPRequest) {
	t.Helper()
	rc := ev.RequestContext
	if ev.Version != "2.0" || ev.RouteKey == "" || ev.RouteKey != rc.RouteKey || rc.RequestID == "" || rc.TimeEpoch == 0 {
		t.Errorf("not an API Gateway payload 2.0 event: version %q routeKey %q requestId %q timeEpoch %d",
			ev.Version, ev.RouteKey, rc.RequestID, rc.TimeEpoch)
	}
	if rc.HTTP.Method == "" || rc.HTTP.Path != ev.RawPath || rc.HTTP.SourceIP == "" {
		t.Errorf("requestContext.http %+v does not match rawPath %q", rc.HTTP, ev.RawPath)
	}
	if g, ok := routes.Lookup(ev.RawPath); !ok || g.Function != fn {
		t.Errorf("%s belongs to %q, not to %s", ev.RawPath, g.Function, fn)
	}
	for k := range ev.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header %q is not lowercase (API Gateway lowercases them)", k)
		}
	}
	if ev.Body != "" && !ev.IsBase64Encoded && !json.Valid([]byte(ev.Body)) && strings.HasPrefix(ev.Headers["content-type"], "application/json") {
		t.Errorf("body is not the JSON its content-type says")
	}
}

func header(h map[string]string, name string) string {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// TestReplayQueueWorkerEvents replays the recorded SQS batches of every queue
// consumer (routes.Queues) through its handler.
func TestReplayQueueWorkerEvents(t *testing.T) {
	env := testenv.New(t)
	// Recordings name the deployed queues (gale-events, ...); point them at this
	// environment's queues so the worker's own wiring decides what is an event.
	arns := map[string]string{}
	for name, q := range env.Resources.Queues {
		arns[":gale-"+name] = q.ARN
	}
	w, err := webhookworkergroup.Worker(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	handlers := map[string]func(context.Context, events.SQSEvent) (events.SQSEventResponse, error){
		"webhook-worker": w.Handle,
		"mailer":         mailergroup.Worker(env.Deps, mailergroup.Notifier(env.Deps)).Handle,
	}
	for _, q := range routes.Queues {
		if handlers[q.Consumer] == nil {
			t.Fatalf("queue %s: no handler for its consumer %s", q.Name, q.Consumer)
		}
	}
	for consumer, handle := range handlers {
		n := 0
		for _, path := range files(t, consumer) {
			if strings.HasSuffix(path, ".response.json") {
				continue
			}
			n++
			t.Run(consumer+"/"+filepath.Base(path), func(t *testing.T) {
				var batch events.SQSEvent
				load(t, path, &batch)
				for i, r := range batch.Records {
					if r.EventSource != "aws:sqs" || r.MessageId == "" {
						t.Fatalf("record %d is not an SQS record", i)
					}
					for suffix, arn := range arns {
						if strings.HasSuffix(r.EventSourceARN, suffix) {
							batch.Records[i].EventSourceARN = arn
						}
					}
					if batch.Records[i].EventSourceARN == r.EventSourceARN {
						t.Fatalf("record %d comes from %s, not a queue of routes.Queues", i, r.EventSourceARN)
					}
				}
				var want events.SQSEventResponse
				load(t, strings.TrimSuffix(path, ".json")+".response.json", &want)

				got, err := handle(context.Background(), batch)
				if err != nil {
					t.Fatalf("worker failed the whole batch: %v", err)
				}
				if g, w := failed(got), failed(want); !slices.Equal(g, w) {
					t.Fatalf("batchItemFailures %v, want %v", g, w)
				}
			})
		}
		if n == 0 {
			t.Fatalf("no recorded SQS batch for %s", consumer)
		}
	}
}

// TestReplayChannelEvents replays the agent channel's events
// (<name>.<status>.json: the $connect authorizer's and the WebSocket
// routes') through the function's entry point; an authorizer's
// "Unauthorized" is the handshake's 401, its Allow 200, and an answer with a
// body (a refused handshake, a frame's reply) is JSON.
func TestReplayChannelEvents(t *testing.T) {
	env := testenv.New(t)
	h := agentchannelgroup.Handler(env.Deps)
	for _, path := range files(t, "agent-channel") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			m := httpEventName.FindStringSubmatch(filepath.Base(path))
			if m == nil {
				t.Fatalf("%s: name it <name>.<expected status>.json", path)
			}
			want, _ := strconv.Atoi(m[2])
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out, err := h.Invoke(context.Background(), raw)
			var res events.APIGatewayProxyResponse
			switch r := out.(type) {
			case events.APIGatewayProxyResponse:
				res = r
			case events.APIGatewayCustomAuthorizerResponse:
				res.StatusCode = http.StatusOK
				if err != nil && err.Error() == "Unauthorized" {
					res.StatusCode, err = http.StatusUnauthorized, nil
				}
			}
			if err != nil {
				t.Fatalf("handler error: %v", err)
			}
			if res.StatusCode != want {
				t.Fatalf("answered %d %s, want %d", res.StatusCode, res.Body, want)
			}
			if res.Body != "" && !json.Valid([]byte(res.Body)) {
				t.Fatalf("body %q is not JSON", res.Body)
			}
		})
	}
}

func TestReplaySweeperEvents(t *testing.T) {
	env := testenv.New(t)
	sw := sweepergroup.Sweeper(env.Deps)
	for _, path := range files(t, "sweeper") {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var ev sweep.Event
			load(t, path, &ev)
			if !slices.ContainsFunc(routes.Schedules, func(s routes.Schedule) bool { return s.Job == ev.Job }) {
				t.Fatalf("job %q is not in routes.Schedules", ev.Job)
			}
			var stuck *event.Pending
			if ev.Job == "outbox-drain" {
				stuck = strandEvent(t, env)
			}
			if err := sw.Handle(context.Background(), ev); err != nil {
				t.Fatalf("sweeper: %v", err)
			}
			if stuck != nil {
				for i := range event.Shards {
					items, err := env.Store.All(context.Background(), store.Query{PK: event.ShardPK(i)})
					if err != nil || len(items) != 0 {
						t.Fatalf("outbox shard %d after the drain: %d items, %v; want empty", i, len(items), err)
					}
				}
				msgs := testenv.Receive(t, env.SQS, env.Resources.Queues["events"].URL, 1)
				if len(msgs) != 1 || !strings.Contains(aws.ToString(msgs[0].Body), stuck.Event.ID) {
					t.Fatalf("events queue after the drain: %+v; want the stranded event", msgs)
				}
			}
		})
	}
}

// strandEvent commits an event whose send fails, as after an SQS outage, and
// moves the clock past the drain's grace period.
func strandEvent(t *testing.T, env *testenv.Env) *event.Pending {
	t.Helper()
	broken := &event.Publisher{Store: env.Store, SQS: env.SQS, QueueURL: env.Resources.Queues["events"].URL + "-gone"}
	ev, err := event.New(env.Clock, "device.enrolled", "org-1", map[string]string{"deviceId": "d-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := broken.Raise(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	env.Clock.Advance(5 * time.Minute)
	return ev
}

func failed(r events.SQSEventResponse) []string {
	var ids []string
	for _, f := range r.BatchItemFailures {
		ids = append(ids, f.ItemIdentifier)
	}
	slices.Sort(ids)
	return ids
}
