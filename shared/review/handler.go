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
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/access-reviews", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/access-reviews", Access: httpapi.UserOrKey, Scopes: write, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/access-reviews/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/access-reviews/{id}/items/{itemId}", Access: httpapi.UserOrKey, Scopes: write, Handle: httpapi.CallBody(http.StatusOK, h.decide)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/access-reviews/{id}/complete", Access: httpapi.UserOrKey, Scopes: write, Handle: httpapi.Call(http.StatusOK, h.complete)},
	)
}

type list struct {
	Data []View `json:"data"`
}

func (h *Handler) list(r *http.Request) (list, error) {
	vs, err := h.Svc.List(r.Context())
	return list{Data: vs}, err
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Created, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Detail, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) decide(r *http.Request, in DecisionInput) (*DecisionView, error) {
	return h.Svc.Decide(r.Context(), r.PathValue("id"), r.PathValue("itemId"), in)
}

func (h *Handler) complete(r *http.Request) (*Completed, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Complete(r.Context(), r.PathValue("id"))
}
