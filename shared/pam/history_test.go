package pam_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// seedRequests puts n elevation requests of orgID on deviceID directly (test
// setup: BatchWriteItem 25 at a time), requested one second apart ending at
// last, their statuses taken in turn from statuses, keyed as the package's
// own writes key them (pam.CreateRequestWrite's keys).
func seedRequests(t testing.TB, env *testenv.Env, orgID, partnerID, deviceID string, last time.Time, n int, statuses ...string) []string {
	t.Helper()
	var ids []string
	rows := env.Seeder(t)
	for i := range n {
		at := last.Add(-time.Duration(n-1-i) * time.Second)
		ts := at.UTC().Format("2006-01-02T15:04:05.000Z")
		r := &pam.Request{ID: pam.NewRequestID(at), OrgID: orgID, PartnerID: partnerID, DeviceID: deviceID, FlowType: pam.FlowUAC,
			Status: statuses[i%len(statuses)], SubjectUsername: "CORP\\h", TargetExecutablePath: `C:\Tools\setup.exe`,
			RequestedAt: ts, UpdatedAt: ts}
		if r.Status == pam.StatusApproved || r.Status == pam.StatusAutoApproved || r.Status == pam.StatusActuating {
			e := at.Add(time.Hour).UTC().Format("2006-01-02T15:04:05.000Z")
			r.ExpiresAt = &e
		}
		pam.CreateRequestWrite(r, 30*time.Minute) // sets the keys the package's writes set
		item, err := store.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
		rows.Put(item)
	}
	rows.Flush()
	return ids
}

// listPage is one answer of the list.
type listPage struct {
	Requests []struct {
		ID, Status, RequestedAt string
	}
	Pagination struct {
		Page, Limit, Total int
		NextCursor         string
	}
}

// pageCosts reads page 1 of the list with query q (limit 1), then follows
// nextCursor to page 10, and returns the DynamoDB calls and items of page 1
// and of page 10 and page 10's first request.
func pageCosts(t *testing.T, w *fixture.World, caller, q string) (calls1, items1, calls10, items10 int, id10 string) {
	t.Helper()
	path := base + "/elevation-requests?limit=1" + q
	res := fixture.Expect(t, w.Call(t, http.MethodGet, path, caller, nil), http.StatusOK)
	calls1, items1 = res.DBCalls, res.DBItems
	var pg listPage
	res.Decode(t, &pg)
	for n := 2; n <= 10; n++ {
		if pg.Pagination.NextCursor == "" {
			t.Fatalf("%s: no page %d", q, n)
		}
		res = fixture.Expect(t, w.Call(t, http.MethodGet, path+"&cursor="+url.QueryEscape(pg.Pagination.NextCursor), caller, nil), http.StatusOK)
		pg = listPage{}
		res.Decode(t, &pg)
	}
	if len(pg.Requests) != 1 {
		t.Fatalf("%s: page 10 %s", q, res.Body)
	}
	return calls1, items1, res.DBCalls, res.DBItems, pg.Requests[0].ID
}

// TestListCostIsIndependentOfHistory: page 1 and page 10 (by cursor) of the
// list, unfiltered and by status, and the active view cost the same DynamoDB
// calls with 10,000 historical requests in the organization as with 77 (11
// in each status, so that a status filter has a page 10), and
// read no more items than the page needs (store.Calls.Items: index rows and
// items). Before the lists read one page, the list read every request of the
// organization (10,000 items, a Query call per MB) and the active view too.
func TestListCostIsIndependentOfHistory(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "hist")
	now := w.Env.Clock.Now()
	// The 77 newest: 11 in each status, so a status filter has a page 10 and
	// each status partition has limit+1 rows after it.
	all := []string{pam.StatusPending, pam.StatusApproved, pam.StatusDenied, pam.StatusExpired, pam.StatusRevoked,
		pam.StatusAutoApproved, pam.StatusActuating}
	recent := seedRequests(t, w.Env, w.A.ID, w.PX.ID, d.id, now, 77, all...)
	queries := []string{"", "&status=denied"}
	type cost struct{ c1, i1, c10, i10 int }
	small := map[string]cost{}
	for _, q := range queries {
		c1, i1, c10, i10, _ := pageCosts(t, w, fixture.AAdmin, q)
		small[q] = cost{c1, i1, c10, i10}
	}
	act := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/active", fixture.AAdmin, nil), http.StatusOK)
	activeSmall := act

	// 10,000 older requests, final as history is (the sweeper expires a
	// pending request after 30 minutes, an approved one at expiresAt).
	start := time.Now()
	seedRequests(t, w.Env, w.A.ID, w.PX.ID, d.id, now.Add(-time.Hour), 10_000,
		pam.StatusExpired, pam.StatusDenied, pam.StatusExpired, pam.StatusRevoked, pam.StatusExpired, pam.StatusDenied)
	t.Logf("seeded 10,000 requests in %v", time.Since(start))
	start = time.Now()
	defer func() { t.Logf("read the lists in %v", time.Since(start)) }()
	for _, q := range queries {
		c1, i1, c10, i10, id10 := pageCosts(t, w, fixture.AAdmin, q)
		was := small[q]
		t.Logf("%q with 10,000 more: page 1 %d calls %d items, page 10 %d calls %d items", q, c1, i1, c10, i10)
		if c1 != was.c1 || c10 != was.c10 {
			t.Errorf("%q: calls page 1 %d, page 10 %d with 10,000 more requests; %d and %d with 77", q, c1, c10, was.c1, was.c10)
		}
		// Each list partition is asked for limit+1 index rows, then the
		// page's item and its device are read: as many with history as without.
		if i1 != was.i1 || i10 != was.i10 {
			t.Errorf("%q: items read page 1 %d, page 10 %d with 10,000 more requests (%d, %d with 77)", q, i1, i10, was.i1, was.i10)
		}
		if q == "" && id10 != recent[len(recent)-10] {
			t.Errorf("page 10 is %s, want the 10th newest %s", id10, recent[len(recent)-10])
		}
	}
	act = fixture.Expect(t, w.Call(t, http.MethodGet, base+"/active", fixture.AAdmin, nil), http.StatusOK)
	if act.DBCalls != activeSmall.DBCalls || act.DBItems != activeSmall.DBItems {
		t.Errorf("active: %d calls, %d items with 10,000 more requests; %d, %d with 77", act.DBCalls, act.DBItems, activeSmall.DBCalls, activeSmall.DBItems)
	}
	var a struct{ Active []struct{ ID, Status string } }
	act.Decode(t, &a)
	// The 77 recent rows hold 11 approved, 11 auto_approved and 11
	// actuating, each expiring an hour after it was requested.
	if len(a.Active) != 33 {
		t.Errorf("active %d: %s", len(a.Active), act.Body)
	}
}

