package sso_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/shared/sso/ssolist"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
)

// providerIDs reads every page of GET /sso/providers (query) as caller by
// cursor, limit 1 (fixture.CursorPages).
func (w *world) providerIDs(t *testing.T, caller, query string) ([]string, int) {
	t.Helper()
	return fixture.CursorPages(t, func(path string) fixture.Response {
		return w.call(t, http.MethodGet, path, caller, nil)
	}, base+"?limit=1"+query, 10)
}

// created makes n inactive providers as caller (body extra, e.g. orgId), a
// second apart, and answers their ids oldest first.
func (w *world) created(t *testing.T, caller string, n int, extra map[string]any) []string {
	t.Helper()
	var ids []string
	for i := range n {
		body := map[string]any{"name": "IdP", "issuer": "https://93.184.216.34/x", "clientId": fmt.Sprintf("%s-%d", caller, i)}
		for k, v := range extra {
			body[k] = v
		}
		var pr sso.Provider
		fixture.Expect(t, w.call(t, http.MethodPost, base, caller, body), http.StatusCreated).Decode(t, &pr)
		ids = append(ids, pr.ID)
		w.env.Clock.Advance(time.Second)
	}
	return ids
}

// GET /sso/providers reads one page of its owner's list partition: an
// organization's (tenant.List) or a partner's own, oldest first by cursor;
// a cursor of one owner's list is refused for another's.
func TestProviderListPagesByCursor(t *testing.T) {
	w := newWorld(t)
	org := w.created(t, aAdmin, 3, nil)
	own := w.created(t, pxAdmin, 2, nil)
	w.created(t, bAdmin, 1, nil)

	for _, c := range []struct{ who, query string }{{aAdmin, ""}, {pxAdmin, "&orgId=" + w.a.ID}, {sysAdmin, "&orgId=" + w.a.ID}} {
		if ids, total := w.providerIDs(t, c.who, c.query); total != 3 || !slices.Equal(ids, org) {
			t.Fatalf("%s: organization A's pages %v (total %d), want %v", c.who, ids, total, org)
		}
	}
	for _, c := range []struct{ who, query string }{{pxAdmin, ""}, {sysAdmin, "&partnerId=" + w.px.ID}} {
		if ids, total := w.providerIDs(t, c.who, c.query); total != 2 || !slices.Equal(ids, own) {
			t.Fatalf("%s: partner X's own pages %v (total %d), want %v", c.who, ids, total, own)
		}
	}
	var first struct{ Pagination struct{ NextCursor string } }
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?limit=1", aAdmin, nil), http.StatusOK).Decode(t, &first)
	fixture.Invalid(t, w.call(t, http.MethodGet, base+"?limit=1&cursor="+url.QueryEscape(first.Pagination.NextCursor), bAdmin, nil), "cursor")
	fixture.Invalid(t, w.call(t, http.MethodGet, base+"?limit=1&cursor="+url.QueryEscape(first.Pagination.NextCursor), pxAdmin, nil), "cursor")
}

// Providers written before their list had an index, an organization's and a
// partner's own, are listed again after the backfill (ssolist.Reindex).
func TestProviderListBackfill(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	org := w.created(t, aAdmin, 1, nil)
	own := w.created(t, pxAdmin, 1, nil)
	rows, err := w.env.Store.All(ctx, store.Query{Index: store.GSI1, PK: "SSOPROVREF#" + org[0]})
	if err != nil || len(rows) != 1 {
		t.Fatalf("provider row %v (%v)", rows, err)
	}
	more, err := w.env.Store.All(ctx, store.Query{Index: store.GSI1, PK: "SSOPROVREF#" + own[0]})
	if err != nil || len(more) != 1 {
		t.Fatalf("provider row %v (%v)", more, err)
	}
	for _, it := range append(rows, more...) {
		u := expression.Remove(expression.Name("GSI4PK")).Remove(expression.Name("GSI4SK"))
		if err := w.env.Store.Do(ctx, store.Change(store.Str(it["PK"]), store.Str(it["SK"]), u)); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := w.providerIDs(t, aAdmin, ""); len(ids) != 0 {
		t.Fatalf("rows without list keys listed: %v", ids)
	}
	run, err := w.env.Store.Backfill(ctx, []store.Reindex{ssolist.Reindex()}, "", 10)
	if err != nil || run.Written["SSO provider"] != 2 {
		t.Fatalf("backfill %+v (%v), want 2 providers", run, err)
	}
	if ids, _ := w.providerIDs(t, aAdmin, ""); !slices.Equal(ids, org) {
		t.Fatalf("organization A after the backfill %v", ids)
	}
	if ids, _ := w.providerIDs(t, pxAdmin, ""); !slices.Equal(ids, own) {
		t.Fatalf("partner X after the backfill %v", ids)
	}
}
