package deletion

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves the requester's routes under /api/v1/auth (bearer JWT; POST
// also needs MFA).
type Handler struct{ Svc *Service }

const authPath = "/api/v1/auth/account-deletion-request"

// Routes registers the requester's routes.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: authPath, Access: httpapi.User, Handle: h.mine},
		httpapi.Route{Method: http.MethodPost, Path: authPath, Access: httpapi.User, MFA: true, Handle: h.create},
		httpapi.Route{Method: http.MethodPatch, Path: authPath + "/{id}", Access: httpapi.User, Handle: h.cancel},
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

// Routes registers the administration routes under each prefix.
func (h *AdminHandler) Routes(rt *httpapi.Router, prefixes ...string) {
	for _, p := range prefixes {
		base := p + "/account-deletion-requests"
		rt.Add(
			httpapi.Route{Method: http.MethodGet, Path: base, Access: httpapi.User, Handle: h.list},
			httpapi.Route{Method: http.MethodGet, Path: base + "/pending-count", Access: httpapi.User, Handle: h.count},
			httpapi.Route{Method: http.MethodGet, Path: base + "/{id}", Access: httpapi.User, Handle: h.get},
			httpapi.Route{Method: http.MethodPost, Path: base + "/{id}/process", Access: httpapi.User, MFA: true, Handle: h.process},
		)
	}
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
