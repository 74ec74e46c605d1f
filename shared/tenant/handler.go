package tenant

import (
	"context"
	"net/http"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/valid"
)

// The PATCH bodies: an absent field is unchanged; null is refused by the
// field's name (none of these fields can be cleared by it), except a device
// group's siteId, where null (or "") takes the group out of its site. input
// checks a body into the service's patch.
type (
	orgPatchBody struct {
		Name   valid.Opt[string] `json:"name"`
		Status valid.Opt[string] `json:"status"`
	}
	sitePatchBody struct {
		Name     valid.Opt[string] `json:"name"`
		Timezone valid.Opt[string] `json:"timezone"`
	}
	groupPatchBody struct {
		Name   valid.Opt[string] `json:"name"`
		SiteID valid.Opt[string] `json:"siteId"`
	}
)

func (b orgPatchBody) input() (OrgPatch, error) {
	f := fault.Fields{}
	in := OrgPatch{Name: b.Name.NotNull(f, "name", "a string"), Status: b.Status.NotNull(f, "status", "a string")}
	return in, f.Err()
}

func (b sitePatchBody) input() (SitePatch, error) {
	f := fault.Fields{}
	in := SitePatch{Name: b.Name.NotNull(f, "name", "a string"), Timezone: b.Timezone.NotNull(f, "timezone", "a string")}
	return in, f.Err()
}

func (b groupPatchBody) input() (GroupPatch, error) {
	f := fault.Fields{}
	in := GroupPatch{Name: b.Name.NotNull(f, "name", "a string"), SiteID: b.SiteID}
	return in, f.Err()
}

// Handler serves the tenancy routes: the organizations group (/organizations)
// and the sites group (/sites, /device-groups). All need a user session (JWT).
//
// What each route reads and writes after authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go;
// authentication is one BatchGetItem of profile, session and membership, and
// one GetItem of a custom role; a system role is resolved from code). "org" is an organization-scope caller; "partner" a partner-scope
// one, whose access depends on the organization's partner; "system" the
// platform administrator. Reads through GSI1 are eventually consistent.
//
//	route                                        MFA  what
//	GET    /organizations                             GSI3/GSI4 page, BatchGetItem (tenant.List); system: + GSI2 query, a Query per partner
//	POST   /organizations                        yes  transaction: organization, partner-exists check, audit
//	GET    /organizations/:id                         GetItem
//	PATCH  /organizations/:id                         GetItem, transaction (update, audit)
//	DELETE /organizations/:id                    yes  GetItem, transaction (conditional delete, security settings, audit)
//	GET    /organizations/:id/security-settings       BatchGetItem (organization, settings)
//	PUT    /organizations/:id/security-settings  yes  transaction (settings, organization check, audit)
//	GET    /sites?orgId=                              partner and system: GetItem organization; GSI4 page + BatchGetItem
//	POST   /sites                                     transaction (site, organization count, audit)
//	GET    /sites/:id                                 GSI1 query; partner: GetItem organization
//	PATCH  /sites/:id                                 GSI1 query, transaction (update, audit; partner: organization check)
//	DELETE /sites/:id                                 GSI1 query, transaction (conditional delete, organization count, audit)
//	GET    /device-groups?orgId=                      as GET /sites
//	POST   /device-groups                             transaction (group, organization count, audit, site count)
//	GET    /device-groups/:id                         as GET /sites/:id
//	PATCH  /device-groups/:id                         GSI1 query, transaction (CAS update, audit, [organization check], [site counts])
//	DELETE /device-groups/:id                         GSI1 query, transaction (conditional delete, counts, audit)
//
// A refusal for another tenant's item never costs more than the success. A
// delete whose condition fails because of a concurrent change costs one more
// read, to tell "gone" (404) from "not empty" (409).
type Handler struct{ Svc *Service }

// NewHandler returns the tenancy handler.
func NewHandler(svc *Service) *Handler { return &Handler{Svc: svc} }

// OrgRoutes registers the organizations group.
func (h *Handler) OrgRoutes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/organizations", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.listOrgs)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/organizations", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.createOrg)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/organizations/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.getOrg)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/organizations/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.updateOrg)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/organizations/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.deleteOrg)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/organizations/{id}/security-settings", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.getSecurity)},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/organizations/{id}/security-settings", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.putSecurity)},
	)
}

