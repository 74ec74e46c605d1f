package search

import (
	"net/http"
	"strconv"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Handler serves GET /api/v1/search (bearer JWT or API key). After
// authentication it reads one Query per readable category per reachable
// organization, plus the organization list for partner and system callers
// (budgets: docs/budgets.md, from tests/fixture/budgets.go).
type Handler struct{ Svc *Service }

// Routes registers the group.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/search", Access: httpapi.UserOrKey, Handle: httpapi.Call(http.StatusOK, h.search)})
}

type answer struct {
	Results []Result `json:"results"`
}

func (h *Handler) search(r *http.Request) (answer, error) {
	q := r.URL.Query()
	limit := DefaultLimit
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return answer{}, fault.Invalid("limit", "must be an integer")
		}
		limit = n
	}
	res, err := h.Svc.Search(r.Context(), q.Get("q"), limit)
	if err != nil {
		return answer{}, err
	}
	return answer{Results: res}, nil
}
