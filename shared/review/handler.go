package review

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/access-reviews: bearer JWT or API key, users:read to
// read and users:write to change, no MFA.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read, write := []string{"users:read"}, []string{"users:write"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/access-reviews", Access: httpapi.UserOrKey, Scopes: read, Handle: h.list},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/access-reviews", Access: httpapi.UserOrKey, Scopes: write, Handle: h.create},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/access-reviews/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: h.get},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/access-reviews/{id}/items/{itemId}", Access: httpapi.UserOrKey, Scopes: write, Handle: h.decide},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/access-reviews/{id}/complete", Access: httpapi.UserOrKey, Scopes: write, Handle: h.complete},
	)
}

type list struct {
	Data []View `json:"data"`
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	vs, err := h.Svc.List(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, list{Data: vs})
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	c, err := h.Svc.Create(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, c)
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	d, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
	return nil
}

func (h *Handler) decide(w http.ResponseWriter, r *http.Request) error {
	var in DecisionInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	v, err := h.Svc.Decide(r.Context(), r.PathValue("id"), r.PathValue("itemId"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h *Handler) complete(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.EmptyBody(r); err != nil {
		return err
	}
	c, err := h.Svc.Complete(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
	return nil
}
