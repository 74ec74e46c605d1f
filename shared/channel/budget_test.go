package channel_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/channel"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/sweep"
	"github.com/gale-rmm/gale/tests/fixture"
)

// event is a WebSocket API event of connection id.
func event(route, id, body string, headers, query map[string]string) events.APIGatewayWebsocketProxyRequest {
	return events.APIGatewayWebsocketProxyRequest{Body: body, Headers: headers, QueryStringParameters: query,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{RouteKey: route, ConnectionID: id}}
}

// TestEventBudgetsAndQuietKeepalive holds each event to the package doc's
// DynamoDB calls, and shows a keepalive writes nothing.
func TestEventBudgetsAndQuietKeepalive(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "budget")
	h := agentchannelgroup.Handler(n.Env.Deps)
	st := channel.Store{St: n.Env.Store}
	serve := func(ev events.APIGatewayWebsocketProxyRequest, budget int) events.APIGatewayProxyResponse {
		t.Helper()
		ctx, calls := store.WithCalls(context.Background())
		res, err := h.Handle(ctx, ev)
		if err != nil {
			t.Fatalf("%s: %v", ev.RequestContext.RouteKey, err)
		}
		if calls.N() != budget {
			t.Errorf("%s %s: %d DynamoDB calls, want %d", ev.RequestContext.RouteKey, ev.Body, calls.N(), budget)
		}
		return res
	}
	auth := map[string]string{"Authorization": "Bearer " + d.tok}
	q := map[string]string{"deviceId": d.id}
	if res := serve(event("$connect", "conn-a", "", auth, q), 4); res.StatusCode != http.StatusOK {
		t.Fatalf("connect %d %s", res.StatusCode, res.Body)
	}
	// First frame: the connection, the claim of its re-send, the agent row.
	serve(event("$default", "conn-a", `{"type":"ping"}`, nil, nil), 3)
	c, err := st.Conn(context.Background(), "conn-a")
	if err != nil {
		t.Fatal(err)
	}
	ttl := c.TTL
	// A keepalive reads the connection and writes nothing, however near the
	// connection's end (API Gateway closes it at 2 hours whatever it sends).
	for _, at := range []time.Duration{time.Hour, 55 * time.Minute} {
		n.Env.Clock.Advance(at)
		if res := serve(event("$default", "conn-a", `{"type":"ping"}`, nil, nil), 1); res.Body != `{"type":"pong"}` {
			t.Fatalf("pong %q", res.Body)
		}
	}
	if c, err = st.Conn(context.Background(), "conn-a"); err != nil || c.TTL != ttl {
		t.Fatalf("connection after the keepalives: %+v %v (ttl was %d)", c, err, ttl)
	}
	serve(event("$default", "conn-a", `{"type":"ack","id":"0b7f4a64-3a7c-4d5e-9a51-0b7c2a1d9e01"}`, nil, nil), 2)
	serve(event("$default", "conn-a", `{"type":"nope"}`, nil, nil), 0)
	// A replacement: the old connection's close goes to the Management API
	// (gone here, as it was never bridged), its rows are forgotten.
	if res := serve(event("$connect", "conn-b", "", auth, q), 5); res.StatusCode != http.StatusOK {
		t.Fatalf("second connect %d", res.StatusCode)
	}
	if _, err := st.Conn(context.Background(), "conn-a"); err == nil {
		t.Fatal("replaced connection still recorded")
	}
	// The replaced connection's late $disconnect finds nothing to do.
	serve(event("$disconnect", "conn-a", "", nil, nil), 1)
	if dc, err := st.Device(context.Background(), d.id); err != nil || dc.ConnID != "conn-b" {
		t.Fatalf("device row after the late disconnect: %+v %v", dc, err)
	}
	if a := agentRow(t, n, d.id); a.Status != device.StatusOnline || !a.Connected(n.Env.Clock.Now()) {
		t.Fatalf("after the late disconnect: %s, connected %v", a.Status, a.Connected(n.Env.Clock.Now()))
	}
	// The live connection's $disconnect: the device goes offline (one
	// transaction with device.offline's outbox row, then its clear).
	serve(event("$disconnect", "conn-b", "", nil, nil), 6)
	if _, err := st.Device(context.Background(), d.id); err == nil {
		t.Fatal("device row kept after its connection's disconnect")
	}
	if a := agentRow(t, n, d.id); a.Status != device.StatusOffline || a.Connected(n.Env.Clock.Now()) {
		t.Fatalf("after the disconnect: %s, connected %v", a.Status, a.Connected(n.Env.Clock.Now()))
	}
}

// agentRow reads device id's agent row as stored.
func agentRow(t *testing.T, n *net, id string) *device.Agent {
	t.Helper()
	a, err := device.Store{St: n.Env.Store}.Agent(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestExpiredCommandsAreNotSent: past its expiresAt (the approval window) a
// command is re-sent neither on the channel nor in a heartbeat answer.
func TestExpiredCommandsAreNotSent(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "expiry")
	c, _ := n.connect(t, d)
	id := n.pending(t, d)
	n.approve(t, id) // 30 minutes
	read(t, c)
	n.actuate(t, d, id)
	read(t, c)
	c.CloseNow()
	n.Env.Clock.Advance(31 * time.Minute)
	if _, before := n.connect(t, d); len(before) != 0 {
		t.Fatalf("expired command re-sent: %v", before)
	}
	var hb struct{ Commands []any }
	n.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, map[string]any{"status": "ok", "agentVersion": "1"}).Decode(t, &hb)
	if len(hb.Commands) != 0 {
		t.Fatalf("heartbeat answers expired commands %v", hb.Commands)
	}
}

// TestDenyAndExpiryReachTheAgent: a denial and the sweeper's expiry of an
// approval are pushed as decisions too (an expiry without expiresAt).
func TestDenyAndExpiryReachTheAgent(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "decisions")
	c, _ := n.connect(t, d)
	denied := n.pending(t, d)
	fixture.Expect(t, n.Call(t, http.MethodPost, "/api/v1/pam/elevation-requests/"+denied+"/respond", fixture.AAdmin,
		map[string]any{"decision": "deny"}), http.StatusOK)
	if f := read(t, c); f["requestId"] != denied || f["status"] != "denied" || f["expiresAt"] != nil {
		t.Fatalf("denial %v", f)
	}
	approved := n.pending(t, d)
	n.approve(t, approved)
	read(t, c)
	n.Env.Clock.Advance(31 * time.Minute)
	if err := sweepergroup.Sweeper(n.Env.Deps).Handle(context.Background(), sweep.Event{Job: "elevation-expiry"}); err != nil {
		t.Fatal(err)
	}
	if f := read(t, c); f["type"] != "elevation.decision" || f["requestId"] != approved || f["status"] != "expired" || f["expiresAt"] != nil {
		t.Fatalf("expiry %v", f)
	}
}
