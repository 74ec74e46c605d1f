package role

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/valid"
)

// Handler serves the roles group: /roles and /permissions. Every route needs a
// user session (JWT) and none requires MFA. Every service
// method authorizes first and refuses a partner caller without full
// organization access (403 `Full partner organization access required`).
//
// What each route reads and writes after authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go;
// handler_test.go holds some cases tighter with fixture.Budget). Authentication
// is one BatchGetItem of profile, session and membership and one GetItem of the
// caller's custom role (none for a system role, which is resolved from code;
// one more per custom role its own role inherits from). Role reads by id go through
// GSI1, holders through GSI2 (both eventually consistent). "+org" is one GetItem
// of an organization: the orgId a partner or system caller names, or the
// caller's own organization when its membership does not carry the partner
// (writes record the organization's partner on the role).
//
//	route                                      what
//	GET    /roles[?orgId=]                     Query system roles, Query owner's roles, GSI1 Query the owner's members (counts)
//	POST   /roles                              [Query owner's roles: parentRoleId], transaction (role, name guard, audit, [parent chain])
//	GET    /roles/permissions/available        none (the catalogue is code)
//	GET    /permissions/catalog                none (the catalogue is code)
//	GET    /roles/:id                          GSI1 Query role, GSI2 Query holders (custom) or GSI1 Query caller's members (system)
//	PATCH  /roles/:id                          GSI1 Query role, [Query owner's roles: a new parent], transaction (update, [name guards], [chain], audit),
//	                                           GSI2 Query holders (userCount of the answer); a system role is refused (403) after the read
//	DELETE /roles/:id                          GSI1 Query role, GSI2 Query holders (in use: 400 before the write), transaction (conditional delete, name guard, [parent count], audit)
//	POST   /roles/:id/clone                    GSI1 Query source, a GetItem per role of its chain (the source included), transaction (role, name guard, audit)
//	GET    /roles/:id/users                    GSI1 Query role, GSI2 Query holders, BatchGetItem profiles of the page (none held: none)
//	GET    /roles/:id/effective-permissions    GSI1 Query role, a GetItem per role of its chain (the role included)
//
// Another tenant's role (404) reads no more than the success; a malformed id
// (400) or a refused permission (403) reads nothing after authentication.
//
// Responses: lists use the envelope {data, pagination} (page
// from 1, limit default 50, max 100); a role is its record with its direct
// permissions and userCount; DELETE answers {success: true}; /roles/:id/users
// is {data: [{id (the user's), email, name, status, scope, partnerId?, orgId?,
// assignedAt}], pagination}; /roles/:id/effective-permissions is {data:
// [{resource, action, sourceRoleId, sourceRoleName, inherited}], pagination}.
type Handler struct{ Svc *Service }

// NewHandler returns the roles handler.
func NewHandler(svc *Service) *Handler { return &Handler{Svc: svc} }

// List defaults (the Page and Limit parameters of the OpenAPI document).
const (
	pageDefault = 50
	pageMax     = 100
)

// Routes registers the roles group. /roles/permissions/available is a literal
// path of three segments: Go 1.22's ServeMux never reads it as /roles/{id}
// (two segments), and of the three-segment patterns only the literal matches
// it (a GET of /roles/permissions is /roles/{id} with a malformed id: 400).
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/roles", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/roles", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/roles/permissions/available", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.available)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/permissions/catalog", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.catalog)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/roles/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/roles/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.update)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/roles/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.delete)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/roles/{id}/clone", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.clone)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/roles/{id}/users", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.users)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/roles/{id}/effective-permissions", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.effective)},
	)
}

// createBody is the body of POST /roles.
type createBody struct {
	Name         string             `json:"name"`
	Description  string             `json:"description"`
	Permissions  []authz.Permission `json:"permissions"`
	ParentRoleID *string            `json:"parentRoleId"`
	OrgID        string             `json:"orgId"`
	ForceMFA     bool               `json:"forceMfa"`
}

// updateBody is the body of PATCH /roles/:id; absent fields are unchanged,
// parentRoleId null (or "") removes the parent, the others refuse null.
type updateBody struct {
	Name         valid.Opt[string]             `json:"name"`
	Description  valid.Opt[string]             `json:"description"`
	Permissions  valid.Opt[[]authz.Permission] `json:"permissions"`
	ParentRoleID valid.Opt[string]             `json:"parentRoleId"`
	ForceMFA     valid.Opt[bool]               `json:"forceMfa"`
}

