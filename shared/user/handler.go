package user

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/valid"
)

// profileBody is the body of PATCH /users/me and updateBody of PATCH
// /users/:id: absent fields are unchanged, null is refused by name.
type (
	profileBody struct {
		Name      valid.Opt[string] `json:"name"`
		AvatarURL valid.Opt[string] `json:"avatarUrl"`
	}
	updateBody struct {
		OrgID          string              `json:"orgId"`
		Name           valid.Opt[string]   `json:"name"`
		Status         valid.Opt[string]   `json:"status"`
		SiteIDs        valid.Opt[[]string] `json:"siteIds"`
		DeviceGroupIDs valid.Opt[[]string] `json:"deviceGroupIds"`
		OrgAccess      valid.Opt[string]   `json:"orgAccess"`
		OrgIDs         valid.Opt[[]string] `json:"orgIds"`
	}
	// assignBody is the body of POST /users/:id/role.
	assignBody struct {
		OrgID  string `json:"orgId"`
		RoleID string `json:"roleId"`
	}
)

// Handler serves /api/v1/users.
type Handler struct{ Svc *Service }

// Routes registers the users routes. /users/me is an enrolment route: a Force
// MFA user may read and change their profile before enrolling (Force MFA in
// the OpenAPI document's conventions).
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/me", Access: httpapi.User, Enrol: true, Handle: httpapi.Call(http.StatusOK, h.me)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/users/me", Access: httpapi.User, Enrol: true, Handle: httpapi.CallBody(http.StatusOK, h.updateMe)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/roles", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.roles)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/invite", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.invite)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/resend-invite", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.resend)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.update)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.remove)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/{id}/role", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.assignRole)},
	)
}

func (h *Handler) me(r *http.Request) (*User, error) {
	return h.Svc.Me(r.Context())
}

func (h *Handler) updateMe(r *http.Request, b profileBody) (*User, error) {
	f := fault.Fields{}
	in := ProfileInput{Name: b.Name.NotNull(f, "name", "a string"), AvatarURL: b.AvatarURL.NotNull(f, "avatarUrl", "a string")}
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, err := h.Svc.UpdateMe(r.Context(), in)
	if err != nil {
		return nil, err
	}
	return u, nil
}

// The two lists below page in memory (httpapi.NewList), not on tenant.List:
// each is the list of one tenant (a partner's own staff or roles, or one
// organization's), never rows of several organizations across a caller's
// reach, which is what the list indexes (GSI3/GSI4) and tenant.List serve.
// Members are ordered by e-mail, which lives on the account (the profile) and
// changes there, not on the membership row an index would hold, so a page is
// cut after the tenant's profiles are read.

func (h *Handler) list(r *http.Request) (httpapi.List[Member], error) {
	pg, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return httpapi.List[Member]{}, err
	}
	ms, err := h.Svc.List(r.Context(), r.URL.Query().Get("orgId"))
	if err != nil {
		return httpapi.List[Member]{}, err
	}
	return httpapi.NewList(ms, pg), nil
}

// roles answers the roles assignable in one tenant: the built-in roles of its
// scope (code) and its own custom roles.
func (h *Handler) roles(r *http.Request) (httpapi.List[RoleInfo], error) {
	pg, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return httpapi.List[RoleInfo]{}, err
	}
	rs, err := h.Svc.RolesInScope(r.Context(), r.URL.Query().Get("orgId"))
	if err != nil {
		return httpapi.List[RoleInfo]{}, err
	}
	return httpapi.NewList(rs, pg), nil
}

func (h *Handler) get(r *http.Request) (*Member, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"), r.URL.Query().Get("orgId"))
}

func (h *Handler) invite(r *http.Request, in InviteInput) (*Invited, error) {
	return h.Svc.Invite(r.Context(), in)
}

func (h *Handler) resend(r *http.Request, in ResendInput) (*Resent, error) {
	return h.Svc.ResendInvite(r.Context(), in)
}

func (h *Handler) update(r *http.Request, b updateBody) (*Member, error) {
	f := fault.Fields{}
	in := UpdateInput{OrgID: b.OrgID, Name: b.Name.NotNull(f, "name", "a string"), Status: b.Status.NotNull(f, "status", "a string"),
		SiteIDs: b.SiteIDs.NotNull(f, "siteIds", "an array"), DeviceGroupIDs: b.DeviceGroupIDs.NotNull(f, "deviceGroupIds", "an array"),
		OrgAccess: b.OrgAccess.NotNull(f, "orgAccess", "a string"), OrgIDs: b.OrgIDs.NotNull(f, "orgIds", "an array")}
	if err := f.Err(); err != nil {
		return nil, err
	}
	return h.Svc.Update(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) remove(r *http.Request) (map[string]any, error) {
	if err := h.Svc.Remove(r.Context(), r.PathValue("id"), r.URL.Query().Get("orgId")); err != nil {
		return nil, err
	}
	return map[string]any{"success": true}, nil
}

func (h *Handler) assignRole(r *http.Request, b assignBody) (*Member, error) {
	return h.Svc.AssignRole(r.Context(), r.PathValue("id"), b.OrgID, b.RoleID)
}
