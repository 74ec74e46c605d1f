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
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/roles", Access: httpapi.User, Handle: h.roles},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/invite", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.invite)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/resend-invite", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.resend)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: h.update},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/users/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.remove)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/users/{id}/role", Access: httpapi.User, Handle: h.assignRole},
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

func (h *Handler) roles(w http.ResponseWriter, r *http.Request) error {
	pg, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	rs, err := h.Svc.RolesInScope(r.Context(), r.URL.Query().Get("orgId"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(rs, pg))
	return nil
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

func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	var b updateBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	f := fault.Fields{}
	in := UpdateInput{OrgID: b.OrgID, Name: b.Name.NotNull(f, "name", "a string"), Status: b.Status.NotNull(f, "status", "a string"),
		SiteIDs: b.SiteIDs.NotNull(f, "siteIds", "an array"), DeviceGroupIDs: b.DeviceGroupIDs.NotNull(f, "deviceGroupIds", "an array"),
		OrgAccess: b.OrgAccess.NotNull(f, "orgAccess", "a string"), OrgIDs: b.OrgIDs.NotNull(f, "orgIds", "an array")}
	if err := f.Err(); err != nil {
		return err
	}
	m, err := h.Svc.Update(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
	return nil
}

func (h *Handler) remove(r *http.Request) (map[string]any, error) {
	if err := h.Svc.Remove(r.Context(), r.PathValue("id"), r.URL.Query().Get("orgId")); err != nil {
		return nil, err
	}
	return map[string]any{"success": true}, nil
}

func (h *Handler) assignRole(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		OrgID  string `json:"orgId"`
		RoleID string `json:"roleId"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	m, err := h.Svc.AssignRole(r.Context(), r.PathValue("id"), in.OrgID, in.RoleID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
	return nil
}
