// Package cost is Gale's cost model as code: it replays a stated month of one
// managed device and requests of one API key against the emulator, measures
// what they consume (DynamoDB capacity units as shared/store bills them,
// requests, DynamoDB calls) and prices it at us-east-1 list prices, with the
// assumptions that cannot be measured locally (Lambda time per call, log
// bytes) stated as named constants. `make cost` prints the model; docs/cost.md's
// cost section is this package's output (TestCostModel fails when they
// differ; GALE_COST_WRITE=1 rewrites it).
package cost

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// List prices, us-east-1, on-demand (USD).
const (
	PricePerMillionWRU       = 0.625 // DynamoDB write request units
	PricePerMillionRRU       = 0.125 // DynamoDB read request units
	PricePerMillionHTTPCalls = 1.00  // API Gateway HTTP API, first 300 M a month
	PricePerMillionLambda    = 0.20  // Lambda requests
	PricePerGBSecondARM      = 0.0000133334
	PricePerLogGB            = 0.50 // CloudWatch Logs ingestion
	// API Gateway WebSocket APIs: messages (either way, per 32 KB) and
	// connection minutes.
	PricePerMillionWSMessages  = 1.00
	PricePerMillionConnMinutes = 0.25
)

// Assumptions (not measurable on the emulator).
const (
	// LambdaMemoryGB is the stack's memory size (infra/cdk: memoryMB).
	LambdaMemoryGB = 256.0 / 1024
	// LambdaBaseMs and LambdaMsPerCall model a warm invocation's billed time:
	// the handler's own work plus one DynamoDB round trip per call (single
	// digit milliseconds in-region).
	LambdaBaseMs    = 2.0
	LambdaMsPerCall = 4.0
	// PlatformLogBytes is what Lambda itself logs per invocation: nothing,
	// as the stack sets the functions' system log level to WARN (infra/cdk:
	// its START, END and REPORT lines are INFO). The access log line beside
	// it is measured.
	PlatformLogBytes = 0.0
)

// Usage is what an activity consumed.
type Usage struct {
	// Requests are HTTP API requests; Messages are WebSocket messages (each
	// a Lambda invocation like a request; a $connect and a $disconnect are
	// invocations API Gateway does not bill as messages).
	Requests    float64
	Messages    float64
	Invocations float64
	ConnMinutes float64
	Calls       float64
	RCU, WCU    float64
	LogBytes    float64
}

func (u *Usage) add(res fixture.Response) {
	u.Requests++
	u.Invocations++
	u.Calls += float64(res.DBCalls)
	u.RCU += res.RCU
	u.WCU += res.WCU
	u.LogBytes += PlatformLogBytes + float64(accessLine(res))
}

func (u Usage) scaled(f float64) Usage {
	return Usage{Requests: u.Requests * f, Messages: u.Messages * f, Invocations: u.Invocations * f, ConnMinutes: u.ConnMinutes * f,
		Calls: u.Calls * f, RCU: u.RCU * f, WCU: u.WCU * f, LogBytes: u.LogBytes * f}
}

func (u Usage) plus(o Usage) Usage {
	return Usage{Requests: u.Requests + o.Requests, Messages: u.Messages + o.Messages, Invocations: u.Invocations + o.Invocations,
		ConnMinutes: u.ConnMinutes + o.ConnMinutes, Calls: u.Calls + o.Calls, RCU: u.RCU + o.RCU, WCU: u.WCU + o.WCU,
		LogBytes: u.LogBytes + o.LogBytes}
}

