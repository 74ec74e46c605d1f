package script

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/scripts. Reads accept a bearer JWT or an API key
// with scripts:read; writes need a user session and MFA.
//
// What each route reads and writes after authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go):
// the list reads the index page and the page's scripts (BatchGetItem; none for
// an empty page), the organization with orgId, and for a total the page did
// not reach a Select COUNT (for a partner caller with selected organizations a
// Query of the partition's index rows); a system caller without orgId reads
// the organizations, one Query per partition (each partner's GSI3, each
// partnerless organization's GSI4) and the page's scripts, and a Query per
// partition for a total the page did not reach. GET /scripts takes page and
// limit, or cursor (pagination.nextCursor of the page before). Create reads
// the organization and writes one transaction; get reads the script; patch and
// delete read it and write one transaction.
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
