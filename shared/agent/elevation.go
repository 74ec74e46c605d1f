package agent

import (
	"context"
	"net/http"
	"time"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/pam"
)

// Elevations records and decides the elevation prompts agents report;
// pam.Service satisfies it. Ingest counts the request with m in its
// transaction (pam.Meter) and returns the work to run after the answer (the
// event's send, the mobile approval fan-out), or nil.
type Elevations interface {
	Ingest(ctx context.Context, a *device.Agent, in pam.IngestInput, m pam.Meter) (*pam.Ingested, func(context.Context), error)
	// ForAgent reads one of device deviceID's requests (another device's is
	// not found).
	ForAgent(ctx context.Context, orgID, deviceID, id string) (*pam.AgentView, error)
}

// ElevationHandler serves POST /agents/:id/elevation-requests (agent token
// of that device only; body at most 32 KB; 600 a minute per device: a full
// window is refused before the body is read, see meter.go).
//
// DynamoDB calls on the request path: 3 (BatchGetItem of the agent row and
// the device's ingest window; Query of the organization's PAM# rows; one
// transaction: request, audit, outbox and the window's count, see meter.go).
// A prompt that loses a race on its device's window makes 2 more (its own
// count, the transaction again). After the answer, not awaited: the event's send and outbox
// clear (1), and for a pending request the mobile approval fan-out (1 per
// batch of approvers).
type ElevationHandler struct {
	Svc *Service
	PAM Elevations
	// After runs the post-answer work; nil runs it on its own goroutine
	// with a 10-second budget.
	After func(func(context.Context))
}

// Routes registers the route.
func (h *ElevationHandler) Routes(rt *httpapi.Router) {
	rt.Add(httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/elevation-requests", Access: httpapi.Agent, Handle: h.ingest},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/agents/{id}/elevation-requests/{requestId}", Access: httpapi.Agent, Handle: httpapi.Call(http.StatusOK, h.get)})
}

// get answers the status of one of the device's own requests: how an agent
// without a live channel learns a human's decision. 3 DynamoDB calls: agent
// row, the ingest limit (600 a minute per device), the request.
func (h *ElevationHandler) get(r *http.Request) (*pam.AgentView, error) {
	a, err := h.Svc.ingest(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return h.PAM.ForAgent(r.Context(), a.OrgID, a.DeviceID, r.PathValue("requestId"))
}

func (h *ElevationHandler) ingest(w http.ResponseWriter, r *http.Request) error {
	a, m, err := h.Svc.elevationCaller(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var in pam.IngestInput
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return m.uncounted(r.Context(), err)
	}
	out, after, err := h.PAM.Ingest(r.Context(), a, in, m)
	if err != nil {
		return m.uncounted(r.Context(), err)
	}
	status := http.StatusCreated
	if out.ID == nil {
		status = http.StatusOK
	}
	httpapi.WriteJSON(w, status, out)
	if after != nil {
		if h.After != nil {
			h.After(after)
		} else {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				after(ctx)
			}()
		}
	}
	return nil
}
