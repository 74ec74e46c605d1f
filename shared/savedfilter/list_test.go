package savedfilter_test

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListPages lists a partner's filters over two organizations: without a
// page every filter (the spec's answer), with limit by page number and by
// cursor, newest first (ties by id), with the total; search counts what it
// keeps and takes no cursor.
func TestListPages(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	type flt struct{ id, at, name string }
	var all []flt
	for i := range 7 {
		org := w.A.ID
		if i%3 == 2 {
			org = w.B.ID
		}
		res := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"orgId": org, "name": fmt.Sprintf("filter %d", i),
			"conditions": group(cond("osType", "equals", "windows"))}), http.StatusCreated).JSON(t)
		all = append(all, flt{res["id"].(string), res["createdAt"].(string), res["name"].(string)})
		if i%2 == 1 { // pairs share a createdAt: ties fall to the id
			w.Env.Clock.Advance(time.Second)
		}
	}
	slices.SortFunc(all, func(a, b flt) int { return cmp.Or(strings.Compare(b.at, a.at), strings.Compare(a.id, b.id)) })
	var exp []string
	for _, f := range all {
		exp = append(exp, f.id)
	}
	type listed struct {
		Data []struct {
			ID string
		}
		Total      int
		NextCursor string
	}
	get := func(t *testing.T, q string) listed {
		t.Helper()
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base+q, fixture.PXAdmin, nil), http.StatusOK)
		fixture.Budget(t, res, 5) // authentication, the partner's organizations, index page, filters, count
		var l listed
		res.Decode(t, &l)
		return l
	}
	ids := func(l listed) []string {
		var out []string
		for _, d := range l.Data {
			out = append(out, d.ID)
		}
		return out
	}
	if l := get(t, ""); !slices.Equal(ids(l), exp) || l.Total != 7 || l.NextCursor != "" {
		t.Fatalf("unpaged: %v total %d next %q, want %v", ids(l), l.Total, l.NextCursor, exp)
	}
	var byNumber, byCursor []string
	for page := 1; page <= 3; page++ {
		l := get(t, fmt.Sprintf("?limit=3&page=%d", page))
		if l.Total != 7 {
			t.Fatalf("page %d: total %d", page, l.Total)
		}
		byNumber = append(byNumber, ids(l)...)
	}
	for cursor := ""; ; {
		l := get(t, "?limit=3&cursor="+url.QueryEscape(cursor))
		byCursor = append(byCursor, ids(l)...)
		if cursor = l.NextCursor; cursor == "" {
			break
		}
	}
	if !slices.Equal(byNumber, exp) || !slices.Equal(byCursor, exp) {
		t.Fatalf("by number %v\nby cursor %v\nwant      %v", byNumber, byCursor, exp)
	}
	if l := get(t, "?search=FILTER+1&limit=1"); len(l.Data) != 1 || l.Total != 1 || l.NextCursor != "" {
		t.Fatalf("search: %+v", l)
	}
	next := get(t, "?limit=2").NextCursor
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"?search=x&cursor="+url.QueryEscape(next), fixture.PXAdmin, nil), "cursor")
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"?limit=0", fixture.PXAdmin, nil), "limit")
}
