package script

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/scripts. Reads accept a bearer JWT or an API key
// with scripts:read; writes need a user session and MFA.
//
// DynamoDB calls after authentication: list 2 (the index page, BatchGetItem
// of the page's scripts; none for an empty page), +1 with orgId (the
// organization), +1 for a total the page did not reach (Select COUNT; for a
// partner caller with selected organizations a Query of the partition's index
// rows); a system caller without orgId 1 (the organizations) + one Query per
// partition (each partner's GSI3, each partnerless organization's GSI4) +
// BatchGetItem, +1 Query per partition for a total the page did not reach.
// GET /scripts takes page and limit, or cursor (pagination.nextCursor of the
// page before). Create 2 (GetItem
// organization, transaction); get 1; patch and delete 2.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read := []string{"scripts:read"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/scripts", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/scripts", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/scripts/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/scripts/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/scripts/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.delete)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Script], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Script]{}, err
	}
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: r.URL.Query().Get("orgId"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return httpapi.List[Script]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Script, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Script, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Script, error) {
	return h.Svc.Patch(r.Context(), r.PathValue("id"), in)
}

type deleted struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func (h *Handler) delete(r *http.Request) (deleted, error) {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return deleted{}, err
	}
	return deleted{Success: true, Message: "Script deleted successfully"}, nil
}
