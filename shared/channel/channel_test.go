package channel_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/clock"

	"github.com/coder/websocket"

	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
	"github.com/gale-rmm/gale/shared/channel/bridge"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var groups = []string{"pam", "agents", "devices", "enrollment-keys"}

// net is a world whose functions push through a loopback bridge serving the
// channel function: the agent's side is a real WebSocket client.
type net struct {
	*fixture.World
	addr string
}

func newNet(t testing.TB) *net {
	t.Helper()
	w := fixture.NewWorld(t, groups...)
	srv := httptest.NewUnstartedServer(nil)
	addr := srv.Listener.Addr().String()
	w.Env.Deps.Cfg.PAMActuatorEnabled = true
	w.Env.Deps.Cfg.ChannelEndpoint = "http://" + addr
	w.Env.Deps.Cfg.ChannelURL = "ws://" + addr + bridge.Path
	w.API = fixture.API(t, w.Env, groups...)
	h := agentchannelgroup.Handler(w.Env.Deps)
	srv.Config.Handler = bridge.New(h.Authorize, h.Handle)
	srv.Start()
	t.Cleanup(srv.Close)
	return &net{World: w, addr: addr}
}

// dev is an enrolled device of organization A and its token.
type dev struct{ id, tok string }

func (n *net) device(t testing.TB, host string) dev {
	t.Helper()
	id, tok := n.Device(t, fixture.AAdmin, n.A.ID, n.A1.ID, host)
	return dev{id, tok}
}

func (n *net) dial(t testing.TB, d dev, token string) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	// A connection newer by the clock replaces the device's live one (a
	// marker only grows): a reconnect comes at least a millisecond later.
	n.Env.Clock.Advance(time.Millisecond)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return websocket.Dial(ctx, "ws://"+n.addr+bridge.Path+"?deviceId="+d.id,
		&websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
}

// connect opens d's channel and sends its first ping (the re-send of what
// is pending arrives before the pong), returning the frames before the pong.
func (n *net) connect(t testing.TB, d dev) (*websocket.Conn, []map[string]any) {
	t.Helper()
	c, _, err := n.dial(t, d, d.tok)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { c.CloseNow() })
	return c, ping(t, c)
}

// ping sends a ping and returns the frames received before the pong.
func ping(t testing.TB, c *websocket.Conn) []map[string]any {
	t.Helper()
	send(t, c, map[string]any{"type": "ping"})
	var before []map[string]any
	for {
		f := read(t, c)
		if f["type"] == "pong" {
			return before
		}
		before = append(before, f)
	}
}

func send(t testing.TB, c *websocket.Conn, frame any) {
	t.Helper()
	data, _ := json.Marshal(frame)
	sendRaw(t, c, string(data))
}

func sendRaw(t testing.TB, c *websocket.Conn, data string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(data)); err != nil {
		t.Fatalf("write: %v", err)
	}
}

// read waits (at most 5 s, a bound, not a pause) for the next frame.
func read(t testing.TB, c *websocket.Conn) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, data, err := c.Read(ctx)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	var f map[string]any
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("frame %q: %v", data, err)
	}
	return f
}

func prompt(subject string) map[string]any {
	return map[string]any{"subject_username": subject, "target_executable_path": `C:\Tools\setup.exe`,
		"target_executable_signer": "Contoso Ltd", "pid": 4242, "observed_at": "2026-11-01T08:59:59.000Z"}
}

// pending files a pending elevation request from d.
func (n *net) pending(t testing.TB, d dev) string {
	t.Helper()
	res := fixture.Expect(t, n.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/elevation-requests", d.tok, prompt(`CORP\jdoe`)), http.StatusCreated)
	var out struct{ ID, Status string }
	res.Decode(t, &out)
	if out.Status != "pending" {
		t.Fatalf("request status %q", out.Status)
	}
	return out.ID
}

func (n *net) approve(t testing.TB, id string) {
	t.Helper()
	fixture.Expect(t, n.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+id+"/respond", fixture.AAdmin,
		map[string]any{"decision": "approve", "durationMinutes": 30}), http.StatusOK)
}

// actuate approves a new request of d and actuates it: the command's id.
func (n *net) actuate(t testing.TB, d dev, id string) string {
	t.Helper()
	res := fixture.Expect(t, n.Call(t, http.MethodPost, "/api/v1/devices/"+d.id+"/actuate-elevation", fixture.AAdmin,
		map[string]any{"elevationRequestId": id}), http.StatusCreated)
	var out struct{ CommandID string }
	res.Decode(t, &out)
	return out.CommandID
}

