package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/agent"
	"github.com/gale-rmm/gale/shared/app/agentsgroup"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/sweep"
	"github.com/gale-rmm/gale/tests/fixture"
)

func beatPath(id string) string { return "/api/v1/agents/" + id + "/heartbeat" }

func beat() map[string]any {
	return map[string]any{"status": "ok", "agentVersion": "1.0.1", "metrics": map[string]any{"cpuPercent": 12.5, "ramPercent": 40, "diskPercent": 70}}
}

// events drains the events queue and returns the types seen.
// events drains the events queue and returns the events' types.
func events(t *testing.T, w *fixture.World) []string {
	t.Helper()
	var out []string
	for _, ev := range fixture.Events(t, w) {
		typ, _ := ev["type"].(string)
		out = append(out, typ)
	}
	return out
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEnrollCreatesDeviceInKeysOrgAndSite(t *testing.T) {
	w := newWorld(t)
	keyID, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "laptops", "siteId": w.A1.ID, "maxUsage": 2})
	res := fixture.Expect(t, w.Enroll(t, raw, "host-1"), http.StatusCreated)
	var e struct {
		DeviceID, OrgID, AuthToken string
		SiteID                     *string
		Config                     struct{ HeartbeatIntervalSeconds int }
	}
	res.Decode(t, &e)
	if e.OrgID != w.A.ID || e.SiteID == nil || *e.SiteID != w.A1.ID || e.Config.HeartbeatIntervalSeconds < 54 || e.Config.HeartbeatIntervalSeconds > 66 {
		t.Fatalf("enrolled %+v", e)
	}
	if !strings.HasPrefix(e.AuthToken, "agt_") || len(e.AuthToken) != 68 {
		t.Fatalf("token %q", e.AuthToken)
	}
	if !has(events(t, w), "device.enrolled") {
		t.Fatal("no device.enrolled event")
	}
	k, err := enrollment.Store{St: w.Env.Store}.Key(context.Background(), w.A.ID, keyID)
	if err != nil || k.UsageCount != 1 {
		t.Fatalf("key after enrollment: %+v %v", k, err)
	}
	d := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+e.DeviceID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if d["status"] != "online" || d["hostname"] != "host-1" || d["siteId"] != w.A1.ID || d["osType"] != "windows" {
		t.Fatalf("device %v", d)
	}
	// The second use is the last; the third is refused.
	fixture.Expect(t, w.Enroll(t, raw, "host-2"), http.StatusCreated)
	fixture.ExpectError(t, w.Enroll(t, raw, "host-3"), http.StatusUnauthorized, "unauthorized")
	if body := w.Enroll(t, raw, "host-3").JSON(t); body["error"] != "Invalid enrollment key" {
		t.Fatalf("used-up key: %v", body)
	}
}

func TestEnrollRefusesExpiredUnknownAndMalformedKeys(t *testing.T) {
	w := newWorld(t)
	_, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "short"})
	w.Env.Clock.Advance(61 * time.Minute)
	body := fixture.ExpectError(t, w.Enroll(t, raw, "h"), http.StatusUnauthorized, "unauthorized")
	if body["error"] != "Enrollment key expired" {
		t.Fatalf("expired: %v", body)
	}
	for _, k := range []string{strings.Repeat("a", 64), "short", strings.ToUpper(raw)} {
		if body := fixture.ExpectError(t, w.Enroll(t, k, "h"), http.StatusUnauthorized, "unauthorized"); body["error"] != "Invalid enrollment key" {
			t.Fatalf("key %q: %v", k, body)
		}
	}
}

func TestFiftyConcurrentEnrollmentsAgainstMaxUsageTen(t *testing.T) {
	w := newWorld(t)
	keyID, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "race", "maxUsage": 10})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll",
				RemoteAddr: fmt.Sprintf("203.0.113.%d:1000", i), Body: fixture.EnrollBody(raw, fmt.Sprintf("race-%d", i))})
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[http.StatusCreated] != 10 || codes[http.StatusUnauthorized] != 40 {
		t.Fatalf("statuses %v, want 10 created and 40 refused", codes)
	}
	devs, err := device.Store{St: w.Env.Store}.List(context.Background(), w.A.ID)
	if err != nil || len(devs) != 10 {
		t.Fatalf("%d devices (%v), want 10", len(devs), err)
	}
	k, _ := enrollment.Store{St: w.Env.Store}.Key(context.Background(), w.A.ID, keyID)
	if k.UsageCount != 10 {
		t.Fatalf("usageCount %d", k.UsageCount)
	}
}

