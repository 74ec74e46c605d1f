package push

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves the caller's push targets under /api/v1/users/me (the users
// function's prefix).
type Handler struct{ Svc *Service }

// Routes registers the push-target routes. They are not enrolment routes:
// Force MFA applies (a phone that approves elevations belongs to an account
// that has enrolled).
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/me/push-targets", Access: httpapi.User, Handle: h.list},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/me/push-targets", Access: httpapi.User, Handle: h.register},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/users/me/push-targets/{id}", Access: httpapi.User, Handle: h.remove},
	)
}

func (h *Handler) register(w http.ResponseWriter, r *http.Request) error {
	var in TargetInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	t, created, err := h.Svc.Register(r.Context(), in)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, t)
	return nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	pg, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	ts, err := h.Svc.List(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(ts, pg))
	return nil
}

func (h *Handler) remove(w http.ResponseWriter, r *http.Request) error {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]bool{"success": true})
	return nil
}
