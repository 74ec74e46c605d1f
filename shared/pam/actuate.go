package pam

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Actuation limits (docs/decisions.md#expiry-and-actuation).
const (
	CommandActuate   = "actuate_elevation"
	DefaultTimeoutMs = 8000
	MinTimeoutMs     = 1000
	MaxTimeoutMs     = 60000
)

// Errors of actuation.
var (
	ErrActuatorDisabled = fault.Forbidden("PAM actuator disabled")
	ErrDeviceNotFound   = fault.NotFound("Device not found")
	ErrDecommissioned   = fault.BadRequest("Device is decommissioned")
	ErrNotApproved      = fault.Conflict("Elevation request is not approved").WithCode(fault.CodeWrongStatus)
	ErrRaceLost         = fault.Conflict("Elevation request is already being actuated").WithCode(fault.CodeRaceLost)
)

// ActuateInput is the POST /devices/:id/actuate-elevation body.
type ActuateInput struct {
	ElevationRequestID *string `json:"elevationRequestId"`
	TimeoutMs          *int    `json:"timeoutMs"`
}

// Actuated is the actuation answer.
type Actuated struct {
	CommandID          string `json:"commandId"`
	ElevationRequestID string `json:"elevationRequestId"`
}

// Actuate queues an actuate_elevation command (the request id and the
// timeout, nothing else) for an approved request of device deviceID and
// moves the request to actuating, in one transaction: of concurrent
// actuations exactly one wins.
func (s *Service) Actuate(ctx context.Context, deviceID string, in ActuateInput) (*Actuated, error) {
	p, err := actor(ctx, authz.DevicesExecute)
	if err != nil {
		return nil, err
	}
	if !s.ActuatorEnabled {
		return nil, ErrActuatorDisabled
	}
	if err := valid.PathID("id", deviceID); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	rid := valid.Required(f, "elevationRequestId", in.ElevationRequestID)
	if in.ElevationRequestID != nil {
		valid.UUID(f, "elevationRequestId", rid)
	}
	timeout := DefaultTimeoutMs
	if in.TimeoutMs != nil {
		timeout = *in.TimeoutMs
		valid.Range(f, "timeoutMs", timeout, MinTimeoutMs, MaxTimeoutMs)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	a, err := s.deviceFor(ctx, p, deviceID, true)
	if err != nil {
		return nil, err
	}
	if a.Status == device.StatusDecommissioned {
		return nil, ErrDecommissioned
	}
	r, err := s.St.Request(ctx, a.OrgID, rid)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, ErrRequestNotFound
	case err != nil:
		return nil, err
	case r.DeviceID != deviceID:
		return nil, ErrRequestNotFound
	}
	now := s.Clock.Now()
	if err := actuatable(r, clock.Format(now)); err != nil {
		return nil, err
	}
	cmd := device.Command{ID: uuid.NewString(), Type: CommandActuate, CreatedAt: clock.Format(now), ExpiresAt: commandExpiry(r, now),
		Payload: map[string]any{"elevationRequestId": r.ID, "timeoutMs": timeout}}
	ev, err := event.New(s.Clock, eventtype.ElevationActuating, r.OrgID, EventData(r, StatusActuating, map[string]any{"commandId": cmd.ID, "actuatedBy": p.UserID}))
	if err != nil {
		return nil, err
	}
	tx := &store.Tx{}
	claim := tx.Include(ActuateWrite(r, cmd.ID, now))
	queue := tx.Include(device.EnqueueCommand(deviceID, cmd))
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "pam.elevation_request.actuate",
		ResourceType: "elevation_request", ResourceID: r.ID, ResourceName: r.TargetExecutablePath,
		Details: map[string]any{"deviceId": deviceID, "commandId": cmd.ID, "timeoutMs": timeout}}))
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		var te *store.TxError
		if errors.As(err, &te) && te.FailedOn(claim) && !te.FailedOn(queue) {
			now, rerr := s.St.Request(ctx, r.OrgID, r.ID)
			if rerr != nil {
				return nil, rerr
			}
			if aerr := actuatable(now, clock.Format(s.Clock.Now())); aerr != nil {
				return nil, aerr
			}
			return nil, ErrRaceLost
		}
		if errors.As(err, &te) && te.FailedOn(queue) && !te.FailedOn(claim) {
			return nil, ErrDecommissioned
		}
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, ErrRaceLost
		}
		return nil, fmt.Errorf("actuate elevation request %s: %w", r.ID, err)
	}
	// Delivered within a second on a live channel; else on the next poll.
	s.push(ctx, deviceID, cmd)
	return &Actuated{CommandID: cmd.ID, ElevationRequestID: r.ID}, nil
}

// actuatable is nil when r may be actuated at now: approved, not claimed,
// its window open.
func actuatable(r *Request, now string) error {
	switch {
	case r.Status == StatusActuating || (r.Status == StatusApproved && r.CommandID != nil):
		return ErrRaceLost
	case r.Status != StatusApproved:
		return ErrNotApproved
	case r.ExpiresAt != nil && *r.ExpiresAt <= now:
		return ErrNotApproved
	}
	return nil
}

// ActuationHandler serves POST /devices/:id/actuate-elevation for the
// devices group (user session, devices:execute, MFA). It reads the agent row
// (organization, site, status) and the request, writes one transaction (CAS
// approved -> actuating, command queued on the agent row, audit, outbox),
// clears the outbox row, and the push reads the device's agent row for its
// channel marker (shared/channel). Budgets: docs/budgets.md, from tests/fixture/budgets.go.
type ActuationHandler struct{ Svc *Service }

// Routes registers the route.
func (h *ActuationHandler) Routes(rt *httpapi.Router) {
	rt.Add(httpapi.Route{Method: http.MethodPost, Path: "/api/v1/devices/{id}/actuate-elevation", Access: httpapi.User, MFA: true, Handle: h.actuate})
}

func (h *ActuationHandler) actuate(w http.ResponseWriter, r *http.Request) error {
	var in ActuateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	out, err := h.Svc.Actuate(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
	return nil
}