func TestPepperChangeInvalidatesKeys(t *testing.T) {
	w := newWorld(t)
	_, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "before", "maxUsage": 5})
	other := agentsgroup.Service(w.Env.Deps)
	other.Pepper = []byte("another pepper entirely")
	_, err := other.Enroll(context.Background(), "192.0.2.1", agentInput(raw))
	if err == nil || err.Error() != "Invalid enrollment key" {
		t.Fatalf("enroll under a new pepper: %v", err)
	}
	// Under the pepper it was made with, the key works.
	fixture.Expect(t, w.Enroll(t, raw, "h"), http.StatusCreated)
}

func agentInput(raw string) agent.EnrollInput {
	s := func(v string) *string { return &v }
	return agent.EnrollInput{EnrollmentKey: s(raw), Hostname: s("h"), OSType: s("linux"), OSVersion: s("6"), Architecture: s("arm64"), AgentVersion: s("1")}
}

func TestEnrollRateLimitPerIP(t *testing.T) {
	w := newWorld(t)
	for i := range 11 {
		res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll",
			RemoteAddr: "192.0.2.7:5000", Body: fixture.EnrollBody(strings.Repeat("0", 64), "h")})
		want := http.StatusUnauthorized
		if i == 10 {
			want = http.StatusTooManyRequests
		}
		fixture.Expect(t, res, want)
	}
}

func TestHeartbeatBudgetAndFacts(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "hb")
	events(t, w)
	w.Env.Clock.Advance(time.Minute)
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, beat()), http.StatusOK)
	// The token check, 1 BatchGetItem of the PAM policy settings
	// (pam.uacInterceptionEnabled), and, since its facts are new, the device
	// row update, the live row update and the agent row's digest.
	if res.DBCalls != 5 {
		t.Fatalf("first heartbeat made %d calls, documented 5", res.DBCalls)
	}
	var reply struct {
		Commands []any
		Config   struct {
			HeartbeatIntervalSeconds int
			PAM                      struct{ UACInterceptionEnabled bool }
		}
	}
	res.Decode(t, &reply)
	if reply.Commands == nil || len(reply.Commands) != 0 || reply.Config.HeartbeatIntervalSeconds < 54 || reply.Config.HeartbeatIntervalSeconds > 66 || !reply.Config.PAM.UACInterceptionEnabled {
		t.Fatalf("reply %s", res.Body)
	}
	d, err := device.Store{St: w.Env.Store}.Get(context.Background(), w.A.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if d.AgentVersion != "1.0.1" || d.Metrics.CPUPercent == nil || *d.Metrics.CPUPercent != 12.5 || *d.LastSeenAt != "2026-11-01T09:01:00.000Z" || d.HealthStatus != "ok" {
		t.Fatalf("device after heartbeat: %+v", d)
	}
	if ev := events(t, w); len(ev) != 0 {
		t.Fatalf("steady heartbeat raised %v", ev)
	}
	// A queued command comes back with the heartbeat, still within the budget.
	cmd := device.Command{ID: "0b7f4a64-3a7c-4d5e-9a51-0b7c2a1d9e01", Type: "pam.actuate", CreatedAt: "2026-11-01T09:01:00.000Z"}
	if err := w.Env.Store.Do(context.Background(), device.EnqueueCommand(id, cmd)); err != nil {
		t.Fatal(err)
	}
	w.Env.Clock.Advance(time.Minute)
	res = fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, beat()), http.StatusOK)
	fixture.Budget(t, res, 4)
	if !strings.Contains(string(res.Body), cmd.ID) {
		t.Fatalf("command not returned: %s", res.Body)
	}
	// Its result is accepted once.
	rp := "/api/v1/agents/" + id + "/commands/" + cmd.ID + "/result"
	fixture.Expect(t, w.AgentCall(t, http.MethodPost, rp, tok, map[string]any{"status": "completed", "output": "done"}), http.StatusOK)
	fixture.NotFound(t, w.AgentCall(t, http.MethodPost, rp, tok, map[string]any{"status": "completed"}))
}

