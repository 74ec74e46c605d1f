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
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/me/push-targets", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/me/push-targets", Access: httpapi.User, Handle: h.register},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/users/me/push-targets/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.remove)},
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

func (h *Handler) list(r *http.Request) (httpapi.List[Target], error) {
	pg, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return httpapi.List[Target]{}, err
	}
	ts, err := h.Svc.List(r.Context())
	return httpapi.NewList(ts, pg), err
}

func (h *Handler) remove(r *http.Request) (map[string]bool, error) {
	return map[string]bool{"success": true}, h.Svc.Delete(r.Context(), r.PathValue("id"))
}
