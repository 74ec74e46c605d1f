// Package bridge is API Gateway's WebSocket API on loopback, for make run and
// tests: it accepts agent connections (github.com/coder/websocket), runs the
// $connect route's Lambda REQUEST authorizer on the upgrade request (a
// refusal is 401 in the handshake, as API Gateway answers an authorizer's
// "Unauthorized"), turns the connection into the events API Gateway sends
// ($connect with the handshake's headers and query, $default with each text
// frame's body, $disconnect; each with the authorizer's context in
// requestContext.authorizer), invokes the channel's Lambda handlers
// in-process, and serves the Management API's wire for its connections
// (POST and DELETE /@connections/{id}), so the real SDK client posts to it
// unchanged (endpoint override). It lives apart from shared/channel so no
// Lambda binary links a WebSocket server.
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

// Handler is the channel function's routes (channel.Handler.Handle).
type Handler func(context.Context, events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error)

// Authorizer is the $connect route's Lambda authorizer
// (channel.Handler.Authorize).
type Authorizer func(context.Context, events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error)

// Bridge serves Path and the Management API.
type Bridge struct {
	Authorize Authorizer
	Handle    Handler

	mu    sync.Mutex
	conns map[string]*websocket.Conn
}

// New is a bridge authorizing connections with auth and invoking h.
func New(auth Authorizer, h Handler) *Bridge {
	return &Bridge{Authorize: auth, Handle: h, conns: map[string]*websocket.Conn{}}
}

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

// handshake is the upgrade request's headers and query as API Gateway
// passes them to the authorizer and to $connect.
func handshake(r *http.Request) (hs map[string]string, mhs map[string][]string, q map[string]string, mq map[string][]string) {
	hs, mhs = map[string]string{}, map[string][]string{}
	for k, vs := range r.Header {
		hs[k] = strings.Join(vs, ",")
		mhs[k] = vs
	}
	if vals := r.URL.Query(); len(vals) > 0 {
		q, mq = map[string]string{}, map[string][]string{}
		for k, vs := range vals {
			q[k], mq[k] = vs[0], vs
		}
	}
	return hs, mhs, q, mq
}

// authorize runs the authorizer on the upgrade request r and
// answers requestContext.authorizer of the connection's events, or the
// status of a refused handshake: 401 for an authorizer that fails with
// "Unauthorized", 403 for a Deny, 500 for any other failure (API Gateway's).
func (b *Bridge) authorize(r *http.Request) (map[string]any, int) {
	hs, mhs, q, mq := handshake(r)
	arn := "arn:aws:execute-api:local:000000000000:local/local/$connect"
	res, err := b.Authorize(r.Context(), events.APIGatewayCustomAuthorizerRequestTypeRequest{
		Type: "REQUEST", MethodArn: arn, Headers: hs, MultiValueHeaders: mhs,
		QueryStringParameters: q, MultiValueQueryStringParameters: mq,
		RequestContext: events.APIGatewayCustomAuthorizerRequestTypeRequestContext{
			APIID: "local", Stage: "local", RequestID: connID(), ResourcePath: "$connect",
		},
	})
	switch {
	case err != nil && err.Error() == "Unauthorized":
		return nil, http.StatusUnauthorized
	case err != nil:
		return nil, http.StatusInternalServerError
	}
	allowed := false
	for _, st := range res.PolicyDocument.Statement {
		if st.Effect == "Deny" {
			return nil, http.StatusForbidden
		}
		allowed = allowed || st.Effect == "Allow"
	}
	if !allowed {
		return nil, http.StatusForbidden
	}
	ctx := map[string]any{"principalId": res.PrincipalID}
	for k, v := range res.Context {
		ctx[k] = v
	}
	return ctx, 0
}

func (b *Bridge) event(r *http.Request, id, route, kind, body string, auth map[string]any) events.APIGatewayWebsocketProxyRequest {
	ev := events.APIGatewayWebsocketProxyRequest{
		Body: body,
		RequestContext: events.APIGatewayWebsocketProxyRequestContext{
			RouteKey: route, EventType: kind, ConnectionID: id, RequestID: connID(),
			Stage: "local", APIID: "local", DomainName: r.Host, RequestTimeEpoch: time.Now().UnixMilli(),
			Authorizer: auth,
		},
	}
	if route == "$connect" {
		ev.Headers, ev.MultiValueHeaders, ev.QueryStringParameters, ev.MultiValueQueryStringParameters = handshake(r)
	}
	return ev
}

func (b *Bridge) accept(w http.ResponseWriter, r *http.Request) {
	id := connID()
	auth, status := b.authorize(r)
	if status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		msg := map[int]string{http.StatusUnauthorized: "Unauthorized", http.StatusForbidden: "Forbidden"}[status]
		if msg == "" {
			msg = "Internal server error"
		}
		body, _ := json.Marshal(map[string]string{"message": msg})
		_, _ = w.Write(body)
		return
	}
	res, err := b.Handle(r.Context(), b.event(r, id, "$connect", "CONNECT", "", auth))
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
		_, _ = b.Handle(context.Background(), b.event(r, id, "$disconnect", "DISCONNECT", "", auth))
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
		res, err := b.Handle(ctx, b.event(r, id, "$default", "MESSAGE", string(data), auth))
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
