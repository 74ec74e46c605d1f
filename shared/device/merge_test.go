package device_test

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// TestSystemListMergesThePartitions pages a system caller's devices without
// orgId: every partner's GSI3 partition and the GSI4 partition of each
// organization without a partner, merged by sort key. Page 1, a deep page by
// number and every page by cursor give the spec's order and the total, each in
// authentication (1) + the organizations (1) + one Query per partition + the
// page's devices (1, none for an empty page) calls: the total is the
// organizations' counters, already read.
func TestSystemListMergesThePartitions(t *testing.T) {
	for _, c := range []struct {
		name     string
		partners []int // organizations of each partner
		orgless  int   // organizations without a partner
	}{
		{"two partners", []int{3, 2}, 0},
		{"a partner and an organization without one", []int{2}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			env := testenv.New(t)
			var orgs []string
			for i, n := range c.partners {
				p := fixture.Partner(t, env, fmt.Sprintf("P%d", i))
				orgs = append(orgs, seedPartner(t, env, p.ID, n, 3+i)...)
			}
			if c.orgless > 0 {
				orgs = append(orgs, seedPartner(t, env, "", c.orgless, 2)...)
			}
			sys := fixture.User(t, env, fixture.Member{Scope: authz.ScopeSystem, RoleID: role.SystemAdminID, MFA: true, TOTP: true})
			api := fixture.API(t, env, "devices")
			exp := want(t, env, orgs...)
			partitions := len(c.partners) + c.orgless
			calls := 1 + 1 + partitions + 1
			get := func(t *testing.T, query string) listed {
				t.Helper()
				res := fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Path: base + "?" + query, Token: sys.Token}), http.StatusOK)
				var l listed
				res.Decode(t, &l)
				want := calls
				if len(l.Data) == 0 {
					want--
				}
				if res.DBCalls != want {
					t.Fatalf("?%s: %d DynamoDB calls, want %d", query, res.DBCalls, want)
				}
				if l.Pagination.Total != len(exp) {
					t.Fatalf("?%s: total %d, want %d", query, l.Pagination.Total, len(exp))
				}
				return l
			}
			var byNumber []string
			for page := 1; ; page++ {
				l := get(t, fmt.Sprintf("limit=4&page=%d", page))
				if l.Pagination.Page != page {
					t.Fatalf("page %d: pagination %+v", page, l.Pagination)
				}
				if len(l.Data) == 0 {
					break
				}
				byNumber = append(byNumber, ids(l)...)
			}
			if !slices.Equal(byNumber, exp) {
				t.Fatalf("by page number\n got %v\nwant %v", byNumber, exp)
			}
			var byCursor []string
			cursor, page := "", 1
			for {
				q := "limit=4"
				if cursor != "" {
					q += "&page=99&cursor=" + url.QueryEscape(cursor)
				}
				l := get(t, q)
				if l.Pagination.Page != page {
					t.Fatalf("cursor page %d: pagination %+v", page, l.Pagination)
				}
				byCursor = append(byCursor, ids(l)...)
				if cursor = l.Pagination.NextCursor; cursor == "" {
					break
				}
				page++
			}
			if !slices.Equal(byCursor, exp) {
				t.Fatalf("by cursor\n got %v\nwant %v", byCursor, exp)
			}
			// A partner's cursor does not open the system list, nor the
			// system list's a partner's.
			fixture.Invalid(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Token: sys.Token,
				Path: base + "?limit=2&orgId=" + orgs[0] + "&cursor=" + url.QueryEscape(get(t, "limit=2").Pagination.NextCursor)}), "cursor")
		})
	}
}
