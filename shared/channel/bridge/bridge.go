// Package bridge is API Gateway's WebSocket API on loopback, for make run and
// tests: it accepts agent connections (github.com/coder/websocket), turns
// them into the events API Gateway sends ($connect with the handshake's
// headers and query, $default with each text frame's body, $disconnect),
// invokes the channel's Lambda handler in-process, and serves the Management
// API's wire for its connections (POST and DELETE /@connections/{id}), so the
// real SDK client posts to it unchanged (endpoint override). It lives apart
// from shared/channel so no Lambda binary links a WebSocket server.
package bridge

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/coder/websocket"
)

// Path is where agents connect.
const Path = "/api/v1/agents/channel"

// Handler is the channel function's entry point (channel.Handler.Handle).
type Handler func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// Bridge serves Path and the Management API.
type Bridge struct {
	Handle Handler

	mu    sync.Mutex
	conns map[string]*websocket.Conn
}

// New is a bridge invoking h.
func New(h Handler) *Bridge { return &Bridge{Handle: h, conns: map[string]*websocket.Conn{}} }

// ServeHTTP serves the WebSocket handshake at Path and the Management API
// under /@connections/.
func (b *Bridge) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if id, ok := strings.CutPrefix(r.URL.Path, "/@connections/"); ok {
		b.manage(w, r, id)
		return
	}
	b.accept(w, r)
}

// connID is shaped like API Gateway's (16 base64 characters).
func connID() string {
	var raw [11]byte
	_, _ = rand.Read(raw[:])
	return base64.StdEncoding.EncodeToString(raw[:])
}

func (b *Bridge) event(r *http.Request, id, route, kind, body string) events.APIGatewayWebsocketProxyRequest {
	ev := events.APIGatewayWebsocketProxyRequest{
		Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: route, EventType: kind, ConnectionID: id, RequestID: connID(),
			Stage: "local", APIID: "local", DomainName: r.Host, RequestTimeEpoch: time.Now().UnixMilli(),
		},
	}
	if route == "$connect" {
		ev.Headers, ev.MultiValueHeaders = map[string]string{}, map[string][]string{}
		for k, vs := range r.Header {
			ev.Headers[k] = strings.Join(vs, ",")
			ev.MultiValueHeaders[k] = vs
		}
		if q := r.URL.Query(); len(q) > 0 {
			ev.QueryStringParameters = map[string]string{}
			for k, vs := range q {
				ev.QueryStringParameters[k] = vs[0]
			}
		}
	}
	return ev
}

func (b *Bridge) accept(w http.ResponseWriter, r *http.Request) {
	id := connID()
	res, err := b.Handle(r.Context(), b.event(r, id, "$connect", "CONNECT", ""))
	if err != nil {
		http.Error(w, `{"message": "Internal server error"}`, http.StatusInternalServerError)
		return
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		// A refused handshake: the function's status and body, no upgrade.
		for k, v := range res.Headers {
			w.Header().Set(k, v)
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.WriteString(w, res.Body)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	// Only now is the connection known to the Management API: as in API
	// Gateway, nothing can be posted to it while $connect runs.
	b.mu.Lock()
	b.conns[id] = ws
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		delete(b.conns, id)
		b.mu.Unlock()
		_, _ = b.Handle(context.Background(), b.event(r, id, "$disconnect", "DISCONNECT", ""))
	}()
	ctx := context.Background()
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		if typ != websocket.MessageText {
			continue // API Gateway's $default takes text; binary is not in the wire
		}
		res, err := b.Handle(ctx, b.event(r, id, "$default", "MESSAGE", string(data)))
		if err != nil {
			msg, _ := json.Marshal(map[string]string{"message": "Internal server error", "connectionId": id})
			_ = ws.Write(ctx, websocket.MessageText, msg)
			continue
		}
		if res.Body != "" {
			// The route's response (a two-way route in API Gateway).
			_ = ws.Write(ctx, websocket.MessageText, []byte(res.Body))
		}
	}
}

// manage serves the Management API: POST posts the body as one text frame,
// DELETE closes the connection; an unknown connection is 410 GoneException.
func (b *Bridge) manage(w http.ResponseWriter, r *http.Request, id string) {
	b.mu.Lock()
	ws := b.conns[id]
	if r.Method == http.MethodDelete {
		delete(b.conns, id)
	}
	b.mu.Unlock()
	if ws == nil {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Amzn-ErrorType", "GoneException")
		w.WriteHeader(http.StatusGone)
		_, _ = io.WriteString(w, `{"message":"Connection is gone"}`)
		return
	}
	switch r.Method {
	case http.MethodPost:
		data, err := io.ReadAll(io.LimitReader(r.Body, 128<<10))
		if err != nil {
			http.Error(w, "read", http.StatusBadRequest)
			return
		}
		if err := ws.Write(r.Context(), websocket.MessageText, data); err != nil {
			w.Header().Set("X-Amzn-ErrorType", "GoneException")
			w.WriteHeader(http.StatusGone)
			return
		}
		w.WriteHeader(http.StatusOK)
	case http.MethodDelete:
		// The close handshake waits for the agent's answer; API Gateway
		// answers DeleteConnection at once.
		go ws.Close(websocket.StatusNormalClosure, "replaced")
		w.WriteHeader(http.StatusNoContent)
	default:
		w.WriteHeader(http.StatusMethodNotAllowed)
	}
}
