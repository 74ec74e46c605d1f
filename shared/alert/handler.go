package alert

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/alerts. Reads accept a bearer JWT or an API key with
// alerts:read; create, acknowledge and resolve need a user session.
//
// DynamoDB calls after authentication: list 2 (the index page, BatchGetItem
// of the page's alerts; none for an empty page) +1 when an orgId is given
// (the organization, GetItem) +1 for a total the page did not reach (a Query
// counting the partition); a system caller without orgId 1 (the
// organizations) + one Query per partition (each partner's GSI3, each
// partnerless organization's GSI4) + BatchGetItem, +1 Query per partition for
// a total the page did not reach; create 2-3 (GetItem
// organization, GetItem device when named, transaction with audit and
// outbox event); get 1; acknowledge and resolve 2 (read, transaction).
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read := []string{"alerts:read"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/alerts", Access: httpapi.UserOrKey, Scopes: read, Handle: h.list},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts", Access: httpapi.User, Handle: h.create},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/alerts/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: h.get},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts/{id}/acknowledge", Access: httpapi.User, Handle: h.acknowledge},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/alerts/{id}/resolve", Access: httpapi.User, Handle: h.resolve},
	)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), Status: q.Get("status"), Severity: q.Get("severity"),
		Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.List[Alert]{Data: pg.Alerts,
		Pagination: httpapi.Pagination{Page: pg.Page, Limit: pg.Limit, Total: pg.Total, NextCursor: pg.Next}})
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	a, err := h.Svc.Create(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, a)
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	a, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) acknowledge(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.EmptyBody(r); err != nil {
		return err
	}
	a, err := h.Svc.Acknowledge(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *Handler) resolve(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.EmptyBody(r); err != nil {
		return err
	}
	a, err := h.Svc.Resolve(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
	return nil
}
