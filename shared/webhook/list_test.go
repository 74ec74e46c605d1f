package webhook_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
)

// webhookPage is GET /webhooks' answer.
type webhookPage struct {
	Data       []webhook.Webhook
	Pagination struct {
		Page, Limit, Total int
		NextCursor         string
	}
}

// listIDs reads every page of GET /webhooks (query) as caller by cursor,
// limit 1 (fixture.CursorPages).
func (w *world) listIDs(t *testing.T, caller, query string) ([]string, int) {
	t.Helper()
	return fixture.CursorPages(t, func(path string) fixture.Response {
		return w.call(t, http.MethodGet, path, caller, nil)
	}, base+"?limit=1"+query, 10)
}

// GET /webhooks reads one page from the list indexes (tenant.List): newest
// first by cursor, the status filter on the index rows, a webhook being
// deleted never listed, another organization's cursor refused.
func TestListPagesByCursor(t *testing.T) {
	w := newWorld(t)
	var made []string
	for range 3 {
		made = append(made, w.create(t, aAdmin, hookBody(nil)).ID)
		w.env.Clock.Advance(time.Second)
	}
	w.create(t, bAdmin, hookBody(nil)) // another organization's
	newest := []string{made[2], made[1], made[0]}

	ids, total := w.listIDs(t, aAdmin, "")
	if total != 3 || !equal(ids, newest) {
		t.Fatalf("org caller's pages %v (total %d), want %v", ids, total, newest)
	}
	ids, _ = w.listIDs(t, pxAdmin, "&orgId="+w.a.ID)
	if !equal(ids, newest) {
		t.Fatalf("partner caller's pages %v, want %v", ids, newest)
	}
	// A page by cursor costs what a first page costs.
	var first webhookPage
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?limit=1", aAdmin, nil), http.StatusOK).Decode(t, &first)
	res := fixture.Expect(t, w.call(t, http.MethodGet, base+"?limit=1&cursor="+url.QueryEscape(first.Pagination.NextCursor), aAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 4)
	// A cursor of organization A's partition is refused for B's.
	fixture.Invalid(t, w.call(t, http.MethodGet, base+"?limit=1&cursor="+url.QueryEscape(first.Pagination.NextCursor), bAdmin, nil), "cursor")

	// The status filter decides on the index rows.
	fixture.Expect(t, w.call(t, http.MethodPatch, base+"/"+made[1], aAdmin, map[string]any{"status": "paused"}), http.StatusOK)
	ids, total = w.listIDs(t, aAdmin, "&status=paused")
	if total != 1 || !equal(ids, []string{made[1]}) {
		t.Fatalf("paused %v (total %d)", ids, total)
	}
	ids, _ = w.listIDs(t, aAdmin, "&status=active")
	if !equal(ids, []string{made[2], made[0]}) {
		t.Fatalf("active %v", ids)
	}

	// A DELETE that stopped half-way leaves the webhook out of the list.
	if err := webhook.MarkDeleting(context.Background(), webhook.Store{St: w.env.Store}, w.a.ID, made[0]); err != nil {
		t.Fatal(err)
	}
	ids, total = w.listIDs(t, aAdmin, "")
	if total != 2 || !equal(ids, newest[:2]) {
		t.Fatalf("after a half-way delete %v (total %d)", ids, total)
	}
}

// Webhooks written before their list had an index are found again after the
// backfill (webhook.Reindex); one being deleted is given no keys.
func TestListBackfill(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	kept := w.create(t, aAdmin, hookBody(nil))
	w.env.Clock.Advance(time.Second)
	gone := w.create(t, aAdmin, hookBody(nil))
	for _, id := range []string{kept.ID, gone.ID} {
		k := webhook.Key(w.a.ID, id)
		u := expression.Remove(expression.Name("GSI3PK")).Remove(expression.Name("GSI3SK")).
			Remove(expression.Name("GSI4PK")).Remove(expression.Name("GSI4SK"))
		if err := w.env.Store.Do(ctx, store.Change(k.PK, k.SK, u)); err != nil {
			t.Fatal(err)
		}
	}
	if ids, _ := w.listIDs(t, aAdmin, ""); len(ids) != 0 {
		t.Fatalf("rows without list keys listed: %v", ids)
	}
	if err := webhook.MarkDeleting(ctx, webhook.Store{St: w.env.Store}, w.a.ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	run, err := w.env.Store.Backfill(ctx, []store.Reindex{webhook.Reindex()}, "", 10)
	if err != nil || run.Written["webhook"] != 1 {
		t.Fatalf("backfill %+v (%v), want 1 webhook", run, err)
	}
	if ids, total := w.listIDs(t, aAdmin, ""); total != 1 || !equal(ids, []string{kept.ID}) {
		t.Fatalf("after the backfill %v (total %d)", ids, total)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
