package device

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/devices (user sessions).
//
// What each route reads and writes after authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go; a
// custom role is one GetItem more, a system role is resolved from code):
//
//	route                              MFA  what
//	GET   /devices                          Query of the list index page (GSI4 organization, GSI3 partner; restriction applied to the index rows), BatchGetItem of the page's devices and their live rows (one per 50 devices); +1 for the total when the page stops before the end: the organization row (GetItem), the partner's organizations (GSI1 Query; selected: BatchGetItem), or, for a restricted caller (siteId, site or device-group restriction), a Query counting its index rows; system without orgId: 1 + the organizations (GSI2 Query) + one Query per partition (each partner's GSI3, each partnerless organization's GSI4; merged by sort key) + BatchGetItem, the total from the organizations' counters already read
//	GET   /devices/:id                      others: agent row GetItem; one Query of the device row and its live row; +1 Query of software chunks when it has software
//	PATCH /devices/:id                      read as GET, transaction (device CAS, group counts, agent row, audit, outbox: device.updated), outbox clear, GetItem of the result; +1 GetItem of the group joined (its reach)
//	POST  /devices/:id/decommission    yes  read as GET, transaction (device CAS, agent row, audit, live row, outbox), outbox clear after the SQS send; +1 GetItem of the live channel connection when the channel is configured, which it closes
//
// GET /devices takes page and limit, or cursor (pagination.nextCursor of the
// page before): the fast path for deep pages, reading only its own page.
//
// The two reads accept a bearer JWT or an X-API-Key with the devices:read scope
// (httpapi.UserOrKey); until the API-keys group plugs its authenticator into
// auth.Authenticator.Keys, a key is answered 401 `Invalid API key`. Writes need a
// user session.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/devices", Access: httpapi.UserOrKey, Scopes: []string{"devices:read"}, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/devices/{id}", Access: httpapi.UserOrKey, Scopes: []string{"devices:read"}, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/devices/{id}", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/devices/{id}/decommission", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.decommission)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Device], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Device]{}, err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), SiteID: q.Get("siteId"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return httpapi.List[Device]{}, err
	}
	return httpapi.List[Device]{Data: pg.Devices,
		Pagination: httpapi.Pagination{Page: pg.Page, Limit: pg.Limit, Total: pg.Total, NextCursor: pg.Next}}, nil
}

// detail is GET /devices/:id's answer: the device with its software list
// (lists leave software out).
type detail struct {
	*Device
	Software []Software `json:"software"`
}

func (h *Handler) get(r *http.Request) (*detail, error) {
	d, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return &detail{Device: d, Software: d.Software}, nil
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Device, error) {
	return h.Svc.Update(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) decommission(r *http.Request) (*Device, error) {
	return h.Svc.Decommission(r.Context(), r.PathValue("id"))
}
