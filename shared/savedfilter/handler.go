package savedfilter

import (
	"net/http"
	"strconv"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves /api/v1/filters. Every route accepts a bearer JWT or an
// X-API-Key (the key wins): reads and previews need devices:read; writes need
// devices:write, a user session and MFA, so a key (which never satisfies MFA)
// is refused 403 `MFA required` on them.
//
// What each route reads and writes after authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go;
// "orgs" is the number of organizations the caller reaches, "pages" the 1 MB
// pages of an organization's devices):
//
//	route                       org caller                    partner / system caller
//	GET    /filters             index Query + BatchGetItem of the filters (per 100; none when empty); + Select COUNT for a total a page did not reach; with orgs selected the count reads the partition's index rows; system: + organization list, one Query (and count) per partition
//	POST   /filters             GetItem org, transaction (filter, audit)
//	GET    /filters/:id         GetItem                       GSI1 Query
//	PATCH  /filters/:id         read as GET, transaction (filter CAS on version, audit)
//	DELETE /filters/:id         read as GET, transaction (filter CAS on version, audit)
//	POST   /filters/preview     pages (+ software) + audit    organization list + per org: pages (+ software); + audit
//	POST   /filters/:id/preview read as GET + the preview's
//	GET    /filters/fields      none (the engine's catalogue, in memory)
//
// A partner caller with orgAccess selected reads its organizations with one
// BatchGetItem; an organization caller reads no organization list.
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	read, write := []string{"devices:read"}, []string{"devices:write"}
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/filters", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.list)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/filters", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusCreated, h.create)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/filters/fields", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.fields)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/filters/preview", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.CallBody(http.StatusOK, h.preview)},
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/filters/{id}", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.get)},
		httpapi.Route{Method: http.MethodPatch, Path: "/api/v1/filters/{id}", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.CallBody(http.StatusOK, h.patch)},
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/filters/{id}", Access: httpapi.UserOrKey, Scopes: write, MFA: true, Handle: httpapi.Call(http.StatusOK, h.delete)},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/filters/{id}/preview", Access: httpapi.UserOrKey, Scopes: read, Handle: httpapi.Call(http.StatusOK, h.previewSaved)},
	)
}

// list is the list answer: {data, total}, and nextCursor when a page
// (limit, page or cursor) was asked for and more follow.
type list struct {
	Data       []Filter `json:"data"`
	Total      int      `json:"total"`
	NextCursor string   `json:"nextCursor,omitempty"`
}

// DefaultLimit is the page size of a list that names page or cursor without
// limit; a list that names none of them is every filter (the spec's answer).
const DefaultLimit = 50

func (h *Handler) list(r *http.Request) (list, error) {
	page, err := httpapi.ParseWindow(r, 0, 100)
	if err != nil {
		return list{}, err
	}
	q := r.URL.Query()
	if page.Limit == 0 && (q.Has("page") || page.Cursor != "") {
		page.Limit = DefaultLimit
	}
	pg, err := h.Svc.List(r.Context(), ListFilter{Search: q.Get("search"), Page: page.Page, Limit: page.Limit, Cursor: page.Cursor})
	if err != nil {
		return list{}, err
	}
	return list{Data: pg.Items, Total: pg.Total, NextCursor: pg.Next}, nil
}

func (h *Handler) create(r *http.Request, in CreateInput) (*Filter, error) {
	return h.Svc.Create(r.Context(), in)
}

func (h *Handler) fields(r *http.Request) (Fields, error) {
	return h.Svc.Fields(r.Context())
}

func (h *Handler) get(r *http.Request) (*Filter, error) {
	return h.Svc.Get(r.Context(), r.PathValue("id"))
}

func (h *Handler) patch(r *http.Request, in PatchInput) (*Filter, error) {
	return h.Svc.Patch(r.Context(), r.PathValue("id"), in)
}

func (h *Handler) delete(r *http.Request) (*Filter, error) {
	return h.Svc.Delete(r.Context(), r.PathValue("id"))
}

// previewAnswer wraps a preview: {data: {...}}.
type previewAnswer struct {
	Data *Preview `json:"data"`
}

func (h *Handler) preview(r *http.Request, in PreviewInput) (previewAnswer, error) {
	p, err := h.Svc.Preview(r.Context(), in)
	if err != nil {
		return previewAnswer{}, err
	}
	return previewAnswer{Data: p}, nil
}

func (h *Handler) previewSaved(r *http.Request) (previewAnswer, error) {
	if err := httpapi.EmptyBody(r); err != nil {
		return previewAnswer{}, err
	}
	limit := DefaultPreview
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return previewAnswer{}, fault.Invalid("limit", "must be an integer")
		}
		limit = n
	}
	p, err := h.Svc.PreviewSaved(r.Context(), r.PathValue("id"), limit)
	if err != nil {
		return previewAnswer{}, err
	}
	return previewAnswer{Data: p}, nil
}