// accessLine is the size of the access log line the edge writes for res (a
// deployed function's line, metrics included).
func accessLine(res fixture.Response) int {
	var buf bytes.Buffer
	log := httpapi.NewLogger(&buf, slog.LevelInfo)
	method, path, _ := strings.Cut(res.Operation, " ")
	path = regexp.MustCompile(`\{[^}]*\}`).ReplaceAllString(path, "00000000-0000-7000-8000-000000000000")
	log.Info("request", "requestId", "0123456789abcdef0123456789abcdef", "method", method, "path", path,
		"status", res.Status, "durationMs", 12, "dbCalls", res.DBCalls, "dbRCU", res.RCU, "dbWCU", res.WCU,
		"principal", "00000000-0000-7000-8000-000000000000", "tenant", "ORG#00000000-0000-7000-8000-000000000000", "ip", "203.0.113.10",
		"function", "agents", "requests", 1, "status4xx", 0, "status5xx", 0,
		"_aws", map[string]any{"Timestamp": 1796000000000, "CloudWatchMetrics": []any{map[string]any{"Namespace": "Gale",
			"Dimensions": [][]string{{"function"}}, "Metrics": []map[string]string{{"Name": "requests", "Unit": "Count"},
				{"Name": "status4xx", "Unit": "Count"}, {"Name": "status5xx", "Unit": "Count"}, {"Name": "durationMs", "Unit": "Milliseconds"},
				{"Name": "dbCalls", "Unit": "Count"}, {"Name": "dbRCU", "Unit": "Count"}, {"Name": "dbWCU", "Unit": "Count"}}}}})
	return buf.Len()
}

// Bill is Usage priced.
type Bill struct{ DynamoDB, Gateway, Lambda, Logs float64 }

// Total is the bill's sum.
func (b Bill) Total() float64 { return b.DynamoDB + b.Gateway + b.Lambda + b.Logs }

func price(u Usage) Bill {
	ms := u.Invocations*LambdaBaseMs + u.Calls*LambdaMsPerCall
	return Bill{
		DynamoDB: u.WCU*PricePerMillionWRU/1e6 + u.RCU*PricePerMillionRRU/1e6,
		Gateway: u.Requests*PricePerMillionHTTPCalls/1e6 + u.Messages*PricePerMillionWSMessages/1e6 +
			u.ConnMinutes*PricePerMillionConnMinutes/1e6,
		Lambda: u.Invocations*PricePerMillionLambda/1e6 + ms/1000*LambdaMemoryGB*PricePerGBSecondARM,
		Logs:   u.LogBytes / 1e9 * PricePerLogGB,
	}
}

// The stated month of one managed device.
const (
	daysPerMonth         = 30
	promptsPerWeek       = 5
	replayedHeartbeatHrs = 3 // the first hour warms up; the last two are measured
	// channelReplayHrs: the channel device's first hour warms up; the
	// measured 46 hours are two whole periods of its last-seen key's move
	// (a connect moves it device.ConnectedAhead ahead once less than
	// device.ConnectedFor is left: every 23 hours at a reconnect every
	// channelReconnect), so its amortised cost is in the figures.
	channelReplayHrs = 47
)

