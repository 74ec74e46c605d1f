package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi"
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi/types"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
)

// Frame types of the wire (docs/decisions.md#channel-messages).
const (
	TypeCommand   = "command"
	TypeDecision  = "elevation.decision"
	TypeAck       = "ack"
	TypeHeartbeat = "heartbeat"
	TypePing      = "ping"
	TypePong      = "pong"
	TypeError     = "error"
)

// CommandFrame carries one queued command (the object a heartbeat answer
// carries) with its id.
type CommandFrame struct {
	Type      string         `json:"type"`
	ID        string         `json:"id"`
	Command   device.Command `json:"command"`
	ExpiresAt *string        `json:"expiresAt"`
}

// NewCommandFrame is the frame of cmd.
func NewCommandFrame(cmd device.Command) CommandFrame {
	f := CommandFrame{Type: TypeCommand, ID: cmd.ID, Command: cmd}
	if cmd.ExpiresAt != "" {
		f.ExpiresAt = aws.String(cmd.ExpiresAt)
	}
	return f
}

// DecisionFrame tells the agent a human's (or the expiry's) decision on one
// of its elevation requests.
type DecisionFrame struct {
	Type      string  `json:"type"`
	RequestID string  `json:"requestId"`
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expiresAt,omitempty"`
}

// ErrorFrame answers a frame the server cannot take; the connection stays open.
type ErrorFrame struct {
	Type  string `json:"type"`
	Code  string `json:"code"`
	Error string `json:"error"`
}

// Poster is the part of the Management API the channel uses
// (*apigatewaymanagementapi.Client).
type Poster interface {
	PostToConnection(ctx context.Context, in *apigatewaymanagementapi.PostToConnectionInput, opts ...func(*apigatewaymanagementapi.Options)) (*apigatewaymanagementapi.PostToConnectionOutput, error)
	DeleteConnection(ctx context.Context, in *apigatewaymanagementapi.DeleteConnectionInput, opts ...func(*apigatewaymanagementapi.Options)) (*apigatewaymanagementapi.DeleteConnectionOutput, error)
}

// NewPoster is the Management API client for endpoint (CHANNEL_ENDPOINT),
// with cfg's credentials, retries and timeouts; nil when endpoint is empty.
func NewPoster(cfg aws.Config, endpoint string) Poster {
	if endpoint == "" {
		return nil
	}
	return apigatewaymanagementapi.NewFromConfig(cfg, func(o *apigatewaymanagementapi.Options) {
		o.BaseEndpoint = aws.String(endpoint)
	})
}

// pushTimeout bounds one push: the request that pushes answers its caller
// whatever the Management API does, and the command waits for a re-send.
const pushTimeout = 2 * time.Second

// Pusher posts frames to devices' live connections. A nil Pusher (no
// channel configured) pushes nothing. Pushes are best effort: their
// failures are logged, never answered; what they carry is re-sent.
type Pusher struct {
	Rows Rows
	API  Poster
	Log  *slog.Logger
}

// NewPusher is the pusher of st through api; nil when api is nil.
func NewPusher(st *store.Store, api Poster, log *slog.Logger) *Pusher {
	if api == nil {
		return nil
	}
	if log == nil {
		log = slog.Default()
	}
	return &Pusher{Rows: device.Store{St: st}, API: api, Log: log}
}

// Command pushes cmd to device deviceID (shared/pam's Channel).
func (p *Pusher) Command(ctx context.Context, deviceID string, cmd device.Command) {
	p.Send(ctx, deviceID, NewCommandFrame(cmd))
}

// Decision pushes the decision on elevation request requestID of device
// deviceID, then cmds (shared/pam's Channel).
func (p *Pusher) Decision(ctx context.Context, deviceID, requestID, status string, expiresAt *string, cmds ...device.Command) {
	frames := []any{DecisionFrame{Type: TypeDecision, RequestID: requestID, Status: status, ExpiresAt: expiresAt}}
	for _, c := range cmds {
		frames = append(frames, NewCommandFrame(c))
	}
	p.Send(ctx, deviceID, frames...)
}

// Send posts frames to device deviceID's live connection, if it has one.
func (p *Pusher) Send(ctx context.Context, deviceID string, frames ...any) {
	p.withLive(ctx, deviceID, func(ctx context.Context, marker string) {
		if err := p.Post(ctx, deviceID, marker, frames...); err != nil {
			p.Log.WarnContext(ctx, "channel push", "deviceId", deviceID, "connId", device.MarkerConn(marker), "err", err)
		}
	})
}

// withLive runs do with device deviceID's channel marker (the agent row's,
// naming its live connection), within the push timeout; without a
// connection (the agent polls) it does nothing.
func (p *Pusher) withLive(ctx context.Context, deviceID string, do func(ctx context.Context, marker string)) {
	if p == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, pushTimeout)
	defer cancel()
	a, err := p.Rows.Agent(ctx, deviceID)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		p.Log.WarnContext(ctx, "channel: read connection", "deviceId", deviceID, "err", err)
		return
	}
	if a.ChannelConn() == "" {
		return
	}
	do(ctx, a.ChannelUntil)
}

// Post posts frames to the connection that channel marker marker of device
// deviceID names, in order. A connection API Gateway no longer knows
// (GoneException) is forgotten: the marker goes while it is still this one
// (device.ForgetChannelWrite), so pushes stop and HTTP heartbeats keep the
// device's presence again.
func (p *Pusher) Post(ctx context.Context, deviceID, marker string, frames ...any) error {
	if p == nil {
		return nil
	}
	connID := device.MarkerConn(marker)
	for _, f := range frames {
		data, err := json.Marshal(f)
		if err != nil {
			return err
		}
		_, err = p.API.PostToConnection(ctx, &apigatewaymanagementapi.PostToConnectionInput{ConnectionId: aws.String(connID), Data: data})
		var gone *types.GoneException
		if errors.As(err, &gone) {
			err := p.Rows.Do(ctx, device.ForgetChannelWrite(deviceID, marker))
			if err != nil && !errors.Is(err, store.ErrConditionFailed) {
				return fmt.Errorf("forget connection %s: %w", connID, err)
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// Disconnect closes device deviceID's live connection, if it has one (the
// device was decommissioned: device.Service's Channel).
func (p *Pusher) Disconnect(ctx context.Context, deviceID string) {
	p.withLive(ctx, deviceID, func(ctx context.Context, marker string) { p.Close(ctx, device.MarkerConn(marker)) })
}

// Close closes connection connID (the one a newer connection replaced, or a
// decommissioned device's).
func (p *Pusher) Close(ctx context.Context, connID string) {
	if p == nil {
		return
	}
	_, err := p.API.DeleteConnection(ctx, &apigatewaymanagementapi.DeleteConnectionInput{ConnectionId: aws.String(connID)})
	var gone *types.GoneException
	if err != nil && !errors.As(err, &gone) {
		p.Log.WarnContext(ctx, "channel close", "connId", connID, "err", err)
	}
}
