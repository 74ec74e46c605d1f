package apikey

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/api-keys (shared/principal serves
// /api/v1/service-principals). Every route
// needs a user session (API keys are refused); writes need MFA.
//
// What each route reads and writes after authentication (one BatchGetItem,
// plus one GetItem per custom role of the caller's chain); budgets:
// docs/budgets.md, from tests/fixture/budgets.go:
//
//	route                                      MFA  what
//	GET    /api-keys                                Query of the list index page (GSI4 organization, GSI3 partner; status
//	                                                and reach applied to the index rows), BatchGetItem of the page's keys,
//	                                                BatchGetItem of their guards (usage); + a Query counting the partition
//	                                                when the page stops before the end (+ GetItem of an orgId's organization);
//	                                                system without orgId: + the organizations, the partitions merged
//	POST   /api-keys                           yes  GetItem organization, GetItem membership (+ custom roles), transaction
//	GET    /api-keys/:id                            GetItem (organization scope) or GSI1 query, BatchGetItem (usage)
//	PATCH  /api-keys/:id                       yes  read as GET, transaction (record CAS, guard, audit), read back
//	DELETE /api-keys/:id                       yes  read (a partner caller: by the id index, then the organization), transaction (record CAS, guard, audit)
//	POST   /api-keys/:id/rotate                yes  read, the creator's membership and role (+ custom roles: the ceiling it must still hold),
//	                                                transaction (record CAS, old guard, new guard, audit)
type Handler struct{ Svc *Service }

// KeyRoutes registers /api-keys.
func (h *Handler) KeyRoutes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/api-keys", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/api-keys", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/api-keys/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/api-keys/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/api-keys/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.revoke)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/api-keys/{id}/rotate", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.rotate)},
	)
}

// ParseListFilter reads a list's query (filters, page and limit, cursor):
// the key list's, and shared/principal's.
func ParseListFilter(r *http.Request) (ListFilter, error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return ListFilter{}, err
	}
	q := r.URL.Query()
	return ListFilter{OrgID: q.Get("orgId"), Status: q.Get("status"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor}, nil
}

func (h *Handler) list(r *http.Request) (httpapi.List[Key], error) {
	f, err := ParseListFilter(r)
	if err != nil {
		return httpapi.List[Key]{}, err
	}
	pg, err := h.Svc.List(r.Context(), f)
	if err != nil {
		return httpapi.List[Key]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Issued, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Key, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Key, error) {
	return h.Svc.Patch(r.Context(), r.PathValue("id"), in)
}

// revoked is the DELETE answer.
type revoked struct {
	Success bool       `json:"success"`
	Message string     `json:"message"`
	APIKey  revokedKey `json:"apiKey"`
}

type revokedKey struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	KeyPrefix string `json:"keyPrefix"`
	Status    string `json:"status"`
	UpdatedAt string `json:"updatedAt"`
}

func (h *Handler) revoke(r *http.Request) (revoked, error) {
	k, err := h.Svc.Revoke(r.Context(), r.PathValue("id"))
	if err != nil {
		return revoked{}, err
	}
	return revoked{Success: true, Message: "API key revoked successfully",
		APIKey: revokedKey{ID: k.ID, Name: k.Name, KeyPrefix: k.KeyPrefix, Status: k.Status, UpdatedAt: k.UpdatedAt}}, nil
}

func (h *Handler) rotate(r *http.Request) (*Issued, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Rotate(r.Context(), r.PathValue("id"))
}