// pollingDevice replays one fully described device: heartbeats at the nominal interval the server answers (+-10%),
// a day's inventory, PAM prompts; it answers the month's usage by activity.
func pollingDevice(t testing.TB, w *fixture.World) (beats, inventory, prompts Usage, interval float64) {
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "cost-host")
	base := "/api/v1/agents/" + id
	describe(t, w, id, tok)   // heartbeats of a described device: the described record stays apart
	var elapsed time.Duration // whole seconds: no rounding drift over the hours
	for i := 0; ; i++ {
		body := map[string]any{"status": "ok", "agentVersion": "4.2.0",
			"metrics":  map[string]any{"cpuPercent": float64(10 + i%7), "ramPercent": float64(40 + i%3), "diskPercent": 61.0},
			"lastUser": `CONTOSO\alice`, "uptimeSeconds": 86400 + i*60}
		res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, base+"/heartbeat", tok, body), http.StatusOK)
		var reply struct {
			Config struct {
				HeartbeatIntervalSeconds float64 `json:"heartbeatIntervalSeconds"`
			} `json:"config"`
		}
		res.Decode(t, &reply)
		// The replay steps by the nominal interval, so the model does not
		// depend on the jitter of this run's (random) device id; the
		// interval told must be the nominal one +-10%.
		told := reply.Config.HeartbeatIntervalSeconds
		step := device.HeartbeatInterval.Seconds()
		if told < 0.9*step || told > 1.1*step {
			t.Fatalf("heartbeat answered interval %v, want %v +-10%%", told, step)
		}
		if elapsed >= time.Hour {
			beats.add(res)
			interval += step
		}
		d := time.Duration(step) * time.Second
		w.Env.Clock.Advance(d)
		elapsed += d
		if elapsed >= replayedHeartbeatHrs*time.Hour {
			break
		}
	}
	interval /= beats.Requests
	beats = beats.scaled(daysPerMonth * 24 / (replayedHeartbeatHrs - 1))

	software := make([]map[string]any, 300)
	for i := range software {
		software[i] = map[string]any{"name": fmt.Sprintf("Package %03d", i), "version": "1.2." + fmt.Sprint(i), "vendor": "Contoso"}
	}
	hw := map[string]any{"manufacturer": "Contoso", "model": "Book 14", "serialNumber": "SN-1", "cpuModel": "X1", "cpuCores": 8, "ramTotalMb": 16384, "diskTotalGb": 512}
	net := map[string]any{"ipAddress": "10.0.0.5", "publicIp": "203.0.113.5", "macAddress": "00:11:22:33:44:55"}
	// Day one stores the inventory; the measured days report it unchanged.
	for day := range 2 {
		var u Usage
		u.add(fixture.Expect(t, w.AgentCall(t, http.MethodPut, base+"/hardware", tok, hw), http.StatusOK))
		u.add(fixture.Expect(t, w.AgentCall(t, http.MethodPut, base+"/network", tok, net), http.StatusOK))
		u.add(fixture.Expect(t, w.AgentCall(t, http.MethodPut, base+"/software", tok, map[string]any{"software": software}), http.StatusOK))
		if day == 1 {
			inventory = u.scaled(daysPerMonth)
		}
		w.Env.Clock.Advance(24 * time.Hour)
	}
	var p Usage
	for i := range promptsPerWeek {
		body := map[string]any{"subject_username": `CONTOSO\alice`, "target_executable_path": fmt.Sprintf(`C:\Tools\setup%d.exe`, i),
			"target_executable_signer": "Contoso Ltd", "pid": 4242, "parent_image": `C:\Windows\explorer.exe`,
			"command_line": `"C:\Tools\setup.exe" /quiet`, "observed_at": "2026-11-01T08:59:59.000Z"}
		res := w.AgentCall(t, http.MethodPost, base+"/elevation-requests", tok, body)
		if res.Status != http.StatusCreated && res.Status != http.StatusOK {
			t.Fatalf("prompt answered %d: %s", res.Status, res.Body)
		}
		p.add(res)
	}
	prompts = p.scaled(daysPerMonth / 7.0)
	return beats, inventory, prompts, interval
}

// describe gives device id hardware, network, tags and custom fields: a
// device row of 1-2 KB (its described record), whose size it answers.
func describe(t testing.TB, w *fixture.World, id, tok string) int {
	base := "/api/v1/agents/" + id
	fixture.Expect(t, w.AgentCall(t, http.MethodPut, base+"/hardware", tok, map[string]any{"manufacturer": "Contoso", "model": "Book 14",
		"serialNumber": "SN-1", "cpuModel": "X1", "cpuCores": 8, "ramTotalMb": 16384, "diskTotalGb": 512}), http.StatusOK)
	fixture.Expect(t, w.AgentCall(t, http.MethodPut, base+"/network", tok, map[string]any{"ipAddress": "10.0.0.5",
		"publicIp": "203.0.113.5", "macAddress": "00:11:22:33:44:55"}), http.StatusOK)
	fields := map[string]string{}
	for i := range 8 {
		fields[fmt.Sprint("field_", i)] = strings.Repeat("v", 80)
	}
	fixture.Expect(t, w.Call(t, http.MethodPatch, "/api/v1/devices/"+id, fixture.AAdmin, map[string]any{
		"tags": []string{"finance", "laptop", "windows-11", "vip"}, "customFields": fields}), http.StatusOK)
	k := device.Keys(w.A.ID, id)
	rows, err := w.Env.Store.BatchGet(context.Background(), store.KeyRef{PK: k.PK, SK: k.SK})
	if err != nil {
		t.Fatal(err)
	}
	n := store.ItemSize(rows[k.PK+"|"+k.SK])
	if n <= 1024 || n > 2048 {
		t.Fatalf("the described device row is %d bytes, want 1-2 KB", n)
	}
	return n
}

