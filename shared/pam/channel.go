package pam

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// CommandEnd is the command that ends an elevation already running on the
// device (queued and pushed when a human revokes it).
const CommandEnd = "end_elevation"

// Channel pushes to a device's live agent connection (shared/channel's
// Pusher), best effort: what is not delivered is re-sent on the agent's next
// connection or poll. Service.Channel nil pushes nothing.
type Channel interface {
	Command(ctx context.Context, deviceID string, cmd device.Command)
	// Decision pushes the decision on a request, then cmds (one read of
	// the device's connection for all).
	Decision(ctx context.Context, deviceID, requestID, status string, expiresAt *string, cmds ...device.Command)
}

// tell pushes the decision on r (now in r.Status) to its device, and cmds.
func (s *Service) tell(ctx context.Context, r *Request, cmds ...device.Command) {
	if s.Channel != nil {
		s.Channel.Decision(ctx, r.DeviceID, r.ID, r.Status, r.ExpiresAt, cmds...)
	}
}

// push pushes cmd to device deviceID.
func (s *Service) push(ctx context.Context, deviceID string, cmd device.Command) {
	if s.Channel != nil {
		s.Channel.Command(ctx, deviceID, cmd)
	}
}

// commandExpiry is when a command about r stops being delivered: the end of
// its approval window, or device.CommandTTL after now when it has none.
func commandExpiry(r *Request, now time.Time) string {
	if r.ExpiresAt != nil && *r.ExpiresAt > clock.Format(now) {
		return *r.ExpiresAt
	}
	return clock.Format(now.Add(device.CommandTTL))
}

// endCommand is the end_elevation command for revoked request r.
func endCommand(r *Request, now time.Time) device.Command {
	return device.Command{ID: uuid.NewString(), Type: CommandEnd, CreatedAt: clock.Format(now), ExpiresAt: commandExpiry(r, now),
		Payload: map[string]any{"elevationRequestId": r.ID}}
}

// revokeQueueWrite queues end on r's device and takes r's actuation command
// (if any) off the queue, in one write (a transaction touches an item once).
func revokeQueueWrite(r *Request, end device.Command) *store.Write {
	k := device.AgentKey(r.DeviceID)
	upd := expression.Set(expression.Name("commands."+end.ID), expression.Value(end))
	if r.CommandID != nil {
		upd = upd.Remove(expression.Name("commands." + *r.CommandID))
	}
	return store.Change(k.PK, k.SK, upd).When(expression.Name("commands").AttributeExists()).Exists()
}

// AgentView is what an agent learns of one of its elevation requests
// (GET /agents/:id/elevation-requests/:requestId).
type AgentView struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	ExpiresAt *string `json:"expiresAt"`
}

// ForAgent reads request id for the agent of device deviceID (organization
// orgID, from its agent row): another device's request is not found. The
// caller (shared/agent) has checked the agent's token.
func (s *Service) ForAgent(ctx context.Context, orgID, deviceID, id string) (*AgentView, error) {
	if err := valid.PathID("requestId", id); err != nil {
		return nil, err
	}
	r, err := s.St.Request(ctx, orgID, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrRequestNotFound
	case err != nil:
		return nil, err
	case r.DeviceID != deviceID:
		return nil, ErrRequestNotFound
	}
	out := &AgentView{ID: r.ID, Status: r.Status}
	switch r.Status {
	case StatusApproved, StatusAutoApproved, StatusActuating:
		out.ExpiresAt = r.ExpiresAt // when the granted elevation ends; null otherwise
	}
	return out, nil
}
