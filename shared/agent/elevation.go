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
// pam.Service satisfies it. Ingest returns the work to run after the answer
// (the event's send, the mobile approval fan-out), or nil.
type Elevations interface {
	Ingest(ctx context.Context, a *device.Agent, in pam.IngestInput) (*pam.Ingested, func(context.Context), error)
}

// ElevationHandler serves POST /agents/:id/elevation-requests (agent token
// of that device only; body at most 32 KB; 600 a minute per device, counted
// before the body is read by the limiter's one atomic write).
//
// DynamoDB calls on the request path: 4 (agent row GetItem; the device's
// ingest window UpdateItem; Query of the organization's PAM# rows; one
// transaction: request, audit, outbox). After the answer, not awaited: the event's send and outbox
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
	rt.Add(httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/elevation-requests", Access: httpapi.Agent, Handle: h.ingest})
}

func (h *ElevationHandler) ingest(w http.ResponseWriter, r *http.Request) error {
	a, err := h.Svc.ingest(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	var in pam.IngestInput
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	out, after, err := h.PAM.Ingest(r.Context(), a, in)
	if err != nil {
		return err
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
