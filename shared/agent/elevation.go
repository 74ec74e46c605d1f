package agent

import (
	"context"
	"net/http"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/ratelimit"
)

// Elevations records and decides the elevation prompts agents report;
// pam.Service satisfies it. Ingest settles the prompt's count c (counted on
// its own when the body or the ingest is refused, else in the ingest's
// transaction) and returns the event's send, or nil.
type Elevations interface {
	Ingest(ctx context.Context, a *device.Agent, in pam.IngestInput, body error, c *ratelimit.Pending) (*pam.Ingested, func(context.Context), error)
	// ForAgent reads one of device deviceID's requests (another device's is
	// not found).
	ForAgent(ctx context.Context, orgID, deviceID, id string) (*pam.AgentView, error)
}

// ElevationHandler serves POST /agents/:id/elevation-requests (agent token
// of that device only; body at most 32 KB; 600 a minute per device: a full
// window is refused before the body is read, see meter.go).
//
// The prompt reads the agent row and the device's ingest window together
// (the token check), then the organization's PAM# rows, and writes one
// transaction: the request, its audit record, its outbox row and the
// window's count; the outbox row is cleared after the event's SQS send. A
// prompt that loses a race on its device's window counts on its own and
// writes the transaction again (ratelimit.Pending.Settle).
//
// The event is sent before the answer, like every route's: Lambda freezes the
// process after a response, so nothing runs after it. The mobile approval
// fan-out of a pending request is not done here: the elevation.requested
// event, written in the request's transaction, queues it, and the
// webhook-worker runs it with the queue's retries (shared/push OnEvent).
type ElevationHandler struct {
	Svc *Service
	PAM Elevations
}

// Routes registers the route.
func (h *ElevationHandler) Routes(rt *httpapi.Router) {
	rt.Add(httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/elevation-requests", Access: httpapi.Agent, Handle: h.ingest},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/agents/{id}/elevation-requests/{requestId}", Access: httpapi.Agent, Handle: httpapi.Call(http.StatusOK, h.get)})
}

// get answers the status of one of the device's own requests: how an agent
// without a live channel learns a human's decision. It reads the agent row
// (with the window), counts against the ingest limit (600 a minute per
// device) and reads the request.
func (h *ElevationHandler) get(r *http.Request) (*pam.AgentView, error) {
	a, err := h.Svc.ingest(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return h.PAM.ForAgent(r.Context(), a.OrgID, a.DeviceID, r.PathValue("requestId"))
}

func (h *ElevationHandler) ingest(w http.ResponseWriter, r *http.Request) error {
	a, count, err := h.Svc.elevationCaller(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var in pam.IngestInput
	body := httpapi.DecodeLimit(r, &in, MaxBody) // a refused body is still counted, by Ingest
	out, send, err := h.PAM.Ingest(r.Context(), a, in, body, count)
	if err != nil {
		return err
	}
	if send != nil {
		send(r.Context()) // best effort: an unsent event stays in the outbox for the drain
	}
	status := http.StatusCreated
	if out.ID == nil {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, out)
	return nil
}
