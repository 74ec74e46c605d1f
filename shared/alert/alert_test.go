package alert_test

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const base = "/api/v1/alerts"

func raise(t *testing.T, w *fixture.World, caller string, body map[string]any) map[string]any {
	t.Helper()
	return fixture.Expect(t, w.Call(t, http.MethodPost, base, caller, body), http.StatusCreated).JSON(t)
}

func TestAlertLifecycleRaisesEvents(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "alerts")
	a := raise(t, w, fixture.AAdmin, map[string]any{"severity": "critical", "title": "Disk full", "message": "C: at 99%"})
	id := a["id"].(string)
	if a["status"] != "active" || a["deviceId"] != nil {
		t.Fatalf("raised %v", a)
	}
	ack := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/acknowledge", fixture.ATech, nil), http.StatusOK).JSON(t)
	if ack["status"] != "acknowledged" || ack["acknowledgedBy"] != w.Users[fixture.ATech] {
		t.Fatalf("acknowledged %v", ack)
	}
	r := w.Call(t, http.MethodPost, base+"/"+id+"/acknowledge", fixture.AAdmin, nil)
	if fixture.ExpectError(t, r, http.StatusConflict, "wrong_status"); !strings.Contains(string(r.Body), "Only an active alert") {
		t.Fatalf("second acknowledge: %s", r.Body)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/resolve", fixture.ATech, nil), http.StatusForbidden, "forbidden")
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/resolve", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if res["status"] != "resolved" || res["resolvedAt"] == nil {
		t.Fatalf("resolved %v", res)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/resolve", fixture.AAdmin, nil), http.StatusConflict, "wrong_status")
	// Each event was written with its change: it is on the events queue, or
	// still in the outbox when its send is pending.
	lines := strings.Split(fixture.Scan(t, w.Env), "\n")
	for {
		q := w.Env.Resources.Queues["events"].URL
		msgs := testenv.Receive(t, w.Env.SQS, q, 0)
		if len(msgs) == 0 {
			break
		}
		for _, m := range msgs {
			lines = append(lines, strings.ToLower(aws.ToString(m.Body)))
			if _, err := w.Env.SQS.DeleteMessage(t.Context(), &sqs.DeleteMessageInput{QueueUrl: aws.String(q), ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := map[string]bool{}
	for _, l := range lines {
		for _, typ := range []string{"alert.triggered", "alert.acknowledged", "alert.resolved"} {
			if strings.Contains(l, typ) && strings.Contains(l, strings.ToLower(id)) {
				got[typ] = true
			}
		}
	}
	if len(got) != 3 {
		t.Fatalf("events in the outbox: %v", got)
	}
}

func TestConcurrentAcknowledgementsHaveOneWinner(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "alerts")
	id := raise(t, w, fixture.AAdmin, map[string]any{"severity": "low", "title": "x"})["id"].(string)
	const n = 10
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.Call(t, http.MethodPost, base+"/"+id+"/acknowledge", fixture.AAdmin, nil).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners: %v", won, codes)
	}
}

func TestAlertTenancyAndRestrictions(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "alerts")
	orgWide := raise(t, w, fixture.AAdmin, map[string]any{"severity": "info", "title": "org wide"})["id"].(string)
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin, fixture.ARestricted} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+orgWide, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+orgWide+"/acknowledge", caller, nil))
		if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, caller, nil)); len(ids) != 0 {
			t.Fatalf("%s lists %v", caller, ids)
		}
	}
	if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.PXAdmin, nil)); len(ids) != 1 {
		t.Fatalf("partner X lists %v", ids)
	}
	// A restricted admin raises alerts only about its devices.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.ARestricted, map[string]any{"severity": "low", "title": "x"}), http.StatusForbidden, "forbidden")
	// Partner callers name the organization; another partner's is 404.
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"severity": "low", "title": "x"}), "orgId")
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.PYAdmin, map[string]any{"orgId": w.A.ID, "severity": "low", "title": "x"}))
}