// TestListPagesByCursorInOrder: following nextCursor walks the whole list
// newest first with no request twice or missing, under a status filter and
// without one; totals are exact on the last page and a lower bound before it.
func TestListPagesByCursorInOrder(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "walk")
	all := []string{pam.StatusPending, pam.StatusDenied, pam.StatusExpired, pam.StatusApproved}
	ids := seedRequests(t, w.Env, w.A.ID, w.PX.ID, d.id, w.Env.Clock.Now(), 23, all...)
	for _, q := range []string{"", "&status=expired"} {
		var want []string
		for i := len(ids) - 1; i >= 0; i-- {
			if q == "" || all[i%len(all)] == pam.StatusExpired {
				want = append(want, ids[i])
			}
		}
		var got []string
		cursor := ""
		for n := 0; ; n++ {
			path := base + "/elevation-requests?limit=4" + q
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			res := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.AViewer, nil), http.StatusOK)
			var pg listPage
			res.Decode(t, &pg)
			for _, r := range pg.Requests {
				got = append(got, r.ID)
			}
			if pg.Pagination.NextCursor == "" {
				if pg.Pagination.Total != len(want) {
					t.Errorf("%q: last page total %d, want %d", q, pg.Pagination.Total, len(want))
				}
				break
			}
			if pg.Pagination.Total != len(got)+1 {
				t.Errorf("%q: page %d total %d, want the lower bound %d", q, n+1, pg.Pagination.Total, len(got)+1)
			}
			cursor = pg.Pagination.NextCursor
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Errorf("%q: walked %v, want %v", q, got, want)
		}
	}
	// A cursor of another list is refused, naming the cursor.
	res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/elevation-requests?limit=1", fixture.AViewer, nil), http.StatusOK)
	var pg listPage
	res.Decode(t, &pg)
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/elevation-requests?limit=1&status=pending&cursor="+url.QueryEscape(pg.Pagination.NextCursor), fixture.AViewer, nil), "cursor")
}

// TestBackfillListsOlderRequests: requests written before the lists had an
// index (no GSI3/GSI4 keys) are not listed until the list-index backfill
// (shared/backfill's pam.Reindex kind) gives them the keys of their status,
// once; a status move before the backfill gives its request the keys itself.
func TestBackfillListsOlderRequests(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "old")
	ctx := context.Background()
	ids := seedRequests(t, w.Env, w.A.ID, w.PX.ID, d.id, w.Env.Clock.Now(), 3, pam.StatusDenied, pam.StatusPending, pam.StatusPending)
	for _, id := range ids {
		k := pam.RequestKeys(w.A.ID, id)
		if _, err := w.Env.Store.DB.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &w.Env.Store.Table, Key: store.Key(k.PK, k.SK),
			UpdateExpression: aws.String("REMOVE GSI3PK, GSI3SK, GSI4PK, GSI4SK")}); err != nil {
			t.Fatal(err)
		}
	}
	listed := func() string {
		t.Helper()
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/elevation-requests", fixture.AAdmin, nil), http.StatusOK)
		var pg listPage
		res.Decode(t, &pg)
		var out []string
		for _, r := range pg.Requests {
			out = append(out, r.ID+":"+r.Status)
		}
		return strings.Join(out, ",")
	}
	if got := listed(); got != "" {
		t.Fatalf("unindexed rows listed: %s", got)
	}
	// A decision moves the newest into the approved partition with all four keys.
	fixture.Expect(t, respond(t, w, fixture.AAdmin, ids[2], map[string]any{"decision": "approve"}), http.StatusOK)
	if got := listed(); got != ids[2]+":approved" {
		t.Fatalf("after the decision: %s", got)
	}
	run, err := w.Env.Store.Backfill(ctx, []store.Reindex{pam.Reindex()}, "", 10)
	if err != nil || run.Written["elevation request"] != 2 {
		t.Fatalf("backfill %+v %v", run, err)
	}
	want := ids[2] + ":approved," + ids[1] + ":pending," + ids[0] + ":denied"
	if got := listed(); got != want {
		t.Fatalf("after the backfill: %s, want %s", got, want)
	}
	if got := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/elevation-requests?status=pending", fixture.AAdmin, nil), http.StatusOK); !strings.Contains(string(got.Body), ids[1]) {
		t.Fatalf("pending partition: %s", got.Body)
	}
	if run, err := w.Env.Store.Backfill(ctx, []store.Reindex{pam.Reindex()}, "", 10); err != nil || len(run.Written) != 0 {
		t.Fatalf("second backfill %+v %v", run, err)
	}
}
