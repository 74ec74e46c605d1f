package webhook

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/webhooks (bearer JWT; organization, partner or system
// scope; reads organizations:read, writes organizations:write + MFA).
//
// What each route reads and writes besides authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go):
//
//	route                                     MFA  what
//	GET    /webhooks                               others: organization GetItem; list index Query, BatchGetItem (+ Select COUNT when the page stops short)
//	GET    /webhooks/event-types                   the catalogue (shared/webhook/eventtype), from code
//	POST   /webhooks                          yes  organization GetItem; transaction (webhook, audit)
//	GET    /webhooks/:id                           webhook GetItem (organization callers) or GSI1 Query
//	PATCH  /webhooks/:id                      yes  webhook read; transaction (CAS on updatedAt, audit)
//	DELETE /webhooks/:id                      yes  read; transaction (hide, audit); deliveries Query; a transaction per 100 deliveries; row delete
//	GET    /webhooks/:id/deliveries                webhook read; deliveries Query (one page covers page*limit up to 500)
//	POST   /webhooks/:id/test                 yes  webhook read; transaction (delivery, count, audit); SendMessage
//	POST   /webhooks/:id/retry/:deliveryId    yes  webhook read; delivery GetItem; transaction; SendMessage
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/webhooks", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/webhooks", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/webhooks/event-types", Access: httpapi.User, Handle: h.eventTypes},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/webhooks/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/webhooks/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/webhooks/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.delete)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/webhooks/{id}/deliveries", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.deliveries)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/test", Access: httpapi.User, MFA: true, Handle: h.test},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/webhooks/{id}/retry/{deliveryId}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusAccepted, h.retry)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Webhook], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Webhook]{}, err
	}
	q := r.URL.Query()
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: q.Get("orgId"), Status: q.Get("status"),
		Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return httpapi.List[Webhook]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) eventTypes(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return err
	}
	types, err := h.Svc.EventTypes(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.NewList(types, page))
	return nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Webhook, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Detail, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Webhook, error) {
	return h.Svc.Update(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) delete(r *http.Request) (map[string]bool, error) {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return nil, err
	}
	return map[string]bool{"success": true}, nil
}

func (h *Handler) deliveries(r *http.Request) (httpapi.List[Delivery], error) {
	page, err := httpapi.ParsePage(r, 50, 100)
	if err != nil {
		return httpapi.List[Delivery]{}, err
	}
	l, err := h.Svc.Deliveries(r.Context(), r.PathValue("id"), r.URL.Query().Get("status"), page.Page, page.Limit)
	if err != nil {
		return httpapi.List[Delivery]{}, err
	}
	return httpapi.List[Delivery]{Data: l.Data,
		Pagination: httpapi.Pagination{Page: page.Page, Limit: page.Limit, Total: l.Total}}, nil
}

func (h *Handler) test(w http.ResponseWriter, r *http.Request) error {
	body, err := httpapi.ReadJSON(r, httpapi.MaxBody)
	if err != nil {
		return err
	}
	var in TestInput
	if len(body) > 0 {
		if err := httpapi.DecodeBytes(body, &in); err != nil {
			return err
		}
	}
	q, err := h.Svc.Test(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusAccepted, q)
	return nil
}

func (h *Handler) retry(r *http.Request) (*Queued, error) {
	return h.Svc.Retry(r.Context(), r.PathValue("id"), r.PathValue("deliveryId"))
}
