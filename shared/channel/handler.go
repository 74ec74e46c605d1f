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
	"github.com/gale-rmm/gale/shared/store"
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
	// MarkOnline makes the device online for its channel ($connect) and
	// answers the channel's marker; MarkOffline ($disconnect) takes it, so
	// the disconnect of a replaced connection changes nothing.
	MarkOnline(ctx context.Context, a *device.Agent, connID string) (string, error)
	MarkOffline(ctx context.Context, a *device.Agent, marker string) (bool, error)
}

// AgentRows reads agent rows; device.Store satisfies it.
type AgentRows interface {
	Agent(ctx context.Context, id string) (*device.Agent, error)
}

// Handler serves the WebSocket API's routes ($connect, $disconnect,
// $default) as one Lambda function (functions/agent-channel).
type Handler struct {
	Agents Agents
	Rows   AgentRows
	St     Store
	Push   *Pusher
	Clock  clock.Clock
	Log    *slog.Logger
}

// Errors of the channel's frames (codes of the error frame).
var (
	ErrFrame       = fault.BadRequest("Invalid frame").WithCode("invalid_frame")
	ErrUnknownType = fault.BadRequest("Unknown frame type").WithCode("unknown_type")
	ErrNoConn      = fault.Unauthorized("Connection not found")
	// ErrToken is every refused handshake's answer (401:
	// docs/decisions.md#connecting-to-the-channel).
	ErrToken = fault.Unauthorized("Invalid agent token")
)

// Handle serves one event.
func (h *Handler) Handle(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	switch ev.RequestContext.RouteKey {
	case "$connect":
		return h.connect(ctx, ev)
	case "$disconnect":
		return h.disconnect(ctx, ev)
	}
	return h.frame(ctx, ev)
}

// connect authenticates the agent (the bearer token of the device named by
// the channel URL's deviceId) and records the connection; a refused one is
// 401 in the handshake, whatever the reason (wrong, revoked, decommissioned,
// quarantined: docs/decisions.md#connecting-to-the-channel).
func (h *Handler) connect(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	deviceID := ev.QueryStringParameters["deviceId"]
	token, ok := strings.CutPrefix(header(ev.Headers, "Authorization"), "Bearer ")
	if !ok || deviceID == "" {
		return refused(ErrToken), nil
	}
	a, err := h.Agents.Authenticate(ctx, deviceID, token)
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Kind != fault.KindInternal {
			return refused(ErrToken), nil
		}
		return events.APIGatewayProxyResponse{}, err
	}
	connID := ev.RequestContext.ConnectionID
	marker, err := h.Agents.MarkOnline(ctx, a, connID)
	if err != nil {
		if fe, ok := fault.As(err); ok && fe.Kind != fault.KindInternal {
			return refused(ErrToken), nil // decommissioned or quarantined since the token check
		}
		return events.APIGatewayProxyResponse{}, err
	}
	prev, err := h.St.Connect(ctx, a.DeviceID, a.OrgID, connID, marker, h.Clock.Now())
	if err != nil {
		// The handshake fails and the agent reconnects or polls; the
		// device must not stay online on a channel that never opened.
		h.undoOnline(context.WithoutCancel(ctx), a.DeviceID, marker)
		return events.APIGatewayProxyResponse{}, err
	}
	if prev != "" {
		// One live connection per device: the replaced one is closed, and
		// its row goes (its own $disconnect finds the device row moved on).
		h.Push.Close(ctx, prev)
		if err := h.St.ForgetConn(ctx, prev); err != nil {
			h.Log.WarnContext(ctx, "channel: forget replaced connection", "connId", prev, "err", err)
		}
	}
	return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil
}

// undoOnline takes back MarkOnline's marker for a connection that failed to
// open, best effort: a device left marked is swept ConnectedFor after.
func (h *Handler) undoOnline(ctx context.Context, deviceID, marker string) {
	a, err := h.Rows.Agent(ctx, deviceID)
	if err == nil {
		_, err = h.Agents.MarkOffline(ctx, a, marker)
	}
	if err != nil {
		h.Log.WarnContext(ctx, "channel: undo online", "deviceId", deviceID, "err", err)
	}
}