// Heartbeat writes are limited to device.BeatWrites a minute per device,
// counted by the agent row's digest update; a heartbeat that writes nothing
// is not counted (and costs only the token check and the PAM settings).
func TestHeartbeatWriteLimit(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "rl")
	w.Env.Clock.Set(w.Env.Clock.Now().Truncate(time.Minute).Add(time.Minute))
	changed := func(i int) map[string]any {
		b := beat()
		b["lastUser"] = fmt.Sprintf("user-%d", i)
		return b
	}
	for i := range device.BeatWrites {
		res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, changed(i)), http.StatusOK)
		if res.DBCalls != 5 {
			t.Fatalf("changed heartbeat %d made %d calls, want 5", i, res.DBCalls)
		}
	}
	// Unchanged: writes nothing, so it is not refused.
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, changed(device.BeatWrites-1)), http.StatusOK)
	if res.DBCalls != 2 {
		t.Fatalf("unchanged heartbeat made %d calls, want 2", res.DBCalls)
	}
	w.Env.Clock.Advance(20 * time.Second)
	res = w.AgentCall(t, http.MethodPost, beatPath(id), tok, changed(device.BeatWrites))
	fixture.ExpectError(t, res, http.StatusTooManyRequests, "rate_limited")
	fixture.Budget(t, res, 2) // refused on the row the token check read: nothing written
	if got := res.Header.Get("Retry-After"); got != "41" {
		t.Errorf("Retry-After %q, want 41 (the minute ends in 40 s)", got)
	}
	if d := getDevice(t, w, w.A.ID, id); d.LastUser == nil || *d.LastUser != fmt.Sprintf("user-%d", device.BeatWrites-1) {
		t.Fatalf("refused heartbeat was written: %v", d.LastUser)
	}
	w.Env.Clock.Advance(40 * time.Second)
	fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, changed(device.BeatWrites)), http.StatusOK)

	// Concurrent changed heartbeats past the limit: the count refuses those
	// the read did not see; never more digest counts than the limit.
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for i := range 2 * device.BeatWrites {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := w.AgentCall(t, http.MethodPost, beatPath(id), tok, changed(100+i))
			mu.Lock()
			codes[res.Status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if codes[http.StatusOK]+codes[http.StatusTooManyRequests] != 2*device.BeatWrites || codes[http.StatusTooManyRequests] == 0 {
		t.Fatalf("%d concurrent changed heartbeats: %v", 2*device.BeatWrites, codes)
	}
	a, err := device.Store{St: w.Env.Store}.Agent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if a.Writes > device.BeatWrites {
		t.Fatalf("%d writes counted, limit %d", a.Writes, device.BeatWrites)
	}
}

func TestOfflineSweepAndOnlineTransition(t *testing.T) {
	w := newWorld(t)
	stale, staleTok := w.Device(t, fixture.AAdmin, w.A.ID, "", "stale")
	fresh, freshTok := w.Device(t, fixture.BAdmin, w.B.ID, "", "fresh")
	events(t, w)
	sw := sweepergroup.Sweeper(w.Env.Deps)
	run := func() {
		t.Helper()
		if err := sw.Handle(context.Background(), sweep.Event{Job: "device-offline"}); err != nil {
			t.Fatal(err)
		}
	}
	// stale is swept once its last-seen bucket started more than
	// OfflineAfter ago: between 5 and 10 minutes after its enrollment,
	// depending on its id's bucket offset.
	start := device.SeenBucketStart(stale, w.Env.Clock.Now())
	due := start.Add(device.OfflineAfter)
	for now := w.Env.Clock.Now(); now.Before(due.Add(-time.Minute)); now = w.Env.Clock.Now() {
		w.Env.Clock.Advance(time.Minute)
		fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(fresh), freshTok, beat()), http.StatusOK)
	}
	w.Env.Clock.Set(due)
	run()
	if d := getDevice(t, w, w.A.ID, stale); d.Status != "online" {
		t.Fatalf("swept at exactly OfflineAfter past its bucket: %s", d.Status)
	}
	w.Env.Clock.Advance(time.Second)
	run()
	if d := getDevice(t, w, w.A.ID, stale); d.Status != "offline" {
		t.Fatalf("stale device is %s", d.Status)
	}
	if d := getDevice(t, w, w.B.ID, fresh); d.Status != "online" {
		t.Fatalf("fresh device is %s", d.Status)
	}
	ev := events(t, w)
	if len(ev) != 1 || ev[0] != "device.offline" {
		t.Fatalf("events %v", ev)
	}
	// Idempotent: a second run finds nothing.
	n, err := sw.Jobs["device-offline"](context.Background())
	if err != nil || n != 0 {
		t.Fatalf("second sweep handled %d (%v)", n, err)
	}
	// The next heartbeat brings it back online with device.online.
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(stale), staleTok, beat()), http.StatusOK)
	fixture.Budget(t, res, 4)
	if d := getDevice(t, w, w.A.ID, stale); d.Status != "online" {
		t.Fatalf("after heartbeat: %s", d.Status)
	}
	if ev := events(t, w); len(ev) != 1 || ev[0] != "device.online" {
		t.Fatalf("events %v", ev)
	}
}

