package deletion

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves the requester's routes under /api/v1/auth (bearer JWT; POST
// also needs MFA).
type Handler struct{ Svc *Service }

// Routes registers the requester's routes.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/auth/account-deletion-request", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.mine)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/account-deletion-request", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/auth/account-deletion-request/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.cancel)},
	)
}

func (h *Handler) mine(r *http.Request) (*Current, error) { return h.Svc.Mine(r.Context()) }

func (h *Handler) create(r *http.Request, in CreateInput) (*View, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) cancel(r *http.Request, in CancelInput) (*View, error) {
	return h.Svc.Cancel(r.Context(), r.PathValue("id"), in)
}

// AdminHandler serves the administration routes (users:write; process also
// needs MFA) under each of its prefixes (/api/v1/admin and /admin).
type AdminHandler struct{ Svc *Service }

// Routes registers the administration routes, at /api/v1/admin and at the
// /admin alias.
func (h *AdminHandler) Routes(rt *httpapi.Router) {
	get, post, user := http.MethodGet, http.MethodPost, httpapi.User
	rt.Add(
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests", Access: user, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests/pending-count", Access: user, Handle: httpapi.Call(http.StatusOK, h.count)},
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests/{id}", Access: user, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: post, Path: "/api/v1/admin/account-deletion-requests/{id}/process", Access: user, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.process)},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests", Access: user, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests/pending-count", Access: user, Handle: httpapi.Call(http.StatusOK, h.count)},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests/{id}", Access: user, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: post, Path: "/admin/account-deletion-requests/{id}/process", Access: user, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.process)},
	)
}

type requestList struct {
	Requests   []View             `json:"requests"`
	Pagination httpapi.Pagination `json:"pagination"`
}

func (h *AdminHandler) list(r *http.Request) (requestList, error) {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return requestList{}, err
	}
	vs, err := h.Svc.List(r.Context(), r.URL.Query().Get("status"))
	l := httpapi.NewList(vs, page)
	return requestList{Requests: l.Data, Pagination: l.Pagination}, err
}

func (h *AdminHandler) count(r *http.Request) (*Count, error) { return h.Svc.PendingCount(r.Context()) }

func (h *AdminHandler) get(r *http.Request) (*View, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *AdminHandler) process(r *http.Request, in ProcessInput) (*View, error) {
	return h.Svc.Process(r.Context(), r.PathValue("id"), in)
}
