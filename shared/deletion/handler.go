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
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/auth/account-deletion-request", Access: httpapi.User, Handle: h.mine},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/account-deletion-request", Access: httpapi.User, MFA: true, Handle: h.create},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/auth/account-deletion-request/{id}", Access: httpapi.User, Handle: h.cancel},
	)
}

func (h *Handler) mine(w http.ResponseWriter, r *http.Request) error {
	c, err := h.Svc.Mine(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.Svc.Create(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (h *Handler) cancel(w http.ResponseWriter, r *http.Request) error {
	var in CancelInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.Svc.Cancel(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

// AdminHandler serves the administration routes (users:write; process also
// needs MFA) under each of its prefixes (/api/v1/admin and /admin).
type AdminHandler struct{ Svc *Service }

// Routes registers the administration routes, at /api/v1/admin and at the
// /admin alias.
func (h *AdminHandler) Routes(rt *httpapi.Router) {
	get, post, user := http.MethodGet, http.MethodPost, httpapi.User
	rt.Add(
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests", Access: user, Handle: h.list},
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests/pending-count", Access: user, Handle: h.count},
		httpapi.Route{Method: get, Path: "/api/v1/admin/account-deletion-requests/{id}", Access: user, Handle: h.get},
		httpapi.Route{Method: post, Path: "/api/v1/admin/account-deletion-requests/{id}/process", Access: user, MFA: true, Handle: h.process},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests", Access: user, Handle: h.list},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests/pending-count", Access: user, Handle: h.count},
		httpapi.Route{Method: get, Path: "/admin/account-deletion-requests/{id}", Access: user, Handle: h.get},
		httpapi.Route{Method: post, Path: "/admin/account-deletion-requests/{id}/process", Access: user, MFA: true, Handle: h.process},
	)
}

type requestList struct {
	Requests   []View             `json:"requests"`
	Pagination httpapi.Pagination `json:"pagination"`
}

func (h *AdminHandler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	vs, err := h.Svc.List(r.Context(), r.URL.Query().Get("status"))
	if err != nil {
		return err
	}
	l := httpapi.NewList(vs, page)
	httpapi.WriteJSON(w, http.StatusOK, requestList{Requests: l.Data, Pagination: l.Pagination})
	return nil
}

func (h *AdminHandler) count(w http.ResponseWriter, r *http.Request) error {
	c, err := h.Svc.PendingCount(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *AdminHandler) get(w http.ResponseWriter, r *http.Request) error {
	v, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h *AdminHandler) process(w http.ResponseWriter, r *http.Request) error {
	var in ProcessInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.Svc.Process(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}
