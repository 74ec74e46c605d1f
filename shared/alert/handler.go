package alert

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/alerts. Reads accept a bearer JWT or an API key with
// alerts:read; create, acknowledge and resolve need a user session.
//
// What each route reads and writes after authentication (budgets:
// docs/budgets.md, from tests/fixture/budgets.go): the list reads the index
// page and the page's alerts (BatchGetItem; none for an empty page), the
// organization when an orgId is given (GetItem), and a Query counting the
// partition for a total the page did not reach; a system caller without orgId
// reads the organizations, one Query per partition (each partner's GSI3, each
// partnerless organization's GSI4), the page's alerts (BatchGetItem) and a
// count per partition for a total the page did not reach (alerts keep no
// counter), flat in the organizations; create reads the organization and the
// device when named, then writes one transaction with audit and outbox event;
// get reads the alert; acknowledge and resolve read it and write one
// transaction.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read := []string{"alerts:read"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/alerts", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts", Access: httpapi.User, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/alerts/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts/{id}/acknowledge", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.acknowledge)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts/{id}/resolve", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.resolve)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Alert], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Alert]{}, err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), Status: q.Get("status"), Severity: q.Get("severity"),
		Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return httpapi.List[Alert]{}, err
	}
	return httpapi.List[Alert]{Data: pg.Alerts,
		Pagination: httpapi.Pagination{Page: pg.Page, Limit: pg.Limit, Total: pg.Total, NextCursor: pg.Next}}, nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Alert, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Alert, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) acknowledge(r *http.Request) (*Alert, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Acknowledge(r.Context(), r.PathValue("id"))
}

func (h *Handler) resolve(r *http.Request) (*Alert, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return nil, err
	}
	return h.Svc.Resolve(r.Context(), r.PathValue("id"))
}
