package script

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/scripts. Reads accept a bearer JWT or an API key
// with scripts:read; writes need a user session and MFA.
//
// DynamoDB calls after authentication: list 2 (the index page, BatchGetItem
// of the page's scripts; none for an empty page), +1 with orgId (the
// organization), +1 for a total the page did not reach (Select COUNT; for a
// partner caller with selected organizations a Query of the partition's index
// rows); a system caller without orgId 1 (the organizations) + one Query per
// partition (each partner's GSI3, each partnerless organization's GSI4) +
// BatchGetItem, +1 Query per partition for a total the page did not reach.
// GET /scripts takes page and limit, or cursor (pagination.nextCursor of the
// page before). Create 2 (GetItem
// organization, transaction); get 1; patch and delete 2.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read := []string{"scripts:read"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/scripts", Access: httpapi.UserOrKey, Scopes: read, Handle: h.list},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/scripts", Access: httpapi.User, MFA: true, Handle: h.create},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/scripts/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: h.get},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/scripts/{id}", Access: httpapi.User, MFA: true, Handle: h.patch},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/scripts/{id}", Access: httpapi.User, MFA: true, Handle: h.delete},
	)
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParseWindow(r, 50, 100)
	if err != nil {
		return err
	}
	pg, err := h.Svc.List(r.Context(), ListFilter{OrgID: r.URL.Query().Get("orgId"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, pg.Envelope())
	return nil
}

func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	sc, err := h.Svc.Create(r.Context(), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, sc)
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	sc, err := h.Svc.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, sc)
	return nil
}

func (h *Handler) patch(w http.ResponseWriter, r *http.Request) error {
	var in PatchInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	sc, err := h.Svc.Patch(r.Context(), r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, sc)
	return nil
}

type deleted struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	if err := h.Svc.Delete(r.Context(), r.PathValue("id")); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, deleted{Success: true, Message: "Script deleted successfully"})
	return nil
}
