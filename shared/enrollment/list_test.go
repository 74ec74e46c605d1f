package enrollment_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListReadsOnlyThePage lists 120 enrollment keys of 20 organizations of
// one partner (every other one expired), 10 a page, as the partner's
// administrator, with and without the expired filter: page 1, a deep page by
// number and every page by cursor each make the same few DynamoDB calls
// whatever the number of organizations (authentication, the index page, the
// page's keys, and a count of the index partition for the total), never
// reading a key of another page; the pages join into the list, newest first.
func TestListReadsOnlyThePage(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	orgs := []string{w.A.ID, w.B.ID}
	for i := range 18 {
		orgs = append(orgs, fixture.Org(t, w.Env, w.PX.ID, fmt.Sprintf("Org %02d", i)).ID)
	}
	now := w.Env.Clock.Now()
	var all, live, expired []string // oldest first
	for i := range 6 * len(orgs) {
		created := now.Add(-time.Duration(1000-i) * time.Minute)
		expires := now.Add(time.Hour)
		if i%2 == 1 {
			expires = now.Add(-time.Duration(i+1) * time.Second) // expired, not yet purged
		}
		id, err := enrollment.SeedKey(ctx, w.Env.Store, orgs[i%len(orgs)], w.PX.ID, clock.Format(created), clock.Format(expires))
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, id)
		if i%2 == 1 {
			expired = append(expired, id)
		} else {
			live = append(live, id)
		}
	}
	const limit = 10
	type page struct {
		Data []struct {
			ID string `json:"id"`
		}
		Pagination struct {
			Page, Limit, Total int
			NextCursor         string
		}
	}
	for _, c := range []struct {
		query string
		want  []string
		calls int
	}{
		// Authentication 1, the partner's organizations 1, index page 1, the
		// page's keys 1, count 1; a
		// filtered page's index rows take a second Query when the filter drops
		// some of the first one's.
		{"", all, 5}, {"expired=true&", expired, 6}, {"expired=false&", live, 6},
	} {
		slices.Reverse(c.want)
		get := func(q string) (page, fixture.Response) {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"?"+c.query+q, fixture.PXAdmin, nil), http.StatusOK)
			var p page
			res.Decode(t, &p)
			if p.Pagination.Total != len(c.want) || p.Pagination.Limit != limit {
				t.Fatalf("?%s%s: pagination %+v, want total %d", c.query, q, p.Pagination, len(c.want))
			}
			fixture.Budget(t, res, c.calls)
			return p, res
		}
		var byCursor []string
		cursor := ""
		for n := 1; ; n++ {
			q := fmt.Sprintf("limit=%d", limit)
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			p, res := get(q)
			t.Logf("?%s page %d by cursor: %d calls, %d items", c.query, n, res.DBCalls, res.DBItems)
			// The page's index rows (once the filter dropped some, a read asks
			// for 256 small index rows at a time), its keys, the partition's
			// index rows counted, authentication: never a key of another page.
			index := limit + 1
			if c.query != "" {
				index = 120
			}
			if max := index + limit + 120 + 20 + 5; res.DBItems > max { // + the partner's 20 organizations
				t.Fatalf("?%s page %d by cursor read %d items, more than %d", c.query, n, res.DBItems, max)
			}
			if p.Pagination.Page != n {
				t.Fatalf("?%s cursor page %d answered page %d", c.query, n, p.Pagination.Page)
			}
			for _, d := range p.Data {
				byCursor = append(byCursor, d.ID)
			}
			if cursor = p.Pagination.NextCursor; cursor == "" {
				break
			}
		}
		if !slices.Equal(byCursor, c.want) {
			t.Fatalf("?%s by cursor:\n %v\nwant\n %v", c.query, byCursor, c.want)
		}
		last := (len(c.want) + limit - 1) / limit
		for _, n := range []int{1, last} {
			p, res := get(fmt.Sprintf("limit=%d&page=%d", limit, n))
			t.Logf("?%s page %d by number: %d calls, %d items", c.query, n, res.DBCalls, res.DBItems)
			var got []string
			for _, d := range p.Data {
				got = append(got, d.ID)
			}
			if !slices.Equal(got, c.want[(n-1)*limit:min(n*limit, len(c.want))]) {
				t.Fatalf("?%s page %d: %v", c.query, n, got)
			}
		}
	}
}
