package script_test

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

type listed struct {
	Data []struct {
		ID, Name string
	}
	Pagination struct {
		Page, Limit, Total int
		NextCursor         string
	}
}

// TestListReadsOnePage lists a partner's scripts over two organizations, by
// page number and by cursor: name order (case-insensitively, then id), the
// total, a rename that moves a script and a delete that removes it, each page
// within its calls: authentication, the index page, the page's scripts, and a
// Select COUNT when the page stops before the end.
func TestListReadsOnePage(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "scripts")
	type sc struct{ id, name string }
	var all []sc
	for i, name := range []string{"beta", "Alpha", "gamma", "alpha", "Delta", "epsilon", "Beta"} {
		org := w.A.ID
		if i%3 == 2 {
			org = w.B.ID
		}
		res := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"orgId": org, "name": name,
			"language": "bash", "content": "ls"}), http.StatusCreated).JSON(t)
		all = append(all, sc{res["id"].(string), name})
	}
	order := func() []string {
		slices.SortFunc(all, func(a, b sc) int {
			return cmp.Or(strings.Compare(strings.ToLower(a.name), strings.ToLower(b.name)), strings.Compare(a.id, b.id))
		})
		var ids []string
		for _, s := range all {
			ids = append(ids, s.id)
		}
		return ids
	}
	check := func(t *testing.T) {
		t.Helper()
		exp := order()
		var byNumber, byCursor []string
		for page := 1; ; page++ {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, fmt.Sprintf("%s?limit=3&page=%d", base, page), fixture.PXAdmin, nil), http.StatusOK)
			fixture.Budget(t, res, 5)
			var l listed
			res.Decode(t, &l)
			if l.Pagination.Total != len(exp) || l.Pagination.Page != page {
				t.Fatalf("page %d: %+v, want total %d", page, l.Pagination, len(exp))
			}
			if len(l.Data) == 0 {
				break
			}
			for _, d := range l.Data {
				byNumber = append(byNumber, d.ID)
			}
		}
		for cursor := ""; ; {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"?limit=3&cursor="+url.QueryEscape(cursor), fixture.PXAdmin, nil), http.StatusOK)
			fixture.Budget(t, res, 5)
			var l listed
			res.Decode(t, &l)
			for _, d := range l.Data {
				byCursor = append(byCursor, d.ID)
			}
			if cursor = l.Pagination.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(byNumber, exp) || !slices.Equal(byCursor, exp) {
			t.Fatalf("by number %v\nby cursor %v\nwant      %v", byNumber, byCursor, exp)
		}
	}
	check(t)
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+all[0].id, fixture.PXAdmin, map[string]any{"name": "zeta"}), http.StatusOK)
	all[0].name = "zeta"
	fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/"+all[1].id, fixture.PXAdmin, nil), http.StatusOK)
	all = append(all[:1], all[2:]...)
	check(t)
	// One organization's scripts, for its administrator and by orgId.
	var l listed
	fixture.Expect(t, w.Call(t, http.MethodGet, base+"?limit=1", fixture.BAdmin, nil), http.StatusOK).Decode(t, &l)
	inB := l.Pagination.Total
	fixture.Expect(t, w.Call(t, http.MethodGet, base+"?limit=1&orgId="+w.B.ID, fixture.PXAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != inB || inB == 0 {
		t.Fatalf("organization B: %d scripts for its admin, %d by orgId", inB, l.Pagination.Total)
	}
}