// SiteRoutes registers the sites group (sites and device groups).
func (h *Handler) SiteRoutes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sites", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.listSites)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/sites", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.createSite)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/sites/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.getSite)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/sites/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.updateSite)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/sites/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.deleteSite)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/device-groups", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.listGroups)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/device-groups", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.createGroup)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/device-groups/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.getGroup)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/device-groups/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.updateGroup)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/device-groups/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.deleteGroup)},
	)
}

// deleted is the answer of the delete routes.
type deleted struct {
	Success bool `json:"success"`
}

// List defaults (the Page and Limit parameters of the OpenAPI document).
const (
	pageDefault = 50
	pageMax     = 100
)

// paged answers one page of a list read by List, from the request's page,
// limit and cursor and the organization orgId names (sites, device groups).
func paged[T any](r *http.Request, list func(ctx context.Context, f ListFilter) (*Page[T], error)) (httpapi.List[T], error) {
	pg, err := httpapi.ParseWindow(r, pageDefault, pageMax)
	if err != nil {
		return httpapi.List[T]{}, err
	}
	out, err := list(r.Context(), ListFilter{OrgID: r.URL.Query().Get("orgId"), Page: pg.Page, Limit: pg.Limit, Cursor: pg.Cursor})
	if err != nil {
		return httpapi.List[T]{}, err
	}
	return out.Envelope(), nil
}

func (h *Handler) listOrgs(r *http.Request) (httpapi.List[Organization], error) {
	return paged(r, h.Svc.ListOrgs)
}

func (h *Handler) createOrg(r *http.Request, in OrgInput) (*Organization, error) {
	return h.Svc.CreateOrg(r.Context(), in)
}

func (h *Handler) getOrg(r *http.Request) (*Organization, error) {
	return h.Svc.GetOrg(r.Context(), r.PathValue("id"))
}

func (h *Handler) updateOrg(r *http.Request, b orgPatchBody) (*Organization, error) {
	in, err := b.input()
	if err != nil {
		return nil, err
	}
	return h.Svc.UpdateOrg(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) deleteOrg(r *http.Request) (deleted, error) {
	return deleted{Success: true}, h.Svc.DeleteOrg(r.Context(), r.PathValue("id"))
}

func (h *Handler) getSecurity(r *http.Request) (*SecuritySettings, error) {
	return h.Svc.GetSecurity(r.Context(), r.PathValue("id"))
}

func (h *Handler) putSecurity(r *http.Request, in SecurityInput) (*SecuritySettings, error) {
	return h.Svc.PutSecurity(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) listSites(r *http.Request) (httpapi.List[Site], error) {
	return paged(r, h.Svc.ListSites)
}

func (h *Handler) createSite(r *http.Request, in SiteInput) (*Site, error) {
	return h.Svc.CreateSite(r.Context(), in)
}

func (h *Handler) getSite(r *http.Request) (*Site, error) {
	return h.Svc.GetSite(r.Context(), r.PathValue("id"))
}

func (h *Handler) updateSite(r *http.Request, b sitePatchBody) (*Site, error) {
	in, err := b.input()
	if err != nil {
		return nil, err
	}
	return h.Svc.UpdateSite(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) deleteSite(r *http.Request) (deleted, error) {
	return deleted{Success: true}, h.Svc.DeleteSite(r.Context(), r.PathValue("id"))
}

func (h *Handler) listGroups(r *http.Request) (httpapi.List[DeviceGroup], error) {
	return paged(r, h.Svc.ListGroups)
}

func (h *Handler) createGroup(r *http.Request, in GroupInput) (*DeviceGroup, error) {
	return h.Svc.CreateGroup(r.Context(), in)
}

func (h *Handler) getGroup(r *http.Request) (*DeviceGroup, error) {
	return h.Svc.GetGroup(r.Context(), r.PathValue("id"))
}

func (h *Handler) updateGroup(r *http.Request, b groupPatchBody) (*DeviceGroup, error) {
	in, err := b.input()
	if err != nil {
		return nil, err
	}
	return h.Svc.UpdateGroup(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) deleteGroup(r *http.Request) (deleted, error) {
	return deleted{Success: true}, h.Svc.DeleteGroup(r.Context(), r.PathValue("id"))
}
