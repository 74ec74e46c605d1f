package channel

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// Agents is what the channel needs of the agent rules; agent.Service
// satisfies it.
type Agents interface {
	// Authenticate is the HTTP agent routes' token check.
	Authenticate(ctx context.Context, deviceID, token string) (*device.Agent, error)
	// ChannelHeartbeat is the HTTP heartbeat for a heartbeat frame (its
	// JSON); it answers the commands to re-send.
	ChannelHeartbeat(ctx context.Context, a *device.Agent, frame []byte) ([]device.Command, error)
	// Connect records the device's new connection ($connect) and answers
	// the one it replaced; Disconnect ($disconnect) makes the device offline
	// while its marker names the connection.
	Connect(ctx context.Context, deviceID, connID string) (string, error)
	Disconnect(ctx context.Context, deviceID, connID string) (bool, error)
}

// Handler serves the WebSocket API's authorizer and routes ($connect,
// $disconnect, $default) as one Lambda function (functions/agent-channel).
type Handler struct {
	Agents Agents
	Rows   Rows
	Push   *Pusher
	Clock  clock.Clock
	Log    *slog.Logger
}

// Errors of the channel's frames (codes of the error frame).
var (
	ErrFrame       = fault.BadRequest("Invalid frame").WithCode("invalid_frame")
	ErrUnknownType = fault.BadRequest("Unknown frame type").WithCode("unknown_type")
	ErrNoConn      = fault.Unauthorized("Connection not found")
	// ErrToken is the answer of a $connect whose device was blocked after
	// the authorizer allowed it (401: docs/decisions.md#connecting-to-the-channel).
	ErrToken = fault.Unauthorized("Invalid agent token")
)

// ErrUnauthorized is the authorizer's refusal: API Gateway answers the
// handshake 401 when a Lambda authorizer fails with exactly this message.
var ErrUnauthorized = errors.New("Unauthorized")

// Authorizer context keys (requestContext.authorizer of every event).
const (
	CtxDevice = "deviceId"
	CtxOrg    = "orgId"
)

// Invoke is the function's entry point: the authorizer's event (a REQUEST
// authorizer's, with its methodArn) goes to Authorize, the routes' to Handle.
func (h *Handler) Invoke(ctx context.Context, raw json.RawMessage) (any, error) {
	var probe struct {
		Type      string `json:"type"`
		MethodArn string `json:"methodArn"`
	}
	if err := json.Unmarshal(raw, &probe); err != nil {
		return nil, err
	}
	if probe.Type == "REQUEST" && probe.MethodArn != "" {
		var ev events.APIGatewayCustomAuthorizerRequestTypeRequest
		if err := json.Unmarshal(raw, &ev); err != nil {
			return nil, err
		}
		return h.Authorize(ctx, ev)
	}
	var ev events.APIGatewayWebsocketProxyRequest
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, err
	}
	return h.Handle(ctx, ev)
}

// Authorize is $connect's authorizer: the bearer token of the device named
// by the channel URL's deviceId. A refused one is ErrUnauthorized (401 in
// the handshake), whatever the reason (wrong, revoked, decommissioned,
// quarantined: docs/decisions.md#connecting-to-the-channel); an allowed one carries the device and its
// organization to every event of the connection.
func (h *Handler) Authorize(ctx context.Context, ev events.APIGatewayCustomAuthorizerRequestTypeRequest) (events.APIGatewayCustomAuthorizerResponse, error) {
	deviceID := ev.QueryStringParameters["deviceId"]
	token, ok := strings.CutPrefix(header(ev.Headers, "Authorization"), "Bearer ")
	if !ok || deviceID == "" {
		return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
	}
	a, err := h.Agents.Authenticate(ctx, deviceID, token)
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Kind != fault.KindInternal {
			return events.APIGatewayCustomAuthorizerResponse{}, ErrUnauthorized
		}
		return events.APIGatewayCustomAuthorizerResponse{}, err
	}
	return events.APIGatewayCustomAuthorizerResponse{
		PrincipalID: a.DeviceID,
		PolicyDocument: events.APIGatewayCustomAuthorizerPolicy{Version: "2012-10-17", Statement: []events.IAMPolicyStatement{
			{Action: []string{"execute-api:Invoke"}, Effect: "Allow", Resource: []string{ev.MethodArn}}}},
		Context: map[string]any{CtxDevice: a.DeviceID, CtxOrg: a.OrgID},
	}, nil
}

// Handle serves one route's event.
func (h *Handler) Handle(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	switch ev.RequestContext.RouteKey {
	case "$connect":
		return h.connect(ctx, ev)
	case "$disconnect":
		return h.disconnect(ctx, ev)
	}
	return h.frame(ctx, ev)
}

// deviceOf is the device the authorizer allowed the connection of ev for
// ("" without an authorizer's context: never in API Gateway, whose $connect
// route requires it).
func deviceOf(ev events.APIGatewayWebsocketProxyRequest) string {
	m, _ := ev.RequestContext.Authorizer.(map[string]any)
	id, _ := m[CtxDevice].(string)
	return id
}

