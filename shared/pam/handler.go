package pam

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/pam. Every route accepts a bearer JWT or an API
// key; "+ MFA" routes refuse keys (403 `MFA required`), which never satisfy MFA.
//
// What each route reads and writes after authentication (organization caller;
// partner and system callers add one read of their organizations for lists
// and one GSI1 Query instead of a GetItem for reads by id); budgets: docs/budgets.md, from tests/fixture/budgets.go:
//
//	route                                         MFA  what
//	GET    /pam/elevation-requests                     one Query of the status's list partition (four, merged, without status), BatchGetItem
//	                                                   of the page's requests, BatchGetItem of their devices and sites; the same whatever the history
//	GET    /pam/active                                 one Query of the LIVE list partition, BatchGetItem of the elevations (per 100) and of their devices and sites
//	POST   /pam/elevation-requests/:id/respond    yes  GetItem, transaction (CAS on pending, audit, outbox), outbox clear (+1 GetItem when the CAS loses);
//	                                                   + Query and transaction closing its mobile approvals when some were sent (shared/push)
//	POST   /pam/elevation-requests/:id/revoke     yes  GetItem, transaction, outbox clear
//	GET    /pam/rules                                  Query PAM#RULE#
//	POST   /pam/rules                             yes  org GetItem (partner/system), site GetItem, signer group GetItem, transaction
//	PATCH  /pam/rules/:id                         yes  GetItem, site and signer-group reads when named, transaction (CAS on updatedAt)
//	DELETE /pam/rules/:id                         yes  GetItem, transaction
//	POST   /pam/rules/preview                          Query pages of the window (at most 5,000 requests), audit-free
//	GET    /pam/signer-groups                          Query PAM#SG#
//	POST   /pam/signer-groups                     yes  transaction
//	PATCH  /pam/signer-groups/:id                 yes  GetItem, transaction
//	DELETE /pam/signer-groups/:id                 yes  GetItem, Query of the rules, transaction
//	GET    /pam/config                                 GetItem
//	PUT    /pam/config                            yes  transaction
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read := []string{"devices:read"}
	write := []string{"devices:write"}
	exec := []string{"devices:execute"}
	key := httpapi.UserOrKey
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/elevation-requests", Access: key, Scopes: read, Handle: h.list},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/active", Access: key, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.active)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/elevation-requests/{id}/respond", Access: key, Scopes: exec, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.respond)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/elevation-requests/{id}/revoke", Access: key, Scopes: exec, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.revoke)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/rules", Access: key, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.rules)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/rules", Access: key, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.createRule)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/rules/preview", Access: key, Scopes: write, Handle: h.preview},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/pam/rules/{id}", Access: key, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.updateRule)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/pam/rules/{id}", Access: key, Scopes: write, MFA: true, Handle: httpapi.Call(http.StatusOK, h.deleteRule)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/signer-groups", Access: key, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.signerGroups)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/pam/signer-groups", Access: key, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.createSignerGroup)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/pam/signer-groups/{id}", Access: key, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.updateSignerGroup)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/pam/signer-groups/{id}", Access: key, Scopes: write, MFA: true, Handle: httpapi.Call(http.StatusOK, h.deleteSignerGroup)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/pam/config", Access: key, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.config)},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/pam/config", Access: key, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.putConfig)},
	)
	h.SettingsRoutes(rt)
	h.SoftwarePolicyRoutes(rt)
}

// RequestList is the list answer.
type RequestList struct {
	Success    bool               `json:"success"`
	Requests   []Request          `json:"requests"`
	Pagination httpapi.Pagination `json:"pagination"`
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), Status: q.Get("status"), FlowType: q.Get("flowType"),
		DeviceID: q.Get("deviceId"), SiteID: q.Get("siteId"), From: q.Get("from"), To: q.Get("to"),
		Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, RequestList{Success: true, Requests: pg.Requests,
		Pagination: httpapi.Pagination{Page: pg.Page, Limit: pg.Limit, Total: pg.Total, NextCursor: pg.Next}})
	return nil
}

type activeList struct {
	Success bool      `json:"success"`
	Active  []Request `json:"active"`
}

func (h *Handler) active(r *http.Request) (activeList, error) {
	out, err := h.Svc.Active(r.Context())
	return activeList{Success: true, Active: out}, err
}

func (h *Handler) respond(r *http.Request, in RespondInput) (*Decided, error) {
	return h.Svc.Respond(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) revoke(r *http.Request, in RevokeInput) (*Decided, error) {
	return h.Svc.Revoke(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) rules(r *http.Request) (RuleList, error) {
	out, err := h.Svc.Rules(r.Context(), r.URL.Query().Get("orgId"))
	return RuleList{Success: true, Rules: out}, err
}

func (h *Handler) createRule(r *http.Request, in RuleInput) (RuleReply, error) {
	out, err := h.Svc.CreateRule(r.Context(), in)
	return RuleReply{Success: true, Rule: out}, err
}

func (h *Handler) updateRule(r *http.Request, in RuleInput) (RuleReply, error) {
	out, err := h.Svc.UpdateRule(r.Context(), r.PathValue("id"), in)
	return RuleReply{Success: true, Rule: out}, err
}

func (h *Handler) deleteRule(r *http.Request) (RuleReply, error) {
	out, err := h.Svc.DeleteRule(r.Context(), r.PathValue("id"))
	return RuleReply{Success: true, Rule: out}, err
}

func (h *Handler) signerGroups(r *http.Request) (SignerGroupList, error) {
	out, err := h.Svc.SignerGroups(r.Context(), r.URL.Query().Get("orgId"))
	return SignerGroupList{Success: true, SignerGroups: out}, err
}

func (h *Handler) createSignerGroup(r *http.Request, in SignerGroupInput) (SignerGroupList, error) {
	return oneSignerGroup(h.Svc.CreateSignerGroup(r.Context(), in))
}

func (h *Handler) updateSignerGroup(r *http.Request, in SignerGroupInput) (SignerGroupList, error) {
	return oneSignerGroup(h.Svc.UpdateSignerGroup(r.Context(), r.PathValue("id"), in))
}

func (h *Handler) deleteSignerGroup(r *http.Request) (SignerGroupList, error) {
	return oneSignerGroup(h.Svc.DeleteSignerGroup(r.Context(), r.PathValue("id")))
}

// oneSignerGroup is the spec's answer to a signer-group write: the list shape
// `{success, signerGroups: [<the group>]}` (docs/decisions.md#where-gale-follows-the-documents).
func oneSignerGroup(g *SignerGroup, err error) (SignerGroupList, error) {
	if err != nil {
		return SignerGroupList{}, err
	}
	return SignerGroupList{Success: true, SignerGroups: []SignerGroup{*g}}, nil
}

func (h *Handler) config(r *http.Request) (ConfigReply, error) {
	out, err := h.Svc.Config(r.Context(), r.URL.Query().Get("orgId"))
	return ConfigReply{Success: true, Config: out}, err
}

func (h *Handler) putConfig(r *http.Request, in ConfigInput) (ConfigReply, error) {
	out, err := h.Svc.PutConfig(r.Context(), in)
	return ConfigReply{Success: true, Config: out}, err
}