// channelDevice replays one fully described device (hardware, network,
// tags and custom fields: a device row of 1-2 KB, 2 WCU a write) that keeps
// its agent channel open: it reconnects before API Gateway's 2-hour limit
// (the authorizer, the new connection and its first ping, then the old
// one's close, as the wire advises) and sends its heartbeat as a frame at
// the interval a connected device is told (no separate ping: the heartbeat
// keeps the connection from idling out). It answers the month's usage of
// the beats and of the connections, and the device row's size.
func channelDevice(t testing.TB, w *fixture.World) (beats, conns Usage, interval float64, rowBytes int) {
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "cost-channel")
	rowBytes = describe(t, w, id, tok)
	h := agentchannelgroup.Handler(w.Env.Deps)
	var authorizer map[string]any // requestContext.authorizer, as the authorizer answered
	authorize := func(u *Usage) {
		t.Helper()
		ctx, calls := store.WithCalls(context.Background())
		res, err := h.Authorize(ctx, events.APIGatewayCustomAuthorizerRequestTypeRequest{Type: "REQUEST", MethodArn: "arn:aws:execute-api:us-east-1:1:api/agents/$connect",
			Headers: map[string]string{"Authorization": "Bearer " + tok}, QueryStringParameters: map[string]string{"deviceId": id}})
		if err != nil {
			t.Fatalf("authorizer: %v", err)
		}
		authorizer = map[string]any{"principalId": res.PrincipalID}
		for k, v := range res.Context {
			authorizer[k] = v
		}
		u.Invocations++
		u.Calls += float64(calls.N())
		u.RCU += calls.RCU()
		u.WCU += calls.WCU()
	}
	serve := func(u *Usage, route, conn, body string) {
		t.Helper()
		ctx, calls := store.WithCalls(context.Background())
		res, err := h.Handle(ctx, events.APIGatewayWebsocketProxyRequest{Body: body,
			RequestContext: events.APIGatewayWebsocketProxyRequestContext{RouteKey: route, ConnectionID: conn, Authorizer: authorizer}})
		if err != nil || res.StatusCode != http.StatusOK || strings.Contains(res.Body, `"error"`) {
			t.Fatalf("%s %s: %d %s %v", route, body, res.StatusCode, res.Body, err)
		}
		u.Invocations++
		if route == "$default" {
			u.Messages++
			if res.Body != "" {
				u.Messages++ // the answer frame
			}
		}
		u.Calls += float64(calls.N())
		u.RCU += calls.RCU()
		u.WCU += calls.WCU()
	}
	// The agent reconnects on a timer of its own, every channelReconnect
	// exactly, and beats at the interval it is told: the replay runs the
	// next of the two, so the reconnects (and the key's moves) fall at the
	// same times whatever the device's jitter.
	var elapsed, nextBeat, nextConnect time.Duration
	conn := 0
	connect := func(u *Usage) {
		conn++
		authorize(u)
		serve(u, "$connect", fmt.Sprint("conn-", conn), "")
		serve(u, "$default", fmt.Sprint("conn-", conn), `{"type":"ping"}`)
		if conn > 1 {
			serve(u, "$disconnect", fmt.Sprint("conn-", conn-1), "")
		}
	}
	var warm Usage
	var n, reconnects float64
	for i := 0; elapsed < channelReplayHrs*time.Hour; {
		measured := elapsed >= time.Hour
		if nextConnect <= nextBeat {
			w.Env.Clock.Advance(nextConnect - elapsed)
			elapsed = nextConnect
			if measured {
				connect(&conns)
				reconnects++
			} else {
				connect(&warm)
			}
			nextConnect += channelReconnect
			continue
		}
		w.Env.Clock.Advance(nextBeat - elapsed)
		elapsed = nextBeat
		body := fmt.Sprintf(`{"type":"heartbeat","status":"ok","agentVersion":"4.2.0","metrics":{"cpuPercent":%d,"ramPercent":%d,"diskPercent":61},"lastUser":"CONTOSO\\alice","uptimeSeconds":%d}`,
			10+i%7, 40+i%3, 86400+i*300)
		step := device.NextInterval(id, w.Env.Clock.Now(), true)
		// The beats are measured over the polling device's hours (their
		// count over longer ones varies with the device id's jitter).
		if measured && elapsed < replayedHeartbeatHrs*time.Hour {
			serve(&beats, "$default", fmt.Sprint("conn-", conn), body)
			interval += step.Seconds()
			n++
		} else {
			serve(&warm, "$default", fmt.Sprint("conn-", conn), body)
		}
		nextBeat += step
		i++
	}
	interval /= n
	// A month of beats at the interval told (device.ChannelInterval: the
	// jitter is symmetric), each costing what the measured ones did on
	// average: the count of a replay's beats varies with the device id's
	// jitter, the model does not.
	beats = beats.scaled(daysPerMonth * 24 * time.Hour.Seconds() / device.ChannelInterval.Seconds() / n)
	if reconnects == 0 {
		t.Fatal("no reconnect in the measured hours")
	}
	conns = conns.scaled(daysPerMonth * 24 / channelReconnect.Hours() / reconnects)
	conns.ConnMinutes = daysPerMonth * 24 * 60
	return beats, conns, interval, rowBytes
}