func TestAlertBadInput(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "alerts")
	id := raise(t, w, fixture.AAdmin, map[string]any{"severity": "low", "title": "x"})["id"].(string)
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, base, map[string]any{"title": "x"}, "severity"},
		{http.MethodPost, base, map[string]any{"title": "x", "severity": "urgent"}, "severity"},
		{http.MethodPost, base, map[string]any{"severity": "low"}, "title"},
		{http.MethodPost, base, map[string]any{"severity": "low", "title": strings.Repeat("t", 256)}, "title"},
		{http.MethodPost, base, map[string]any{"severity": "low", "title": "x", "message": strings.Repeat("m", 4001)}, "message"},
		{http.MethodPost, base, map[string]any{"severity": "low", "title": "x", "deviceId": "nope"}, "deviceId"},
		{http.MethodPost, base, map[string]any{"severity": "low", "title": "x", "deviceId": "00000000-0000-4000-8000-000000000001"}, "deviceId"},
		{http.MethodPost, base, map[string]any{"severity": "low", "title": "x", "status": "resolved"}, "status"},
		{http.MethodPost, base + "/" + id + "/acknowledge", map[string]any{"note": "x"}, "note"},
		{http.MethodGet, base + "?status=open", nil, "status"},
		{http.MethodGet, base + "/x1", nil, "id"},
	} {
		fixture.Invalid(t, w.Call(t, c.method, c.path, fixture.AAdmin, c.body), c.field)
	}
}

// TestListPagesByNumberAndCursor: the alert list read from its list indexes
// gives the same newest-first order and total by page number and by cursor,
// for an organization and across a partner's organizations.
func TestListPagesByNumberAndCursor(t *testing.T) {
	w := fixture.NewWorld(t, "alerts")
	for i := range 5 {
		raise(t, w, fixture.AAdmin, map[string]any{"severity": "low", "title": fmt.Sprintf("a%d", i), "message": "m"})
		raise(t, w, fixture.BAdmin, map[string]any{"severity": "high", "title": fmt.Sprintf("b%d", i), "message": "m"})
		if i%2 == 0 {
			w.Env.Clock.Advance(time.Second) // some alerts share their createdAt: ties by id
		}
	}
	type page struct {
		Data []struct {
			ID, CreatedAt, Severity string
		}
		Pagination struct {
			Page, Total int
			NextCursor  string
		}
	}
	for _, c := range []struct {
		caller, query string
		total         int
	}{
		{fixture.AAdmin, "", 5},
		{fixture.PXAdmin, "", 10},
		{fixture.PXAdmin, "severity=high&", 5},
		{fixture.PXAdmin, "orgId=" + w.A.ID + "&", 5},
	} {
		var byNumber, byCursor []string
		var all page
		fixture.Expect(t, w.Call(t, http.MethodGet, base+"?"+c.query+"limit=100", c.caller, nil), http.StatusOK).Decode(t, &all)
		if all.Pagination.Total != c.total || len(all.Data) != c.total {
			t.Fatalf("%s ?%s: %d of %d, want %d", c.caller, c.query, len(all.Data), all.Pagination.Total, c.total)
		}
		for i := 1; i < len(all.Data); i++ {
			a, b := all.Data[i-1], all.Data[i]
			if a.CreatedAt < b.CreatedAt || (a.CreatedAt == b.CreatedAt && a.ID > b.ID) {
				t.Fatalf("%s ?%s: order broken at %d: %+v", c.caller, c.query, i, all.Data)
			}
		}
		for n := 1; n <= 4; n++ {
			var p page
			res := fixture.Expect(t, w.Call(t, http.MethodGet, fmt.Sprintf("%s?%slimit=3&page=%d", base, c.query, n), c.caller, nil), http.StatusOK)
			fixture.Budget(t, res, 6) // a partner's list reads its organizations first
			res.Decode(t, &p)
			if p.Pagination.Total != c.total {
				t.Fatalf("%s ?%s page %d: total %d", c.caller, c.query, n, p.Pagination.Total)
			}
			for _, a := range p.Data {
				byNumber = append(byNumber, a.ID)
			}
		}
		cursor := ""
		for n := 1; ; n++ {
			q := c.query + "limit=3"
			if cursor != "" {
				q += "&cursor=" + url.QueryEscape(cursor)
			}
			var p page
			res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"?"+q, c.caller, nil), http.StatusOK)
			fixture.Budget(t, res, 6) // a partner's list reads its organizations first
			res.Decode(t, &p)
			if p.Pagination.Page != n || p.Pagination.Total != c.total {
				t.Fatalf("%s ?%s cursor page %d: %+v", c.caller, c.query, n, p.Pagination)
			}
			for _, a := range p.Data {
				byCursor = append(byCursor, a.ID)
			}
			if cursor = p.Pagination.NextCursor; cursor == "" {
				break
			}
		}
		var want []string
		for _, a := range all.Data {
			want = append(want, a.ID)
		}
		if !slices.Equal(byNumber, want) || !slices.Equal(byCursor, want) {
			t.Fatalf("%s ?%s\n by number %v\n by cursor %v\n want %v", c.caller, c.query, byNumber, byCursor, want)
		}
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"?cursor=nope", fixture.AAdmin, nil), "cursor")
}