func getDevice(t *testing.T, w *fixture.World, orgID, id string) *device.Device {
	t.Helper()
	d, err := device.Store{St: w.Env.Store}.Get(context.Background(), orgID, id)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestSoftwareOfTenThousandEntries(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "sw")
	list := make([]map[string]any, device.MaxSoftware)
	for i := range list {
		list[i] = map[string]any{"name": fmt.Sprintf("Package %05d for a realistic length name", device.MaxSoftware-i),
			"version": fmt.Sprintf("%d.%d.%d", i%7, i%13, i), "vendor": fmt.Sprintf("Vendor %d Corporation", i%50)}
	}
	path := "/api/v1/agents/" + id + "/software"
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPut, path, tok, map[string]any{"software": list}), http.StatusOK)
	if body := res.JSON(t); body["changed"] != true || body["softwareCount"] != float64(10000) {
		t.Fatalf("software reply %v", body)
	}
	d, err := device.Store{St: w.Env.Store}.LoadWithSoftware(context.Background(), w.A.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Software) != device.MaxSoftware || d.Software[0].Name != "Package 00001 for a realistic length name" {
		t.Fatalf("read back %d entries, first %+v", len(d.Software), d.Software[0])
	}
	all, err := device.Store{St: w.Env.Store}.ListWithSoftware(context.Background(), w.A.ID)
	if err != nil || len(all) != 1 || len(all[0].Software) != device.MaxSoftware {
		t.Fatalf("list with software: %v", err)
	}
	// The same list again writes nothing (a second later: the ingest limit's
	// bucket is idle again, so it costs one update).
	w.Env.Clock.Advance(time.Second)
	res = fixture.Expect(t, w.AgentCall(t, http.MethodPut, path, tok, map[string]any{"software": list}), http.StatusOK)
	if body := res.JSON(t); body["changed"] != false {
		t.Fatalf("unchanged list: %v", body)
	}
	if res.DBCalls != 3 {
		t.Fatalf("unchanged list made %d calls (token, rate limit, device read)", res.DBCalls)
	}
	// A body over 2 MiB is 413.
	huge := `{"software": [{"name": "` + strings.Repeat("x", 2<<20) + `"}]}`
	fixture.ExpectError(t, w.AgentCall(t, http.MethodPut, path, tok, huge), http.StatusRequestEntityTooLarge, "payload_too_large")
	// One entry too many is refused.
	list = append(list, map[string]any{"name": "one more"})
	fixture.Invalid(t, w.AgentCall(t, http.MethodPut, path, tok, map[string]any{"software": list}), "software")
}

