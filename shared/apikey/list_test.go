package apikey_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/tests/fixture"
)

// listPage is one page of a list answer.
type listPage struct {
	Data []struct {
		ID string `json:"id"`
	}
	Pagination struct {
		Page, Limit, Total int
		NextCursor         string
	}
}

// TestListsReadOnlyThePage lists 120 API keys and 120 service principals of
// 20 organizations of one partner, 10 a page, as the partner's administrator:
// page 1, a deep page by number and every page by cursor each make the same
// few DynamoDB calls whatever the number of organizations (authentication,
// the index page, the page's rows, for keys their guards, and a Select COUNT
// of the index partition for the total), never reading a row of another page
// but the small index rows before a page asked by number; the pages join into
// the list, newest first.
func TestListsReadOnlyThePage(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	orgs := []string{w.A.ID, w.B.ID}
	for i := range 18 {
		orgs = append(orgs, fixture.Org(t, w.Env, w.PX.ID, fmt.Sprintf("Org %02d", i)).ID)
	}
	at := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	var keys, sps []string // oldest first
	for i := range 6 * len(orgs) {
		o := orgs[i%len(orgs)]
		stamp := clock.Format(at.Add(time.Duration(i/3) * time.Second)) // three rows a second: ties by id
		k, err := apikey.SeedKey(ctx, w.Env.Store, o, w.PX.ID, stamp)
		if err != nil {
			t.Fatal(err)
		}
		sp, err := apikey.SeedPrincipal(ctx, w.Env.Store, o, w.PX.ID, stamp)
		if err != nil {
			t.Fatal(err)
		}
		keys, sps = append(keys, k), append(sps, sp)
	}
	// Newest first, ties by id ascending.
	order := func(ids []string) []string {
		out := []string{}
		for s := len(ids)/3 - 1; s >= 0; s-- {
			out = append(out, fixture.Sorted(ids[3*s:3*s+3]...)...)
		}
		return out
	}
	const limit, total = 10, 120
	for _, c := range []struct {
		path  string
		want  []string
		calls int // authentication 1, the partner's organizations 1, index page 1, page rows 1, guards (keys) 1, count 1
	}{
		{keysURL, order(keys), 6},
		{spURL, order(sps), 5},
	} {
		get := func(q string) (listPage, fixture.Response) {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, c.path+"?"+q, fixture.PXAdmin, nil), http.StatusOK)
			var p listPage
			res.Decode(t, &p)
			if p.Pagination.Total != total || p.Pagination.Limit != limit {
				t.Fatalf("%s?%s: pagination %+v", c.path, q, p.Pagination)
			}
			return p, res
		}
		ids := func(p listPage) []string {
			out := []string{}
			for _, d := range p.Data {
				out = append(out, d.ID)
			}
			return out
		}
		var byCursor []string
		cursor := ""
		for n := 1; ; n++ {
			q := fmt.Sprintf("limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p, res := get(q)
			t.Logf("%s page %d by cursor: %d calls, %d items", c.path, n, res.DBCalls, res.DBItems)
			fixture.Budget(t, res, c.calls)
			// The index rows of the page (and one more), the page's rows (and
			// guards), the partition's index rows counted, the partner's
			// organizations, authentication.
			if max := (limit + 1) + 2*limit + total + len(orgs) + 5; res.DBItems > max {
				t.Fatalf("%s page %d by cursor read %d items, more than %d", c.path, n, res.DBItems, max)
			}
			if p.Pagination.Page != n {
				t.Fatalf("%s cursor page %d answered page %d", c.path, n, p.Pagination.Page)
			}
			byCursor = append(byCursor, ids(p)...)
			if cursor = p.Pagination.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(byCursor, c.want) {
			t.Fatalf("%s by cursor:\n %v\nwant\n %v", c.path, byCursor, c.want)
		}
		for _, n := range []int{1, 11} {
			p, res := get(fmt.Sprintf("limit=%d&page=%d", limit, n))
			t.Logf("%s page %d by number: %d calls, %d items", c.path, n, res.DBCalls, res.DBItems)
			fixture.Budget(t, res, c.calls)
			// By number, the index is read from its start to the page's end.
			if max := (n*limit + 1) + 2*limit + total + len(orgs) + 5; res.DBItems > max {
				t.Fatalf("%s page %d read %d items, more than %d", c.path, n, res.DBItems, max)
			}
			if !slices.Equal(ids(p), c.want[(n-1)*limit:n*limit]) {
				t.Fatalf("%s page %d: %v", c.path, n, ids(p))
			}
		}
	}
}
