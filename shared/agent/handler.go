package agent

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/agents.
//
// What each route reads and writes (budgets: docs/budgets.md, from
// tests/fixture/budgets.go):
//
//	route                                          what
//	POST /agents/enroll                            rate-limit UpdateItem (a subject with no row yet: the count that finds none, then the write that makes it), guard GetItem, transaction (key consume, device, agent row, counts, audit, outbox), outbox clear
//	POST /agents/:id/heartbeat                     agent row GetItem (token, status, commands), PAM settings BatchGetItem; when it writes (device package doc, "Heartbeats"): the live row UpdateItem and the agent row's digest, and the device row UpdateItem before them when a fact changed (apart, not in one transaction, which would double the units of both); a status transition is one transaction and its outbox clear
//	PUT  /agents/:id/hardware | network            agent row, rate-limit UpdateItem, device update only when the facts changed (with device.updated in its transaction), outbox clear when it did
//	PUT  /agents/:id/software                      agent row, rate limit, device GetItem (hash), transaction (chunks, device) unless unchanged
//	POST /agents/:id/commands/:commandId/result    agent row, rate limit, transaction (queue entry, result)
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		// The enrollment key in the body is the credential; no principal exists yet.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/enroll", Access: httpapi.Public, NoAuthz: true, MaxBody: MaxBody, Handle: httpapi.CallBody(http.StatusCreated, h.enroll)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/heartbeat", Access: httpapi.Agent, MaxBody: MaxBody, Handle: httpapi.CallBody(http.StatusOK, h.heartbeat)},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/hardware", Access: httpapi.Agent, MaxBody: MaxBody, Handle: httpapi.CallBody(http.StatusOK, h.hardware)},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/software", Access: httpapi.Agent, MaxBody: MaxSoftwareBody, Handle: httpapi.CallBody(http.StatusOK, h.software)},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/agents/{id}/network", Access: httpapi.Agent, MaxBody: MaxBody, Handle: httpapi.CallBody(http.StatusOK, h.network)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/agents/{id}/commands/{commandId}/result", Access: httpapi.Agent, MaxBody: MaxBody, Handle: httpapi.CallBody(http.StatusOK, h.result)},
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

func (h *Handler) enroll(r *http.Request, in EnrollInput) (*Enrolled, error) {
	return h.Svc.Enroll(r.Context(), httpapi.SourceIP(r), in)
}

func (h *Handler) heartbeat(r *http.Request, in HeartbeatInput) (*HeartbeatReply, error) {
	return h.Svc.Heartbeat(r.Context(), r.PathValue("id"), in)
}

type updated struct {
	Success bool `json:"success"`
}

func (h *Handler) hardware(r *http.Request, in device.Hardware) (updated, error) {
	return updated{Success: true}, h.Svc.PutHardware(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) network(r *http.Request, in device.Network) (updated, error) {
	return updated{Success: true}, h.Svc.PutNetwork(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) software(r *http.Request, in SoftwareInput) (*SoftwareReply, error) {
	return h.Svc.PutSoftware(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) result(r *http.Request, in ResultInput) (*device.CommandResult, error) {
	return h.Svc.CommandResult(r.Context(), r.PathValue("id"), r.PathValue("commandId"), in)
}
