package principal

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/service-principals. Every route needs a user session
// (API keys are refused); writes need MFA.
//
// What each route reads and writes after authentication (one BatchGetItem,
// plus one GetItem per custom role of the caller's chain); budgets: docs/budgets.md, from tests/fixture/budgets.go:
//
//	route                                      MFA  what
//	GET    /service-principals                      Query of the list index page (GSI4 organization, GSI3 partner; status
//	                                                and reach applied to the index rows), BatchGetItem of the page's rows;
//	                                                + a Query counting the partition when the page stops before the end
//	POST   /service-principals                 yes  GetItem organization, transaction (principal, key, guard, audit)
//	GET    /service-principals/:id                  GetItem or GSI1 query
//	POST   /service-principals/:id/rotate      yes  read, GetItem current key, transaction
//	POST   /service-principals/:id/disable     yes  read, Query of the organization's keys, transaction
//	POST   /service-principals/:id/migrate-key yes  read principal, read key, transaction, read back (the key and its usage, as GET /api-keys/:id)
type Handler struct{ Svc *Service }

// Routes registers /service-principals.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/service-principals", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/service-principals", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/service-principals/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/service-principals/{id}/rotate", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.rotate)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/service-principals/{id}/disable", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.disable)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/service-principals/{id}/migrate-key", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.migrate)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Principal], error) {
	f, err := apikey.ParseListFilter(r)
	if err != nil {
		return httpapi.List[Principal]{}, err
	}
	pg, err := h.Svc.List(r.Context(), f)
	if err != nil {
		return httpapi.List[Principal]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) create(r *http.Request, in Input) (*Issued, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Principal, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) rotate(r *http.Request) (*Rotated, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Rotate(r.Context(), r.PathValue("id"))
}

func (h *Handler) disable(r *http.Request) (*Principal, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Disable(r.Context(), r.PathValue("id"))
}

func (h *Handler) migrate(r *http.Request, in MigrateInput) (*apikey.Key, error) {
	return h.Svc.MigrateKey(r.Context(), r.PathValue("id"), in)
}