func commandIDs(frames []map[string]any) []string {
	var out []string
	for _, f := range frames {
		if f["type"] == "command" {
			out = append(out, f["id"].(string))
		}
	}
	return out
}

func TestConnectRefusesWrongRevokedAndDecommissioned(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "refused")
	other := n.device(t, "other")
	wrong := "agt_" + strings.Repeat("0", 64)
	for name, tok := range map[string]string{"wrong": wrong, "malformed": "agt_00", "another device's": other.tok, "none": ""} {
		_, res, err := n.dial(t, d, tok)
		if err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s token: err %v, response %v; want 401 in the handshake", name, err, res)
		}
	}
	if err := n.Env.Store.Do(context.Background(), device.AgentDecommissionWrite(d.id)); err != nil {
		t.Fatal(err)
	}
	if _, res, err := n.dial(t, d, d.tok); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Errorf("decommissioned: err %v, response %v; want 401", err, res)
	}
}

// TestApproveAndActuateReachTheAgent: the decision and the actuation arrive
// on the channel; the ack stops every later delivery, on the channel and in
// the heartbeat's answer.
func TestApproveAndActuateReachTheAgent(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-1")
	c, before := n.connect(t, d)
	if len(before) != 0 {
		t.Fatalf("fresh device got %v", before)
	}
	id := n.pending(t, d)
	n.approve(t, id)
	f := read(t, c)
	if f["type"] != "elevation.decision" || f["requestId"] != id || f["status"] != "approved" || f["expiresAt"] == nil {
		t.Fatalf("decision frame %v", f)
	}
	cmdID := n.actuate(t, d, id)
	f = read(t, c)
	cmd, _ := f["command"].(map[string]any)
	if f["type"] != "command" || f["id"] != cmdID || cmd["type"] != "actuate_elevation" || cmd["id"] != cmdID || f["expiresAt"] == nil {
		t.Fatalf("command frame %v", f)
	}
	if p, _ := cmd["payload"].(map[string]any); p["elevationRequestId"] != id {
		t.Fatalf("payload %v", cmd["payload"])
	}
	// Before the ack a poll re-sends it, with its id.
	beat := map[string]any{"status": "ok", "agentVersion": "1.0.0"}
	var hb struct{ Commands []device.Command }
	fixture.Expect(t, n.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, beat), http.StatusOK).Decode(t, &hb)
	if len(hb.Commands) != 1 || hb.Commands[0].ID != cmdID {
		t.Fatalf("heartbeat before the ack: %+v", hb.Commands)
	}
	send(t, c, map[string]any{"type": "ack", "id": cmdID})
	// The ack has no answer; the pong after it proves it was served.
	if got := ping(t, c); len(got) != 0 {
		t.Fatalf("frames after the ack: %v", got)
	}
	fixture.Expect(t, n.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, beat), http.StatusOK).Decode(t, &hb)
	if len(hb.Commands) != 0 {
		t.Fatalf("heartbeat after the ack re-sends %+v", hb.Commands)
	}
	// Acks are idempotent: again, or of an id never queued.
	send(t, c, map[string]any{"type": "ack", "id": cmdID})
	send(t, c, map[string]any{"type": "ack", "id": "0b7f4a64-3a7c-4d5e-9a51-0b7c2a1d9e01"})
	if got := ping(t, c); len(got) != 0 {
		t.Fatalf("frames after repeated acks: %v", got)
	}
	// The result route still takes the acknowledged command's result.
	fixture.Expect(t, n.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/commands/"+cmdID+"/result", d.tok,
		map[string]any{"status": "completed"}), http.StatusOK)
}

// TestReconnectMidStreamLosesNothing: a command acknowledged before the
// connection died is never sent again; one received but not acknowledged,
// and one created while the device had no connection, arrive on the next
// connection with their ids.
func TestReconnectMidStreamLosesNothing(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-2")
	c1, _ := n.connect(t, d)
	var reqs []string
	for range 3 {
		id := n.pending(t, d)
		n.approve(t, id)
		if f := read(t, c1); f["type"] != "elevation.decision" {
			t.Fatalf("decision %v", f)
		}
		reqs = append(reqs, id)
	}
	acked := n.actuate(t, d, reqs[0])
	if f := read(t, c1); f["id"] != acked {
		t.Fatalf("first command %v", f)
	}
	send(t, c1, map[string]any{"type": "ack", "id": acked})
	received := n.actuate(t, d, reqs[1])
	if f := read(t, c1); f["id"] != received {
		t.Fatalf("second command %v", f)
	}
	ping(t, c1) // the ack is served before the connection dies
	c1.CloseNow()
	// The push of a command created now finds no connection (or a gone one).
	missed := n.actuate(t, d, reqs[2])
	c2, before := n.connect(t, d)
	got := commandIDs(before)
	want := []string{received, missed}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("re-sent %v, want %v (never %s)", got, want, acked)
	}
	for _, id := range got {
		send(t, c2, map[string]any{"type": "ack", "id": id})
	}
	ping(t, c2)
	c2.CloseNow()
	_, before = n.connect(t, d)
	if len(before) != 0 {
		t.Fatalf("everything acknowledged, yet re-sent %v", before)
	}
}