func TestDecommissionStopsTheToken(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "dec")
	events(t, w)
	path := "/api/v1/devices/" + id + "/decommission"
	fixture.ExpectError(t, w.Call(t, http.MethodPost, path, fixture.ANoMFA, nil), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, path, fixture.AViewer, nil), http.StatusForbidden, "forbidden")
	fixture.NotFound(t, w.Call(t, http.MethodPost, path, fixture.BAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodPost, path, fixture.PYAdmin, nil))
	d := fixture.Expect(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if d["status"] != "decommissioned" {
		t.Fatalf("decommissioned %v", d)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, nil), http.StatusConflict, "wrong_status")
	if ev := events(t, w); len(ev) != 1 || ev[0] != "device.decommissioned" {
		t.Fatalf("events %v", ev)
	}
	for _, p := range []string{"heartbeat"} {
		fixture.ExpectError(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+id+"/"+p, tok, beat()), http.StatusForbidden, "forbidden")
	}
	fixture.ExpectError(t, w.AgentCall(t, http.MethodPut, "/api/v1/agents/"+id+"/hardware", tok, map[string]any{}), http.StatusForbidden, "forbidden")
}

func TestAgentTokenChecks(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "one")
	other, otherTok := w.Device(t, fixture.BAdmin, w.B.ID, "", "two")
	for name, c := range map[string]struct{ id, tok string }{
		"no token":        {id, ""},
		"another device":  {id, otherTok},
		"altered":         {id, altered(tok)},
		"wrong prefix":    {id, "svc_" + tok[4:]},
		"unknown device":  {"7b0b5b6e-5a3a-4c1e-8f00-000000000000", tok},
		"user token":      {id, w.Tokens[fixture.AAdmin]},
		"token for other": {other, tok},
	} {
		res := w.AgentCall(t, http.MethodPost, beatPath(c.id), c.tok, beat())
		if res.Status != http.StatusUnauthorized {
			t.Fatalf("%s: status %d %s", name, res.Status, res.Body)
		}
	}
	fixture.Invalid(t, w.AgentCall(t, http.MethodPost, beatPath("not-a-uuid"), tok, beat()), "id")
}