// input checks the body's types and nulls into the service's UpdateInput.
func (b updateBody) input() (UpdateInput, error) {
	f := fault.Fields{}
	in := UpdateInput{Name: b.Name.NotNull(f, "name", "a string"), Description: b.Description.NotNull(f, "description", "a string"),
		Permissions: b.Permissions.NotNull(f, "permissions", "an array"), ForceMFA: b.ForceMFA.NotNull(f, "forceMfa", "a boolean")}
	switch {
	case b.ParentRoleID.Wrong(f, "parentRoleId", "a UUID or null"):
	case b.ParentRoleID.Set:
		in.ParentRoleID = new(b.ParentRoleID.OrZero())
	}
	return in, f.Err()
}

// cloneBody is the body of POST /roles/:id/clone.
type cloneBody struct {
	Name string `json:"name"`
}

// available is the answer of GET /roles/permissions/available.
type available struct {
	Resources []string `json:"resources"`
	Actions   []string `json:"actions"`
}

// catalog is the answer of GET /permissions/catalog.
type catalog struct {
	Permissions []authz.CatalogEntry `json:"permissions"`
}

// deleted is the answer of DELETE /roles/:id.
type deleted struct {
	Success bool `json:"success"`
}

// list pages in memory (httpapi.NewList), not on tenant.List: it is the list
// of one owner (a partner's own roles or one organization's), headed by the
// system roles of its scope, which live in code order and in no list index;
// it never spans the organizations of a caller's reach, which is what the
// list indexes (GSI3/GSI4) and tenant.List serve. Each role's userCount needs
// the owner's every membership, so the whole list is read in any case.
func (h *Handler) list(r *http.Request) (httpapi.List[View], error) {
	pg, err := httpapi.ParsePage(r, pageDefault, pageMax)
	if err != nil {
		return httpapi.List[View]{}, err
	}
	views, err := h.Svc.List(r.Context(), r.URL.Query().Get("orgId"))
	if err != nil {
		return httpapi.List[View]{}, err
	}
	return httpapi.NewList(views, pg), nil
}

func (h *Handler) create(r *http.Request, b createBody) (*View, error) {
	v, err := h.Svc.Create(r.Context(), CreateInput{OrgID: b.OrgID, Name: b.Name, Description: b.Description,
		Permissions: b.Permissions, ParentRoleID: b.ParentRoleID, ForceMFA: b.ForceMFA})
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (h *Handler) available(r *http.Request) (available, error) {
	res, acts, err := h.Svc.Available(r.Context())
	if err != nil {
		return available{}, err
	}
	return available{Resources: res, Actions: acts}, nil
}

func (h *Handler) catalog(r *http.Request) (catalog, error) {
	ps, err := h.Svc.Catalog(r.Context())
	if err != nil {
		return catalog{}, err
	}
	return catalog{Permissions: ps}, nil
}

func (h *Handler) get(r *http.Request) (*View, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) update(r *http.Request, b updateBody) (*View, error) {
	in, err := b.input()
	if err != nil {
		return nil, err
	}
	v, err := h.Svc.Update(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (h *Handler) delete(r *http.Request) (deleted, error) {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return deleted{}, err
	}
	return deleted{Success: true}, nil
}

func (h *Handler) clone(r *http.Request, b cloneBody) (*View, error) {
	v, err := h.Svc.Clone(r.Context(), r.PathValue("id"), b.Name)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (h *Handler) users(r *http.Request) (httpapi.List[Holder], error) {
	pg, err := httpapi.ParsePage(r, pageDefault, pageMax)
	if err != nil {
		return httpapi.List[Holder]{}, err
	}
	hs, total, err := h.Svc.Holders(r.Context(), r.PathValue("id"), pg.Page, pg.Limit)
	if err != nil {
		return httpapi.List[Holder]{}, err
	}
	return httpapi.List[Holder]{Data: hs,
		Pagination: httpapi.Pagination{Page: pg.Page, Limit: pg.Limit, Total: total}}, nil
}

// effective pages in memory: it is one role's permissions along its chain
// (at most MaxDepth roles, each permission of the catalogue at most once per
// role), computed from the chain, not a tenant's rows.
func (h *Handler) effective(r *http.Request) (httpapi.List[Grant], error) {
	pg, err := httpapi.ParsePage(r, pageDefault, pageMax)
	if err != nil {
		return httpapi.List[Grant]{}, err
	}
	gs, err := h.Svc.Effective(r.Context(), r.PathValue("id"))
	if err != nil {
		return httpapi.List[Grant]{}, err
	}
	return httpapi.NewList(gs, pg), nil
}