// channelReconnect is how often a channel device replaces its connection:
// before API Gateway's 2-hour limit.
const channelReconnect = 115 * time.Minute

// newKey creates an API key of limit rateLimit.
func newKey(t *testing.T, w *fixture.World, rateLimit int) string {
	res := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin,
		map[string]any{"orgId": w.A.ID, "name": fmt.Sprintf("cost %d", rateLimit), "scopes": []string{"devices:read"}, "rateLimit": rateLimit}), http.StatusCreated)
	var k struct{ Key string }
	res.Decode(t, &k)
	return k.Key
}

// keyRequests answers the usage of n requests of API key key of limit
// rateLimit, spread evenly over the hour, per million requests.
func keyRequests(t *testing.T, w *fixture.World, key string, rateLimit, n int) Usage {
	gap := time.Hour / time.Duration(rateLimit)
	var u Usage
	for i := range n + 20 {
		r := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/devices?limit=1", APIKey: key, RemoteAddr: "192.0.2.10:1"}), http.StatusOK)
		if i >= 20 { // past the usage row's making
			u.add(r)
		}
		w.Env.Clock.Advance(gap)
	}
	return u.scaled(1e6 / float64(n))
}

func TestCostModel(t *testing.T) {
	w := fixture.NewWorld(t, "agents", "devices", "enrollment-keys", "api-keys", "pam")
	tiers := []struct {
		limit, n int
		key      string
	}{{1000, 200, ""}, {100000, 200, ""}}
	for i := range tiers {
		tiers[i].key = newKey(t, w, tiers[i].limit)
	}
	beats, inventory, prompts, interval := pollingDevice(t, w)
	month := beats.plus(inventory).plus(prompts)
	perDevice := price(month)
	// A world of its own: the replay above moved the clock past the callers' tokens.
	chBeats, chConns, chInterval, chBytes := channelDevice(t, fixture.NewWorld(t, "agents", "devices", "enrollment-keys", "pam"))
	chMonth := chBeats.plus(chConns).plus(inventory).plus(prompts)
	perChannelDevice := price(chMonth)

	var b strings.Builder
	fmt.Fprintf(&b, "One managed device for a month (%d days), replayed against the emulator (`make cost`, tests/cost):\n\n", daysPerMonth)
	b.WriteString("| activity | requests | DynamoDB calls | RCU | WCU | $ |\n|---|---:|---:|---:|---:|---:|\n")
	row := func(name string, u Usage) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.4f |\n", name, num(u.Requests), num(u.Calls), num(u.RCU), num(u.WCU), price(u).Total())
	}
	row(fmt.Sprintf("heartbeats (every %.0f s, the interval the server answers without its +-10%% jitter)", interval), beats)
	row("inventory once a day (hardware, network, 300 packages, unchanged)", inventory)
	row(fmt.Sprintf("PAM prompts (%d a week)", promptsPerWeek), prompts)
	row("**month**", month)
	fmt.Fprintf(&b, "\nPer device-month: **$%.4f** (DynamoDB $%.4f, API Gateway $%.4f, Lambda $%.4f, logs $%.4f); per 10,000 devices: **$%.0f** a month.\n\n",
		perDevice.Total(), perDevice.DynamoDB, perDevice.Gateway, perDevice.Lambda, perDevice.Logs, 10000*perDevice.Total())

	b.WriteString("The same device with its agent channel open all month (heartbeats as frames, a reconnect every ")
	fmt.Fprintf(&b, "%.0f minutes before API Gateway's 2-hour limit; WebSocket messages and connection minutes priced):\n\n", channelReconnect.Minutes())
	b.WriteString("| activity | messages | connection minutes | DynamoDB calls | RCU | WCU | $ |\n|---|---:|---:|---:|---:|---:|---:|\n")
	chRow := func(name string, u Usage) {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.4f |\n", name, num(u.Messages), num(u.ConnMinutes), num(u.Calls), num(u.RCU), num(u.WCU), price(u).Total())
	}
	if math.Abs(chInterval-device.ChannelInterval.Seconds()) > 0.1*device.ChannelInterval.Seconds() {
		t.Errorf("a connected device was told %.0f s on average, want %v +-10%%", chInterval, device.ChannelInterval)
	}
	chRow(fmt.Sprintf("heartbeat frames (every %.0f s +-10%%, as a connected device is told)", device.ChannelInterval.Seconds()), chBeats)
	chRow("connections (authorizer, connect, first ping, the old connection's close; the last-seen key's move once a day)", chConns)
	chRow("inventory and PAM prompts (as above, over HTTP)", inventory.plus(prompts))
	chRow("**month**", chMonth)
	hourWCU := (chBeats.WCU + chConns.WCU) / (daysPerMonth * 24)
	fmt.Fprintf(&b, "\nPer device-month with the channel: **$%.4f** (DynamoDB $%.4f, API Gateway $%.4f, Lambda $%.4f, logs $%.4f); per 10,000 devices: **$%.0f** a month. A steady connected device (its described record %s bytes, apart from the live row its heartbeats and connects write) writes %.2f WCU an hour, reconnects included (measured over %d hours).\n\n",
		perChannelDevice.Total(), perChannelDevice.DynamoDB, perChannelDevice.Gateway, perChannelDevice.Lambda, perChannelDevice.Logs,
		10000*perChannelDevice.Total(), num(float64(chBytes)), hourWCU, channelReplayHrs-1)
	// Issue 32's goal: at most 1 WCU a device-hour with the channel open.
	if hourWCU > 1 {
		t.Errorf("a steady connected device writes %.2f WCU an hour (heartbeat frames %.2f, reconnects %.2f), want at most 1",
			hourWCU, chBeats.WCU/(daysPerMonth*24), chConns.WCU/(daysPerMonth*24))
	}
	if perChannelDevice.Total() > perDevice.Total() {
		t.Errorf("a device with the channel costs $%.4f a month, more than polling ($%.4f)", perChannelDevice.Total(), perDevice.Total())
	}

	b.WriteString("One API key, per million requests (`GET /devices`, one row a page):\n\n| limit | DynamoDB calls | RCU | WCU | $ per million |\n|---|---:|---:|---:|---:|\n")
	for _, tier := range tiers {
		u := keyRequests(t, w, tier.key, tier.limit, tier.n)
		fmt.Fprintf(&b, "| %s/hour | %s | %s | %s | %.2f |\n", num(float64(tier.limit)), num(u.Calls), num(u.RCU), num(u.WCU), price(u).Total())
		if got := price(u).Total(); got > 3 {
			t.Errorf("a key at %d/hour costs $%.2f per million requests; the goal is at most $3", tier.limit, got)
		}
	}
	fmt.Fprintf(&b, "\nPrices: DynamoDB on-demand $%.3f per million WRU and $%.3f per million RRU; HTTP API $%.2f per million; WebSocket API $%.2f per million messages and $%.2f per million connection minutes; Lambda $%.2f per million requests and $%.10f per GB-second (arm64, %.0f MB); logs $%.2f per GB. Assumed, not measured: a warm invocation bills %.0f ms plus %.0f ms per DynamoDB call, and Lambda logs %.0f bytes of its own beside the access log line (measured: the edge's line with its metrics; the channel function writes no line per event).\n",
		PricePerMillionWRU, PricePerMillionRRU, PricePerMillionHTTPCalls, PricePerMillionWSMessages, PricePerMillionConnMinutes, PricePerMillionLambda, PricePerGBSecondARM, LambdaMemoryGB*1024, PricePerLogGB,
		LambdaBaseMs, LambdaMsPerCall, PlatformLogBytes)
	got := b.String()
	t.Log("\n" + got)
	syncCostPage(t, got)
}