func TestAgentBadInputChangesNothing(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "bad")
	before := getDevice(t, w, w.A.ID, id)
	keyID, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "spare", "maxUsage": 5})
	cases := []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, beatPath(id), map[string]any{"status": "great", "agentVersion": "1"}, "status"},
		{http.MethodPost, beatPath(id), map[string]any{"agentVersion": "1"}, "status"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok"}, "agentVersion"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok", "agentVersion": "1", "metrics": map[string]any{"cpuPercent": 101}}, "metrics.cpuPercent"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok", "agentVersion": "1", "metrics": map[string]any{"cpuPercent": "high"}}, "metrics.cpuPercent"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok", "agentVersion": "1", "uptimeSeconds": -1}, "uptimeSeconds"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok", "agentVersion": "1", "Status": "ok"}, "Status"},
		{http.MethodPost, beatPath(id), map[string]any{"status": "ok", "agentVersion": "1", "hostname": "\u0000\u202e"}, "hostname"}, // nothing left once cleaned
		{http.MethodPost, beatPath(id), `{"status": "ok", "agentVersion": 1}`, "agentVersion"},
		{http.MethodPost, beatPath(id), `[1]`, "body"},
		{http.MethodPut, "/api/v1/agents/" + id + "/hardware", map[string]any{"cpuCores": -2}, "cpuCores"},
		{http.MethodPut, "/api/v1/agents/" + id + "/hardware", map[string]any{"ramTotalMb": "lots"}, "ramTotalMb"},
		{http.MethodPut, "/api/v1/agents/" + id + "/hardware", map[string]any{"color": "red"}, "color"},
		{http.MethodPut, "/api/v1/agents/" + id + "/network", map[string]any{"ipAddress": strings.Repeat("1", 65)}, "ipAddress"},
		{http.MethodPut, "/api/v1/agents/" + id + "/software", map[string]any{"software": []any{map[string]any{"name": ""}}}, "software.0.name"},
		{http.MethodPut, "/api/v1/agents/" + id + "/software", map[string]any{}, "software"},
		{http.MethodPost, "/api/v1/agents/" + id + "/commands/x/result", map[string]any{"status": "completed"}, "commandId"},
		{http.MethodPost, "/api/v1/agents/" + id + "/commands/0b7f4a64-3a7c-4d5e-9a51-0b7c2a1d9e01/result", map[string]any{"status": "done"}, "status"},
	}
	for i, c := range cases {
		t.Logf("case %d: %s %s", i, c.method, c.field)
		fixture.Invalid(t, w.AgentCall(t, c.method, c.path, tok, c.body), c.field)
	}
	enrollCases := map[string]map[string]any{
		"hostname":      {"enrollmentKey": raw, "osType": "windows", "osVersion": "11", "architecture": "x64", "agentVersion": "1"},
		"osType":        {"enrollmentKey": raw, "hostname": "h", "osType": "beos", "osVersion": "11", "architecture": "x64", "agentVersion": "1"},
		"architecture":  {"enrollmentKey": raw, "hostname": "h", "osType": "linux", "osVersion": "11", "architecture": "sparc", "agentVersion": "1"},
		"deviceRole":    {"enrollmentKey": raw, "hostname": "h", "osType": "linux", "osVersion": "11", "architecture": "x64", "agentVersion": "1", "deviceRole": "toaster"},
		"enrollmentKey": {"hostname": "h", "osType": "linux", "osVersion": "11", "architecture": "x64", "agentVersion": "1"},
		"extra":         {"enrollmentKey": raw, "hostname": "h", "osType": "linux", "osVersion": "11", "architecture": "x64", "agentVersion": "1", "extra": true},
	}
	for field, body := range enrollCases {
		fixture.Invalid(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll", RemoteAddr: "192.0.2.99:1", Body: body}), field)
	}
	// A body over 32 KB is 413.
	big := beat()
	big["lastUser"] = strings.Repeat("x", 33<<10)
	fixture.ExpectError(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	after := getDevice(t, w, w.A.ID, id)
	if snapshot(before) != snapshot(after) {
		t.Fatalf("bad input changed the device:\n%+v\n%+v", before, after)
	}
	k, _ := enrollment.Store{St: w.Env.Store}.Key(context.Background(), w.A.ID, keyID)
	if k.UsageCount != 0 {
		t.Fatalf("bad enrollments consumed the key: %d", k.UsageCount)
	}
}

// snapshot is a device as comparable text (its JSON plus the stored-only fields).
func snapshot(d *device.Device) string {
	b, _ := json.Marshal(d)
	return fmt.Sprintf("%s|%s|%s", b, d.GSI2SK, d.SoftwareHash)
}

func TestTableHoldsNoRawKeyOrToken(t *testing.T) {
	w := newWorld(t)
	keyID, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "scan", "maxUsage": 3})
	res := fixture.Expect(t, w.Enroll(t, raw, "scan-1"), http.StatusCreated)
	var e struct{ DeviceID, AuthToken string }
	res.Decode(t, &e)
	rotated := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/enrollment-keys/"+keyID+"/rotate", fixture.AAdmin, map[string]any{}), http.StatusOK).JSON(t)
	raw2, _ := rotated["key"].(string)
	fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(e.DeviceID), e.AuthToken, beat()), http.StatusOK)
	dump := fixture.Scan(t, w.Env)
	for name, secret := range map[string]string{"enrollment key": raw, "rotated key": raw2, "agent token": e.AuthToken, "token body": e.AuthToken[4:]} {
		if secret == "" || strings.Contains(dump, strings.ToLower(secret)) {
			t.Fatalf("the table holds the raw %s", name)
		}
	}
}

