package device_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

type listed struct {
	Data []struct {
		ID, OrgID, Hostname string
	}
	Pagination struct {
		Page, Limit, Total int
		NextCursor         string
	}
}

// want is the list order of the spec: hostname case-insensitively, then id.
func want(t *testing.T, env *testenv.Env, orgIDs ...string) []string {
	t.Helper()
	var all []device.Device
	for _, id := range orgIDs {
		ds, err := device.Store{St: env.Store}.List(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, ds...)
	}
	slices.SortFunc(all, func(a, b device.Device) int {
		if c := strings.Compare(strings.ToLower(a.Hostname), strings.ToLower(b.Hostname)); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	ids := []string{}
	for _, d := range all {
		ids = append(ids, d.ID)
	}
	return ids
}

func ids(l listed) []string {
	out := []string{}
	for _, d := range l.Data {
		out = append(out, d.ID)
	}
	return out
}

// TestListReadsOnePage pages a partner's devices over several organizations by
// page number and by cursor: both give the spec's order and total, each
// request within its call budget, and a cursor reads no more than its page.
func TestListReadsOnePage(t *testing.T) {
	env := testenv.New(t)
	p := fixture.Partner(t, env, "P")
	orgs := seedPartner(t, env, p.ID, 3, 9)
	other := fixture.Partner(t, env, "Q")
	seedPartner(t, env, other.ID, 2, 5) // another partner's devices never show
	admin := fixture.User(t, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	selected := fixture.User(t, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID,
		OrgAccess: authz.OrgAccessSelected, OrgIDs: []string{orgs[0], orgs[2]}, MFA: true, TOTP: true})
	api := fixture.API(t, env, "devices")
	get := func(t *testing.T, tok, query string, budget int) (listed, fixture.Response) {
		t.Helper()
		res := fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Path: base + "?" + query, Token: tok}), http.StatusOK)
		fixture.Budget(t, res, budget)
		var l listed
		res.Decode(t, &l)
		return l, res
	}
	for _, c := range []struct {
		name   string
		tok    string
		orgs   []string
		query  string
		budget int
	}{
		{"partner", admin.Token, orgs, "", 5},
		{"selected organizations", selected.Token, []string{orgs[0], orgs[2]}, "", 6},
		{"one organization", admin.Token, []string{orgs[1]}, "orgId=" + orgs[1] + "&", 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			exp := want(t, env, c.orgs...)
			// By page number: authentication (2; 3 with selected organizations),
			// the index page, the devices, the organizations' counters when the
			// read stops before the end (one GetItem, Query or BatchGetItem).
			var byNumber []string
			for page := 1; ; page++ {
				l, _ := get(t, c.tok, fmt.Sprintf("%slimit=4&page=%d", c.query, page), c.budget)
				if l.Pagination.Total != len(exp) || l.Pagination.Page != page || l.Pagination.Limit != 4 {
					t.Fatalf("page %d: pagination %+v, want total %d", page, l.Pagination, len(exp))
				}
				if len(l.Data) == 0 {
					break
				}
				byNumber = append(byNumber, ids(l)...)
			}
			if !slices.Equal(byNumber, exp) {
				t.Fatalf("by page number\n got %v\nwant %v", byNumber, exp)
			}
			// By cursor: each page reads at most its own rows (and one more)
			// from the index, whatever its depth.
			var byCursor []string
			cursor, page := "", 1
			for {
				q := c.query + "limit=4"
				if cursor != "" {
					q += "&page=99&cursor=" + url.QueryEscape(cursor)
				}
				l, res := get(t, c.tok, q, c.budget)
				if l.Pagination.Page != page || l.Pagination.Total != len(exp) {
					t.Fatalf("cursor page %d: pagination %+v", page, l.Pagination)
				}
				if c.name == "partner" || c.name == "one organization" {
					if res.DBItems > 5+4+3+3 { // index rows (the page and one more), devices, counters, the session's reads
						t.Fatalf("cursor page %d read %d items", page, res.DBItems)
					}
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
		})
	}
	// A cursor is bound to its list: another partition's, or a forged one, is 400.
	l, _ := get(t, admin.Token, "limit=2", 5)
	fixture.Invalid(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Token: admin.Token,
		Path: base + "?limit=2&orgId=" + orgs[0] + "&cursor=" + url.QueryEscape(l.Pagination.NextCursor)}), "cursor")
	for _, bad := range []string{"x", "%7B%7D", strings.Repeat("a", 3000)} {
		fixture.Invalid(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Token: admin.Token, Path: base + "?cursor=" + bad}), "cursor")
	}
	// The other partner's cursor does not open this partner's list.
	q := fixture.User(t, env, fixture.Member{Scope: authz.ScopePartner, PartnerID: other.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	fixture.Invalid(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Token: q.Token,
		Path: base + "?limit=2&cursor=" + url.QueryEscape(l.Pagination.NextCursor)}), "cursor")
	_ = store.GSI3
}

// TestListTotalsOfRestrictedCallers: a site filter, a site-restricted caller
// and a page that stops before the end still answer the total of what the
// caller may see.
func TestListTotalsOfRestrictedCallers(t *testing.T) {
	w := newWorld(t)
	var a1 []string
	for i := range 3 {
		id, _ := w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, fmt.Sprintf("Site1-%d", i))
		a1 = append(a1, id)
	}
	w.Device(t, fixture.AAdmin, w.A.ID, w.A2.ID, "site2")
	w.Device(t, fixture.AAdmin, w.A.ID, "", "nosite")
	for _, c := range []struct {
		caller, query string
		total         int
	}{
		{fixture.AAdmin, "limit=2", 5},
		{fixture.AAdmin, "limit=2&siteId=" + w.A1.ID, 3},
		{fixture.ARestricted, "limit=2", 3},
		{fixture.PXAdmin, "limit=2&orgId=" + w.A.ID, 5},
		{fixture.SysAdmin, "limit=2", 5},
	} {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"?"+c.query, c.caller, nil), http.StatusOK)
		fixture.Budget(t, res, 6)
		var l listed
		res.Decode(t, &l)
		if l.Pagination.Total != c.total || len(l.Data) != 2 {
			t.Fatalf("%s ?%s: %d devices of %d, want 2 of %d", c.caller, c.query, len(l.Data), l.Pagination.Total, c.total)
		}
	}
	var l listed
	fixture.Expect(t, w.Call(t, http.MethodGet, base+"?limit=2&page=2", fixture.ARestricted, nil), http.StatusOK).Decode(t, &l)
	if len(l.Data) != 1 || l.Data[0].ID != fixture.Sorted(a1...)[2] && l.Pagination.Total != 3 {
		t.Fatalf("site-restricted page 2: %+v", l)
	}
}
