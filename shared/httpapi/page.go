package httpapi

import (
	"net/http"
	"strconv"

	"github.com/gale-rmm/gale/shared/fault"
)

// Page is the page/limit of a list request, and its cursor on the lists that
// take one (ParseWindow).
type Page struct {
	Page, Limit int
	Cursor      string
}

// Pagination is the list envelope's pagination object.
type Pagination struct {
	Page  int `json:"page"`
	Limit int `json:"limit"`
	Total int `json:"total"`
	// NextCursor, on the lists that take a cursor, fetches the following page
	// (absent on the last page).
	NextCursor string `json:"nextCursor,omitempty"`
}

// List is the list envelope {data, pagination} of the OpenAPI document.
type List[T any] struct {
	Data       []T        `json:"data"`
	Pagination Pagination `json:"pagination"`
}

// ParsePage reads page (from 1) and limit (default def, at most max) from the query.
func ParsePage(r *http.Request, def, max int) (Page, error) {
	q := r.URL.Query()
	f := fault.Fields{}
	p := Page{Page: 1, Limit: def}
	if v := q.Get("page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			f.Add("page", "must be a whole number of at least 1")
		} else {
			p.Page = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max {
			f.Addf("limit", "must be a whole number from 1 to %d", max)
		} else {
			p.Limit = n
		}
	}
	return p, f.Err()
}

// ParseWindow reads page, limit (default def, at most max) and the opaque
// cursor of a list that takes one; a cursor the list did not hand out is
// refused by the list (400 naming cursor).
func ParseWindow(r *http.Request, def, max int) (Page, error) {
	p, err := ParsePage(r, def, max)
	if err != nil {
		return p, err
	}
	p.Cursor, err = ParseCursor(r)
	return p, err
}

// MaxCursor bounds the cursor query parameter of the lists that take one.
const MaxCursor = 2048

// ParseCursor reads the opaque cursor query parameter ("" when absent); a
// cursor the list did not hand out is refused by the list (400 naming cursor).
func ParseCursor(r *http.Request) (string, error) {
	c := r.URL.Query().Get("cursor")
	if len(c) > MaxCursor {
		return "", fault.Invalid("cursor", "is not a valid cursor for this list")
	}
	return c, nil
}

// NewList slices all to the requested page and wraps it in the envelope.
func NewList[T any](all []T, p Page) List[T] {
	total := len(all)
	data := []T{}
	// Compare pages, not offsets: (page-1)*limit overflows for a huge page.
	if p.Limit > 0 && p.Page >= 1 && p.Page-1 < (total+p.Limit-1)/p.Limit {
		start := (p.Page - 1) * p.Limit
		data = all[start:min(start+p.Limit, total)]
	}
	return List[T]{Data: data, Pagination: Pagination{Page: p.Page, Limit: p.Limit, Total: total}}
}
