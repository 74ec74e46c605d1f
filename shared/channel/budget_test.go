package channel_test

import (
	"context"
	"net/http"
	"strings"
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

// event is a WebSocket API event of connection id of device deviceID (as
// the authorizer allowed it: requestContext.authorizer).
func event(route, id, deviceID, body string) events.APIGatewayWebsocketProxyRequest {
	return events.APIGatewayWebsocketProxyRequest{Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{RouteKey: route, ConnectionID: id,
			Authorizer: map[string]any{"principalId": deviceID, channel.CtxDevice: deviceID, channel.CtxOrg: "org"}}}
}

// authorizerEvent is the $connect authorizer's event for device deviceID
// with token tok.
func authorizerEvent(deviceID, tok string) events.APIGatewayCustomAuthorizerRequestTypeRequest {
	return events.APIGatewayCustomAuthorizerRequestTypeRequest{Type: "REQUEST", MethodArn: "arn:aws:execute-api:us-east-1:1:api/agents/$connect",
		Headers: map[string]string{"Authorization": "Bearer " + tok}, QueryStringParameters: map[string]string{"deviceId": deviceID}}
}

// TestEventBudgetsAndQuietKeepalive holds each event to the package doc's
// DynamoDB calls, and shows a keepalive writes nothing.
func TestEventBudgetsAndQuietKeepalive(t *testing.T) {
	n := newNet(t)
	d := n.device(t, "budget")
	h := agentchannelgroup.Handler(n.Env.Deps)
	counted := func(what string, budget int, do func(ctx context.Context)) {
		t.Helper()
		ctx, calls := store.WithCalls(context.Background())
		do(ctx)
		if calls.N() != budget {
			t.Errorf("%s: %d DynamoDB calls, want %d", what, calls.N(), budget)
		}
	}
	serve := func(ev events.APIGatewayWebsocketProxyRequest, budget int) events.APIGatewayProxyResponse {
		t.Helper()
		var res events.APIGatewayProxyResponse
		counted(ev.RequestContext.RouteKey+" "+ev.Body, budget, func(ctx context.Context) {
			var err error
			if res, err = h.Handle(ctx, ev); err != nil {
				t.Fatalf("%s: %v", ev.RequestContext.RouteKey, err)
			}
		})
		return res
	}
	counted("authorizer", 1, func(ctx context.Context) {
		res, err := h.Authorize(ctx, authorizerEvent(d.id, d.tok))
		if err != nil || res.Context[channel.CtxDevice] != d.id || res.Context[channel.CtxOrg] != n.A.ID ||
			len(res.PolicyDocument.Statement) != 1 || res.PolicyDocument.Statement[0].Effect != "Allow" {
			t.Fatalf("authorizer: %+v %v", res, err)
		}
	})
	counted("refused authorizer", 1, func(ctx context.Context) {
		if _, err := h.Authorize(ctx, authorizerEvent(d.id, "agt_"+strings.Repeat("0", 64))); err == nil || err.Error() != "Unauthorized" {
			t.Fatalf("wrong token: %v, want Unauthorized", err)
		}
	})
	// The enrolled device is online with its heartbeat's last-seen key: the
	// first connect moves it ahead (+2).
	if res := serve(event("$connect", "conn-a", d.id, ""), 3); res.StatusCode != http.StatusOK {
		t.Fatalf("connect %d %s", res.StatusCode, res.Body)
	}
	serve(event("$default", "conn-a", d.id, `{"type":"ping"}`), 1)
	before := agentRow(t, n, d.id)
	// A keepalive reads the agent row and writes nothing, however near the
	// connection's end (API Gateway closes it at 2 hours whatever it sends).
	for _, at := range []time.Duration{time.Hour, 55 * time.Minute} {
		n.Env.Clock.Advance(at)
		if res := serve(event("$default", "conn-a", d.id, `{"type":"ping"}`), 1); res.Body != `{"type":"pong"}` {
			t.Fatalf("pong %q", res.Body)
		}
	}
	if a := agentRow(t, n, d.id); a.ChannelUntil != before.ChannelUntil || a.SeenKey != before.SeenKey {
		t.Fatalf("agent row after the keepalives: %+v (was %+v)", a, before)
	}
	serve(event("$default", "conn-a", d.id, `{"type":"ack","id":"0b7f4a64-3a7c-4d5e-9a51-0b7c2a1d9e01"}`), 2)
	serve(event("$default", "conn-a", d.id, `{"type":"nope"}`), 0)
	// A replacement: one write (the key is not due); the old connection's
	// close goes to the Management API (gone here, as it was never bridged).
	if res := serve(event("$connect", "conn-b", d.id, ""), 1); res.StatusCode != http.StatusOK {
		t.Fatalf("second connect %d", res.StatusCode)
	}
	// The replaced connection's frames and late $disconnect find the marker
	// moved on.
	if res := serve(event("$default", "conn-a", d.id, `{"type":"ping"}`), 1); !strings.Contains(res.Body, `"code":"unauthorized"`) {
		t.Fatalf("replaced connection's ping: %s", res.Body)
	}
	serve(event("$disconnect", "conn-a", d.id, ""), 1)
	if a := agentRow(t, n, d.id); a.ChannelConn() != "conn-b" || a.Status != device.StatusOnline || !a.Connected(n.Env.Clock.Now()) {
		t.Fatalf("after the late disconnect: %s, marker %q", a.Status, a.ChannelUntil)
	}
	// The live connection's $disconnect: the device goes offline (one
	// transaction with device.offline's outbox row, then its clear).
	serve(event("$disconnect", "conn-b", d.id, ""), 3)
	if a := agentRow(t, n, d.id); a.Status != device.StatusOffline || a.Connected(n.Env.Clock.Now()) || a.ChannelUntil != "" {
		t.Fatalf("after the disconnect: %s, marker %q", a.Status, a.ChannelUntil)
	}
	// Back online by a connect: the marker, the transaction, the outbox clear.
	if res := serve(event("$connect", "conn-c", d.id, ""), 3); res.StatusCode != http.StatusOK {
		t.Fatalf("third connect %d", res.StatusCode)
	}
	if a := agentRow(t, n, d.id); a.Status != device.StatusOnline || a.ChannelConn() != "conn-c" {
		t.Fatalf("after the third connect: %s, marker %q", a.Status, a.ChannelUntil)
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