func refused(err *fault.Error) events.APIGatewayProxyResponse {
	body, _ := json.Marshal(map[string]string{"error": err.Message, "code": err.Code})
	return events.APIGatewayProxyResponse{StatusCode: http.StatusUnauthorized, Body: string(body),
		Headers: map[string]string{"Content-Type": "application/json"}}
}

func (h *Handler) disconnect(ctx context.Context, ev events.APIGatewayWebsocketProxyRequest) (events.APIGatewayProxyResponse, error) {
	c, err := h.St.Conn(ctx, ev.RequestContext.ConnectionID)
	if errors.Is(err, store.ErrNotFound) {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil // replaced or forgotten already
	}
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	if err := h.St.Forget(ctx, c.DeviceID, c.ConnID); err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	if c.Marker == "" {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil // a row from before presence
	}
	a, err := h.Rows.Agent(ctx, c.DeviceID)
	if errors.Is(err, store.ErrNotFound) {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusOK}, nil // the device is gone
	}
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	if _, err := h.Agents.MarkOffline(ctx, a, c.Marker); err != nil {
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
	c, err := h.St.Conn(ctx, ev.RequestContext.ConnectionID)
	if errors.Is(err, store.ErrNotFound) {
		return reply(errorFrame(ErrNoConn)), nil
	}
	if err != nil {
		return events.APIGatewayProxyResponse{}, err
	}
	now := h.Clock.Now()
	switch in.Type {
	case TypeAck:
		if err := h.St.Ack(ctx, c.DeviceID, in.ID, now); err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		return reply(nil), nil
	case TypeHeartbeat:
		a, err := h.Rows.Agent(ctx, c.DeviceID)
		if err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		cmds, err := h.Agents.ChannelHeartbeat(ctx, a, []byte(ev.Body))
		if fe, ok := fault.As(err); ok && fe.Kind != fault.KindInternal {
			return reply(errorFrame(fe)), nil
		}
		if err != nil {
			return events.APIGatewayProxyResponse{}, err
		}
		// A heartbeat is a poll: every pending command again, same ids (and
		// the first frame's re-send is done by it).
		if c.Fresh {
			if _, err := h.St.Claim(ctx, c); err != nil {
				return events.APIGatewayProxyResponse{}, err
			}
		}
		h.resend(ctx, c, cmds)
	case TypePing:
		if c.Fresh {
			if err := h.first(ctx, c); err != nil {
				return events.APIGatewayProxyResponse{}, err
			}
		}
	}
	if in.Type == TypePing {
		return reply(map[string]string{"type": TypePong}), nil
	}
	return reply(nil), nil
}

// first re-sends the pending commands on a connection's first ping (the
// re-send on reconnect: nothing can be posted while $connect runs).
func (h *Handler) first(ctx context.Context, c *Conn) error {
	ok, err := h.St.Claim(ctx, c)
	if err != nil || !ok {
		return err
	}
	a, err := h.Rows.Agent(ctx, c.DeviceID)
	if err != nil {
		return err
	}
	h.resend(ctx, c, a.Pending(h.Clock.Now()))
	return nil
}

// resend posts cmds on connection c, best effort: what does not arrive is
// sent again on the next heartbeat or connection.
func (h *Handler) resend(ctx context.Context, c *Conn, cmds []device.Command) {
	if len(cmds) == 0 {
		return
	}
	frames := make([]any, 0, len(cmds))
	for _, cmd := range cmds {
		frames = append(frames, NewCommandFrame(cmd))
	}
	if err := h.Push.Post(ctx, c.DeviceID, c.ConnID, frames...); err != nil {
		h.Log.WarnContext(ctx, "channel: re-send", "deviceId", c.DeviceID, "connId", c.ConnID, "err", err)
	}
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
