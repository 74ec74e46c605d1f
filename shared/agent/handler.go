package agent

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/agents.
//
// DynamoDB calls per request:
//
//	route                                          calls   what
//	POST /agents/enroll                            4       rate-limit UpdateItem, guard GetItem, transaction (key consume, device, agent row, counts, audit, outbox), outbox clear
//	POST /agents/:id/heartbeat                     3       agent row GetItem (token, status, commands), PAM settings BatchGetItem, device UpdateItem; see the package doc for the rare fourth
//	PUT  /agents/:id/hardware | network            3-4     agent row, rate-limit UpdateItem, device update only when the facts changed (with device.updated in its transaction), outbox clear when it did
//	PUT  /agents/:id/software                      4       agent row, rate limit, device GetItem (hash), transaction (chunks, device) unless unchanged
//	POST /agents/:id/commands/:commandId/result    3       agent row, rate limit, transaction (queue entry, result)
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		// The enrollment key in the body is the credential; no principal exists yet.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/enroll", Access: httpapi.Public, NoAuthz: true, MaxBody: MaxBody, Handle: h.enroll},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/heartbeat", Access: httpapi.Agent, MaxBody: MaxBody, Handle: h.heartbeat},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/hardware", Access: httpapi.Agent, MaxBody: MaxBody, Handle: h.hardware},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/software", Access: httpapi.Agent, MaxBody: MaxSoftwareBody, Handle: h.software},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/network", Access: httpapi.Agent, MaxBody: MaxBody, Handle: h.network},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/commands/{commandId}/result", Access: httpapi.Agent, MaxBody: MaxBody, Handle: h.result},
	)
}

// Wrap gives each request the slot in which the token check leaves the agent
// row for the handler (so a heartbeat reads it once).
func Wrap(next http.Handler) http.Handler { return slotted{next} }

type slotted struct{ next http.Handler }

func (s slotted) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx, _ := withSlot(r.Context())
	s.next.ServeHTTP(w, r.WithContext(ctx))
}

// Unwrap exposes the router (httpapi.Patterns reads its routes).
func (s slotted) Unwrap() http.Handler { return s.next }

func (h *Handler) enroll(w http.ResponseWriter, r *http.Request) error {
	var in EnrollInput
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	out, err := h.Svc.Enroll(r.Context(), httpapi.SourceIP(r), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
	return nil
}

func (h *Handler) heartbeat(w http.ResponseWriter, r *http.Request) error {
	var in HeartbeatInput
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	out, err := h.Svc.Heartbeat(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

type updated struct {
	Success bool `json:"success"`
}

func (h *Handler) hardware(w http.ResponseWriter, r *http.Request) error {
	var in device.Hardware
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	if err := h.Svc.PutHardware(r.Context(), r.PathValue("id"), in); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, updated{Success: true})
	return nil
}

func (h *Handler) network(w http.ResponseWriter, r *http.Request) error {
	var in device.Network
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	if err := h.Svc.PutNetwork(r.Context(), r.PathValue("id"), in); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, updated{Success: true})
	return nil
}

func (h *Handler) software(w http.ResponseWriter, r *http.Request) error {
	var in SoftwareInput
	if err := httpapi.DecodeLimit(r, &in, MaxSoftwareBody); err != nil {
		return err
	}
	out, err := h.Svc.PutSoftware(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) result(w http.ResponseWriter, r *http.Request) error {
	var in ResultInput
	if err := httpapi.DecodeLimit(r, &in, MaxBody); err != nil {
		return err
	}
	out, err := h.Svc.CommandResult(r.Context(), r.PathValue("id"), r.PathValue("commandId"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