func num(f float64) string {
	if f >= 100 || f == math.Trunc(f) {
		return fmt.Sprintf("%.0f", f)
	}
	return fmt.Sprintf("%.2f", f)
}

const begin, end = "<!-- cost:begin (generated by tests/cost: make cost) -->\n", "<!-- cost:end -->"

// syncCostPage checks (or, with GALE_COST_WRITE=1, writes) docs/cost.md's cost
// section.
func syncCostPage(t *testing.T, model string) {
	const path = "../../docs/cost.md"
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(raw)
	i, j := strings.Index(s, begin), strings.Index(s, end)
	if i < 0 || j < i {
		t.Fatalf("docs/cost.md has no cost section (%q ... %q)", begin, end)
	}
	if s[i+len(begin):j] == model {
		return
	}
	if os.Getenv("GALE_COST_WRITE") == "" {
		t.Errorf("docs/cost.md's cost section differs from the model: run `make cost` and commit docs/cost.md")
		return
	}
	if err := os.WriteFile(path, []byte(s[:i+len(begin)]+model+s[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkSteadyDeviceHour reports what one steady device costs an hour
// (issue 32's figures for make bench), with and without its agent channel:
// write and read units of its heartbeats, and of the channel's reconnects
// (API Gateway's 2-hour limit), and the device-month in dollars.
func BenchmarkSteadyDeviceHour(b *testing.B) {
	hours := float64(daysPerMonth * 24)
	for range b.N {
		w := fixture.NewWorld(b, "agents", "devices", "enrollment-keys", "pam")
		beats, inventory, prompts, _ := pollingDevice(b, w)
		chBeats, chConns, _, _ := channelDevice(b, fixture.NewWorld(b, "agents", "devices", "enrollment-keys", "pam"))
		b.ReportMetric(beats.WCU/hours, "polling_wcu/device-hour")
		b.ReportMetric(beats.RCU/hours, "polling_rcu/device-hour")
		b.ReportMetric(chBeats.WCU/hours, "channel_beats_wcu/device-hour")
		b.ReportMetric(chConns.WCU/hours, "channel_reconnect_wcu/device-hour")
		b.ReportMetric((chBeats.RCU+chConns.RCU)/hours, "channel_rcu/device-hour")
		b.ReportMetric(price(beats.plus(inventory).plus(prompts)).Total(), "polling_usd/device-month")
		b.ReportMetric(price(chBeats.plus(chConns).plus(inventory).plus(prompts)).Total(), "channel_usd/device-month")
	}
}