// TestUnnamedReplacedConnectionClosesAtItsFrame: a connection whose
// replacer could not name it (the replacing connect's answer was lost and a
// newer connect overtook it: agent.Service.Connect) is closed at its next
// frame, which finds the marker naming another connection. The marker is
// moved here as that lost write left it, so nothing closed the connection.
func TestUnnamedReplacedConnectionClosesAtItsFrame(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-lost")
	c, _ := n.connect(t, d)
	newer := clock.Format(n.Env.Clock.Now().Add(device.ConnectedFor)) + "#lost-answer"
	if err := n.Env.Store.Do(context.Background(), device.ConnectMarkerWrite(d.id, newer)); err != nil {
		t.Fatal(err)
	}
	send(t, c, map[string]any{"type": "ping"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		_, data, err := c.Read(ctx)
		if err == nil {
			if !strings.Contains(string(data), `"code":"unauthorized"`) {
				t.Fatalf("frame on the replaced connection: %s", data)
			}
			continue // the error frame, when it outruns the close
		}
		if websocket.CloseStatus(err) != websocket.StatusNormalClosure {
			t.Fatalf("replaced connection after its ping: %v, want closed", err)
		}
		break
	}
	if a := agentRow(t, n, d.id); a.ChannelUntil != newer {
		t.Fatalf("marker %q after the replaced connection's close, want %q", a.ChannelUntil, newer)
	}
}

// TestSecondConnectionReplacesTheFirst: the older connection is closed and
// pushes reach the newer one.
func TestSecondConnectionReplacesTheFirst(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-3")
	c1, _ := n.connect(t, d)
	c2, _ := n.connect(t, d)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := c1.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("first connection: %v, want closed", err)
	}
	id := n.pending(t, d)
	n.approve(t, id)
	if f := read(t, c2); f["type"] != "elevation.decision" || f["requestId"] != id {
		t.Fatalf("second connection got %v", f)
	}
	if a := agentRow(t, n, d.id); a.ChannelConn() == "" {
		t.Fatalf("device's marker %q", a.ChannelUntil)
	}
}

// TestBadFramesAnswerAnErrorAndKeepTheConnection.
func TestBadFramesAnswerAnErrorAndKeepTheConnection(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-4")
	c, _ := n.connect(t, d)
	for raw, code := range map[string]string{`not json`: "invalid_frame", `{"type":"reboot"}`: "unknown_type",
		`{"type":"ack","id":"a.b"}`: "invalid_frame", `{}`: "invalid_frame"} {
		sendRaw(t, c, raw)
		f := read(t, c)
		if f["type"] != "error" || f["code"] != code || f["error"] == "" {
			t.Errorf("%s: %v, want error %s", raw, f, code)
		}
	}
	ping(t, c)
}

// TestHeartbeatFrameIsAPoll: the HTTP heartbeat's body on the channel
// records the beat and re-sends what is pending.
func TestHeartbeatFrameIsAPoll(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-5")
	c, _ := n.connect(t, d)
	id := n.pending(t, d)
	n.approve(t, id)
	read(t, c)
	cmdID := n.actuate(t, d, id)
	read(t, c)
	n.Env.Clock.Advance(time.Minute)
	send(t, c, map[string]any{"type": "heartbeat", "status": "ok", "agentVersion": "2.0.0"})
	if f := read(t, c); f["type"] != "command" || f["id"] != cmdID {
		t.Fatalf("heartbeat re-send %v", f)
	}
	dv, err := device.Store{St: n.Env.Store}.Get(context.Background(), n.A.ID, d.id)
	if err != nil || dv.AgentVersion != "2.0.0" {
		t.Fatalf("device after the heartbeat frame: %+v %v", dv, err)
	}
	send(t, c, map[string]any{"type": "heartbeat", "status": "bad"})
	if f := read(t, c); f["type"] != "error" || f["code"] != "validation_failed" {
		t.Fatalf("invalid heartbeat %v", f)
	}
}