// connect records the authorized connection as its device's live one and
// closes the one it replaced.
func (h *Handler) connect(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	deviceID := deviceOf(ev)
	if deviceID == "" {
		return refused(ErrToken), nil
	}
	prev, err := h.Agents.Connect(ctx, deviceID, ev.RequestContext.ConnectionID)
	if prev != "" {
		// One live connection per device; the replaced one's $disconnect
		// finds the marker moved on and changes nothing. Closed even when
		// this connect fails after taking the marker: nothing else would.
		h.Push.Close(ctx, prev)
	}
	if err != nil {
		fe, ok := fault.As(err)
		switch {
		case ok && fe.Kind == fault.KindConflict:
			return answer(http.StatusConflict, fe), nil // a newer connection of the device is live
		case ok && fe.Kind != fault.KindInternal:
			return refused(ErrToken), nil // decommissioned or quarantined since the token check
		}
		return events.APIGatewayProxyResponse{}, err
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
}

func refused(err *fault.Error) events.APIGatewayProxyResponse {
	return answer(http.StatusUnauthorized, err)
}

// answer is a refused handshake's response: status and the error envelope.
func answer(status int, err *fault.Error) events.APIGatewayProxyResponse {
	body, _ := json.Marshal(map[string]string{"error": err.Message, "code": err.Code})
	return events.APIGatewayProxyResponse{StatusCode: status, Body: string(body),
		Headers: map[string]string{"Content-Type": "application/json"}}
}

func (h *Handler) disconnect(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	deviceID := deviceOf(ev)
	if deviceID == "" {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
	}
	if _, err := h.Agents.Disconnect(ctx, deviceID, ev.RequestContext.ConnectionID); err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
}

// inFrame is any agent frame's type and an ack's id.
type inFrame struct {
	Type string `json:"type"`
	ID   string `json:"id"`
}

// frame serves one agent frame; the answer's body (a pong or an error
// frame) goes back on the connection (the route's response).
func (h *Handler) frame(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	var in inFrame
	if err := json.Unmarshal([]byte(ev.Body), &in); err != nil || in.Type == "" {
		return reply(errorFrame(ErrFrame)), nil
	}
	switch in.Type {
	case TypePing, TypeAck, TypeHeartbeat:
	default:
		return reply(errorFrame(ErrUnknownType)), nil
	}
	if in.Type == TypeAck {
		if err := valid.PathID("id", in.ID); err != nil {
			return reply(errorFrame(ErrFrame)), nil
		}
	}
	deviceID, connID := deviceOf(ev), ev.RequestContext.ConnectionID
	if deviceID == "" {
		return reply(errorFrame(ErrNoConn)), nil
	}
	a, err := h.Rows.Agent(ctx, deviceID)
	if device.IsNotFound(err) {
		return h.drop(ctx, connID), nil
	}
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	if a.ChannelConn() != connID {
		return h.drop(ctx, connID), nil // replaced, or forgotten
	}
	now := h.Clock.Now()
	switch in.Type {
	case TypeAck:
		if err := ack(ctx, h.Rows, deviceID, in.ID, now); err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		return reply(nil), nil
	case TypeHeartbeat:
		cmds, err := h.Agents.ChannelHeartbeat(ctx, a, []byte(ev.Body))
		if fe, ok := fault.As(err); ok && fe.Kind != fault.KindInternal {
			return reply(errorFrame(fe)), nil
		}
		if err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		// A heartbeat is a poll: every pending command again, same ids.
		h.resend(ctx, a, cmds)
		return reply(nil), nil
	}
	// A ping re-sends what is pending (after a connect, the re-send on
	// reconnect: nothing can be posted while $connect runs), then pongs.
	h.resend(ctx, a, a.Pending(now))
	return reply(map[string]string{"type": TypePong}), nil
}

// resend posts cmds on a's live connection, best effort: what does not
// arrive is sent again on the next ping, heartbeat or connection.
func (h *Handler) resend(ctx context.Context, a *device.Agent, cmds []device.Command) {
	if len(cmds) == 0 {
		return
	}
	frames := make([]any, 0, len(cmds))
	for _, cmd := range cmds {
		frames = append(frames, NewCommandFrame(cmd))
	}
	if err := h.Push.Post(ctx, a.DeviceID, a.ChannelUntil, frames...); err != nil {
		h.Log.WarnContext(ctx, "channel: re-send", "deviceId", a.DeviceID, "connId", a.ChannelConn(), "err", err)
	}
}

// drop closes connection connID, which is not its device's live one, and
// answers the unauthorized error frame (delivered only if the close is
// slower). The connect that replaced a connection closes it, but it cannot
// always tell which one it replaced: when its marker write applied, its
// answer was lost, and a newer connect overtook it before the retry, the
// write's answer (the replaced marker) is gone and the connect is refused as
// replaced (agent.Service.Connect). The connection it replaced stays open
// until it speaks: here, at its first frame (agents ping), or at API
// Gateway's idle timeout if it never does.
func (h *Handler) drop(ctx context.Context, connID string) events.APIGatewayProxyResponse {
	h.Push.Close(ctx, connID)
	return reply(errorFrame(ErrNoConn))
}

func errorFrame(e *fault.Error) ErrorFrame {
	return ErrorFrame{Type: TypeError, Code: e.Code, Error: e.Message}
}

func reply(frame any) events.APIGatewayProxyResponse {
	if frame == nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}
	}
	body, _ := json.Marshal(frame)
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK, Body: string(body)}
}

// header reads header name of an event case-insensitively (API Gateway keeps
// the client's spelling).
func header(hs map[string]string, name string) string {
	for k, v := range hs {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}