// TestCallBudgets holds the documented DynamoDB call counts of the handler docs
// (enrollment, devices and agents) to the code.
func TestCallBudgets(t *testing.T) {
	w := newWorld(t)
	exactly := func(name string, res fixture.Response, status, n int) fixture.Response {
		t.Helper()
		fixture.Expect(t, res, status)
		if res.DBCalls != n {
			t.Fatalf("%s made %d DynamoDB calls, documented %d", name, res.DBCalls, n)
		}
		return res
	}
	var k struct{ ID, Key string }
	exactly("create key", w.Call(t, http.MethodPost, "/api/v1/enrollment-keys", fixture.AAdmin, map[string]any{"name": "x", "maxUsage": 5}), http.StatusCreated, 3).Decode(t, &k)
	exactly("list keys (org)", w.Call(t, http.MethodGet, "/api/v1/enrollment-keys", fixture.AAdmin, nil), http.StatusOK, 3)              // index page + the keys
	exactly("list keys (partner, 2 orgs)", w.Call(t, http.MethodGet, "/api/v1/enrollment-keys", fixture.PXAdmin, nil), http.StatusOK, 4) // the partner's organizations, its index partition, the keys
	exactly("get key (partner)", w.Call(t, http.MethodGet, "/api/v1/enrollment-keys/"+k.ID, fixture.PXAdmin, nil), http.StatusOK, 2)
	var d struct{ DeviceID, AuthToken string }
	exactly("enroll", w.Enroll(t, k.Key, "h"), http.StatusCreated, 5).Decode(t, &d) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	exactly("rotate", w.Call(t, http.MethodPost, "/api/v1/enrollment-keys/"+k.ID+"/rotate", fixture.AAdmin, nil), http.StatusOK, 3)
	dev := "/api/v1/devices/" + d.DeviceID
	// The device list reads the page's keys from its list index, then the
	// page's devices (one call more than the whole-partition Query it replaced
	// for a one-device organization; the same two calls for any size).
	exactly("list devices (org)", w.Call(t, http.MethodGet, "/api/v1/devices", fixture.AAdmin, nil), http.StatusOK, 3)
	exactly("get device (org)", w.Call(t, http.MethodGet, dev, fixture.AAdmin, nil), http.StatusOK, 2)
	exactly("get device (partner)", w.Call(t, http.MethodGet, dev, fixture.PXAdmin, nil), http.StatusOK, 3)
	exactly("patch device", w.Call(t, http.MethodPatch, dev, fixture.AAdmin, map[string]any{"groupId": w.GA}), http.StatusOK, 6)
	exactly("hardware", w.AgentCall(t, http.MethodPut, "/api/v1/agents/"+d.DeviceID+"/hardware", d.AuthToken, map[string]any{"cpuCores": 4}), http.StatusOK, 4)
	w.Env.Clock.Advance(time.Second) // agent uploads are spaced: an idle ingest bucket
	exactly("software", w.AgentCall(t, http.MethodPut, "/api/v1/agents/"+d.DeviceID+"/software", d.AuthToken, map[string]any{"software": []any{map[string]any{"name": "a"}}}), http.StatusOK, 4)
	exactly("get device with software", w.Call(t, http.MethodGet, dev, fixture.AAdmin, nil), http.StatusOK, 3)
	exactly("decommission", w.Call(t, http.MethodPost, dev+"/decommission", fixture.AAdmin, nil), http.StatusOK, 4)
	exactly("delete key", w.Call(t, http.MethodDelete, "/api/v1/enrollment-keys/"+k.ID, fixture.AAdmin, nil), http.StatusOK, 3)
}

func TestQuarantinedTokenIsRefused(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "q")
	k := device.AgentKey(id)
	if err := w.Env.Store.Do(context.Background(), store.Set(k.PK, k.SK, "status", "quarantined").Exists()); err != nil {
		t.Fatal(err)
	}
	body := fixture.ExpectError(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, beat()), http.StatusForbidden, "forbidden")
	if body["error"] != "Device is quarantined" {
		t.Fatalf("quarantined: %v", body)
	}
}

// altered changes the token's last hex digit (always to a different one).
func altered(tok string) string {
	last := "0"
	if strings.HasSuffix(tok, "0") {
		last = "1"
	}
	return tok[:len(tok)-1] + last
}