// TestRevokeEndsTheRunningElevation: revoking an actuated elevation tells
// the decision and queues end_elevation in place of the actuation.
func TestRevokeEndsTheRunningElevation(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "pc-6")
	c, _ := n.connect(t, d)
	id := n.pending(t, d)
	n.approve(t, id)
	read(t, c)
	act := n.actuate(t, d, id)
	read(t, c)
	fixture.Expect(t, n.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+id+"/revoke", fixture.AAdmin,
		map[string]any{"reason": "wrong tool"}), http.StatusOK)
	if f := read(t, c); f["type"] != "elevation.decision" || f["status"] != "revoked" || f["requestId"] != id {
		t.Fatalf("revocation %v", f)
	}
	f := read(t, c)
	cmd, _ := f["command"].(map[string]any)
	if f["type"] != "command" || cmd["type"] != "end_elevation" || cmd["payload"].(map[string]any)["elevationRequestId"] != id {
		t.Fatalf("end command %v", f)
	}
	a, err := device.Store{St: n.Env.Store}.Agent(context.Background(), d.id)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Commands[act]; ok || len(a.Commands) != 1 {
		t.Fatalf("queue after revoke %+v", a.Commands)
	}
}

// TestAgentReadsOnlyItsOwnRequests: GET /agents/:id/elevation-requests/:requestId.
func TestAgentReadsOnlyItsOwnRequests(t *testing.T) {
	n := newNet(t)
	d, other := n.device(t, "pc-7"), n.device(t, "pc-8")
	id := n.pending(t, d)
	path := func(dv dev) string { return "/api/v1/agents/" + dv.id + "/elevation-requests/" + id }
	var v struct {
		ID, Status string
		ExpiresAt  *string
	}
	fixture.Expect(t, n.AgentCall(t, http.MethodGet, path(d), d.tok, nil), http.StatusOK).Decode(t, &v)
	if v.ID != id || v.Status != "pending" || v.ExpiresAt != nil {
		t.Fatalf("pending view %+v", v)
	}
	n.approve(t, id)
	fixture.Expect(t, n.AgentCall(t, http.MethodGet, path(d), d.tok, nil), http.StatusOK).Decode(t, &v)
	if v.Status != "approved" || v.ExpiresAt == nil {
		t.Fatalf("approved view %+v", v)
	}
	body := fixture.ExpectError(t, n.AgentCall(t, http.MethodGet, path(other), other.tok, nil), http.StatusNotFound, "not_found")
	if body["error"] != "Elevation request not found" {
		t.Fatalf("another device's request: %v", body)
	}
	fixture.ExpectError(t, n.AgentCall(t, http.MethodGet, path(d), other.tok, nil), http.StatusUnauthorized, "unauthorized")
}

// TestPresenceFollowsTheConnection: a real client's connection makes its
// device online with device.online, and closing it makes the device
// offline with device.offline. (A replaced connection's late $disconnect,
// whose timing a client cannot order, is TestEventBudgetsAndQuietKeepalive's
// and shared/agent's TestChannelPresence.)
func TestPresenceFollowsTheConnection(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "presence")
	fixture.Events(t, n.World) // enrollment's
	eventually := func(want string, types ...string) {
		t.Helper()
		// The bridge runs $disconnect when the server side sees the close,
		// and the event is sent after the transaction: wait for both (a
		// bound, not a pause), then require exactly types.
		var got []string
		deadline := time.Now().Add(5 * time.Second)
		for {
			for _, ev := range fixture.Events(t, n.World) {
				got = append(got, ev["type"].(string))
			}
			status := agentRow(t, n, d.id).Status
			if status == want && len(got) >= len(types) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("device %s with events %v, want %s with %v", status, got, want, types)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if !slices.Equal(got, types) {
			t.Fatalf("events %v, want %v", got, types)
		}
	}
	// An enrolled device is online already: its first connection keeps it.
	c0, _ := n.connect(t, d)
	eventually(device.StatusOnline)
	if err := c0.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	eventually(device.StatusOffline, "device.offline")
	c1, _ := n.connect(t, d)
	eventually(device.StatusOnline, "device.online")
	if err := c1.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	eventually(device.StatusOffline, "device.offline")
}

// TestDecommissionClosesTheChannel: decommissioning a connected device
// closes its connection, and it cannot connect again.
func TestDecommissionClosesTheChannel(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "retired")
	c, _ := n.connect(t, d)
	fixture.Expect(t, n.Call(t, http.MethodPost, "/api/v1/devices/"+d.id+"/decommission", fixture.AAdmin, nil), http.StatusOK)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, _, err := c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Fatalf("after the decommission the connection read %v, want a normal close", err)
	}
	if _, res, err := n.dial(t, d, d.tok); err == nil || res == nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("decommissioned device connected again: %v %v", err, res)
	}
}
