package enrollment

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/enrollment-keys. Every route needs a user session
// (API keys are refused); writes need MFA.
//
// What each route reads and writes after authentication (one BatchGetItem of
// profile, session and membership, one GetItem of a custom role; a system role
// is resolved from code); budgets: docs/budgets.md, from tests/fixture/budgets.go:
//
//	route                                   MFA  what
//	GET    /enrollment-keys                      Query of the list index page (GSI4 organization, GSI3 partner; site restriction, reach and expired applied to the index rows), BatchGetItem of the page's keys; + a Query counting the partition when the page stops before the end (+1 GetItem with orgId); system without orgId: + the organizations, the partitions merged
//	POST   /enrollment-keys                 yes  GetItem organization, transaction (key, hash guard, site check, audit)
//	GET    /enrollment-keys/:id                  GetItem (organization scope) or GSI1 query
//	POST   /enrollment-keys/:id/rotate      yes  read as GET, transaction (key CAS on hash, old guard, new guard, audit)
//	DELETE /enrollment-keys/:id             yes  read as GET, transaction (key, guard, audit)
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/enrollment-keys", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/enrollment-keys", Access: httpapi.User, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/enrollment-keys/{id}", Access: httpapi.User, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/enrollment-keys/{id}/rotate", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.rotate)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/enrollment-keys/{id}", Access: httpapi.User, MFA: true, Handle: httpapi.Call(http.StatusOK, h.delete)},
	)
}

func (h *Handler) list(r *http.Request) (httpapi.List[Key], error) {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return httpapi.List[Key]{}, err
	}
	q := r.URL.Query()
	f := ListFilter{OrgID: q.Get("orgId"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor}
	if v, ok := q["expired"]; ok {
		switch v[0] {
		case "true":
			t := true
			f.Expired = &t
		case "false":
			b := false
			f.Expired = &b
		default:
			return httpapi.List[Key]{}, invalid("expired", "must be true or false")
		}
	}
	pg, err := h.Svc.List(r.Context(), f)
	if err != nil {
		return httpapi.List[Key]{}, err
	}
	return pg.Envelope(), nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Issued, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) get(r *http.Request) (*Key, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) rotate(r *http.Request) (*Issued, error) {
	var in RotateInput
	if r.ContentLength != 0 {
		if err := httpapi.Decode(r, &in); err != nil {
			return nil, err
		}
	}
	k, err := h.Svc.Rotate(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return nil, err
	}
	return k, nil
}

// deleted is the DELETE answer.
type deleted struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func (h *Handler) delete(r *http.Request) (deleted, error) {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return deleted{}, err
	}
	return deleted{Success: true, Message: "Enrollment key deleted successfully"}, nil
}
