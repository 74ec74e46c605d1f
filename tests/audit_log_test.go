package tests

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/tests/fixture"
)

// auditPage reads GET path as caller and returns its entries and next cursor.
func auditPage(t *testing.T, w *fixture.World, caller, path string) ([]map[string]any, string) {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodGet, path, caller, nil), http.StatusOK)
	var body struct {
		Data       []map[string]any `json:"data"`
		Pagination struct {
			NextCursor *string `json:"nextCursor"`
		} `json:"pagination"`
	}
	if err := json.Unmarshal(res.Body, &body); err != nil {
		t.Fatal(err)
	}
	next := ""
	if body.Pagination.NextCursor != nil {
		next = *body.Pagination.NextCursor
	}
	return body.Data, next
}

func actions(entries []map[string]any) []string {
	out := []string{}
	for _, e := range entries {
		out = append(out, e["action"].(string))
	}
	return out
}

// TestAuditLogTenancyAndFilters: each caller reads its own tenant's log and
// no other (docs/decisions.md#audit-log): an organization admin its organization,
// a partner admin its partner's rows and, with orgId, its organizations'; a
// system admin orgId or partnerId; another partner's or organization's caller
// is 404; a restricted admin sees only what it did; a cursor is bound to its
// tenant; entries carry the request's id, address and user agent.
func TestAuditLogTenancyAndFilters(t *testing.T) {
	w := fixture.NewWorld(t, "audit-logs", "api-keys", "organizations")
	res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/api-keys", Token: w.Tokens[fixture.AAdmin],
		RemoteAddr: "198.51.100.9:1", Header: map[string]string{"X-Request-Id": "audit-req-0001", "User-Agent": "audit-test/1.0",
			"X-Forwarded-For": "203.0.113.5"},
		Body: map[string]any{"orgId": w.A.ID, "name": "audited-key", "scopes": []string{"devices:read"}}})
	fixture.Expect(t, res, http.StatusCreated)
	keyID := res.JSON(t)["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "second-key", "scopes": []string{"devices:read"}}), http.StatusCreated)
	fixture.Expect(t, w.Call(t, http.MethodPatch, "/api/v1/organizations/"+w.B.ID, fixture.PXAdmin, map[string]any{"name": "B renamed"}), http.StatusOK)

	entries, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=api_key.create&resourceId="+keyID)
	if len(entries) != 1 {
		t.Fatalf("A's admin: api_key.create entries %v", actions(entries))
	}
	e := entries[0]
	if e["resourceId"] != keyID || e["requestId"] != "audit-req-0001" || e["userAgent"] != "audit-test/1.0" || e["ip"] != "203.0.113.5" ||
		e["orgId"] != w.A.ID || e["actor"].(map[string]any)["id"] != w.Users[fixture.AAdmin] {
		t.Fatalf("entry %v", e)
	}
	// Prefix and exact action, resource filters, time window.
	if got, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=api_key.*&resourceType=api_key&resourceId="+keyID); len(got) != 1 {
		t.Fatalf("prefix filter: %v", actions(got))
	}
	if got, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=api_key"); len(got) != 0 {
		t.Fatalf("exact action matched a prefix: %v", actions(got))
	}
	now := w.Env.Clock.Now()
	if got, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=api_key.create&to="+url.QueryEscape(now.Add(-1e9).Format("2006-01-02T15:04:05Z07:00"))); len(got) != 0 {
		t.Fatalf("to before the entry: %v", actions(got))
	}
	if got, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=api_key.create&resourceId="+keyID+"&from="+url.QueryEscape(now.Add(-1e9).Format("2006-01-02T15:04:05Z07:00"))); len(got) != 1 {
		t.Fatalf("from before the entry: %v", actions(got))
	}

	// Partner X: its organizations with orgId; its own rows without.
	if got, _ := auditPage(t, w, fixture.PXAdmin, "/api/v1/audit-logs?orgId="+w.A.ID+"&action=api_key.create"); len(got) != 2 {
		t.Fatalf("partner X with orgId A: %v", actions(got))
	}
	own, _ := auditPage(t, w, fixture.PXAdmin, "/api/v1/audit-logs")
	for _, e := range own {
		if e["orgId"] != nil && e["orgId"] != "" {
			t.Fatalf("partner X's own log holds an organization's entry: %v", e)
		}
	}
	// Other tenants: 404, and nothing of A's.
	for _, c := range []struct{ caller, query string }{
		{fixture.CAdmin, "orgId=" + w.A.ID}, {fixture.BAdmin, "orgId=" + w.A.ID}, {fixture.PYAdmin, "orgId=" + w.A.ID},
		{fixture.PXSelectedB, "orgId=" + w.A.ID}, {fixture.PYAdmin, "partnerId=" + w.PX.ID}, {fixture.AAdmin, "partnerId=" + w.PX.ID},
	} {
		res := w.Call(t, http.MethodGet, "/api/v1/audit-logs?"+c.query, c.caller, nil)
		fixture.NotFound(t, res)
		if strings.Contains(string(res.Body), "audited-key") {
			t.Fatalf("%s %s: %s", c.caller, c.query, res.Body)
		}
	}
	// System: orgId or partnerId.
	if got, _ := auditPage(t, w, fixture.SysAdmin, "/api/v1/audit-logs?orgId="+w.A.ID+"&action=api_key.create"); len(got) != 2 {
		t.Fatalf("system with orgId A: %v", actions(got))
	}
	if got, _ := auditPage(t, w, fixture.SysAdmin, "/api/v1/audit-logs?orgId="+w.B.ID+"&action=organization.*"); len(got) == 0 {
		t.Fatalf("system with orgId B: no organization entries")
	}

	// A restricted admin sees only its own entries.
	for _, caller := range []string{fixture.ARestricted, fixture.AGroupOnly} {
		got, _ := auditPage(t, w, caller, "/api/v1/audit-logs?limit=200")
		for _, e := range got {
			if e["actor"].(map[string]any)["id"] != w.Users[caller] {
				t.Fatalf("%s sees %v", caller, e)
			}
		}
		if got, _ := auditPage(t, w, caller, "/api/v1/audit-logs?actorId="+w.Users[fixture.AAdmin]); len(got) != 0 {
			t.Fatalf("%s reads the admin's entries: %v", caller, actions(got))
		}
	}

	// Cursors: a page of one with a cursor; the cursor is A's only.
	first, next := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?limit=1")
	if len(first) != 1 || next == "" {
		t.Fatalf("limit=1: %d entries, cursor %q", len(first), next)
	}
	second, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?limit=1&cursor="+url.QueryEscape(next))
	if len(second) != 1 || second[0]["id"] == first[0]["id"] {
		t.Fatalf("second page %v after %v", second, first)
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs?cursor="+url.QueryEscape(next), fixture.CAdmin, nil), "cursor")
	fixture.Invalid(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs?orgId="+w.B.ID+"&cursor="+url.QueryEscape(next), fixture.PXAdmin, nil), "cursor")

	// Validation names the field.
	for q, field := range map[string]string{"limit=201": "limit", "limit=0": "limit", "from=yesterday": "from", "to=2026-13-01": "to",
		"orgId=x": "orgId", "from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z": "from"} {
		fixture.Invalid(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs?"+q, fixture.AAdmin, nil), field)
	}
	// Permissions: a technician holds no audit:read.
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs", fixture.ATech, nil), http.StatusForbidden)
}

// seedLog writes n entries of the same shape to partner's log (audit.Log,
// eight writers at a time).
func seedLog(t *testing.T, w *fixture.World, partnerID string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 8 {
				err := audit.Log(context.Background(), w.Env.Store, audit.Entry{Actor: audit.SystemActor, PartnerID: partnerID,
					Action: "load.write", ResourceType: "load", ResourceID: "00000000-0000-4000-8000-000000000001"})
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestAuditLogPageCostIsFlat: a page of a log of 10,000 entries costs the
// calls and units of a page of a log of 10 (the read is the page's rows of
// the tenant's partition, whatever lies behind them), filtered or not; and an
// export answers at most 5,000 rows with the rest behind its Link header.
func TestAuditLogPageCostIsFlat(t *testing.T) {
	w := fixture.NewWorld(t, "audit-logs")
	small, large := uuid.NewString(), uuid.NewString()
	seedLog(t, w, small, 10)
	seedLog(t, w, large, 10_000)
	for _, q := range []string{"limit=10", "limit=10&action=load.*", "limit=10&actorId=system&resourceType=load"} {
		a := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs?partnerId="+small+"&"+q, fixture.SysAdmin, nil), http.StatusOK)
		b := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs?partnerId="+large+"&"+q, fixture.SysAdmin, nil), http.StatusOK)
		if a.DBCalls != b.DBCalls || a.RCU != b.RCU || a.DBItems != b.DBItems {
			t.Fatalf("%s: 10 entries %d calls %v RCU %d items; 10,000 entries %d calls %v RCU %d items",
				q, a.DBCalls, a.RCU, a.DBItems, b.DBCalls, b.RCU, b.DBItems)
		}
		if len(b.JSON(t)["data"].([]any)) != 10 {
			t.Fatalf("%s: %s", q, b.Body)
		}
	}

	// Export: 5,000 rows, then the next 5,000 through Link, each audited
	// (after the seeded rows, so the newest).
	w.Env.Clock.Advance(time.Second)
	path := "/api/v1/audit-logs/export?partnerId=" + large
	got := 0
	for page := 0; path != ""; page++ {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, path, fixture.SysAdmin, nil), http.StatusOK)
		lines := strings.Split(strings.TrimSpace(string(res.Body)), "\n")
		if strings.TrimSpace(string(res.Body)) == "" {
			lines = nil
		}
		if len(lines) > 5000 || (page == 0 && len(lines) != 5000) {
			t.Fatalf("export page %d: %d rows", page, len(lines))
		}
		got += strings.Count(string(res.Body), `"action":"load.write"`)
		path = ""
		if link := res.Header.Get("Link"); link != "" {
			if !strings.HasSuffix(link, `>; rel="next"`) || !strings.HasPrefix(link, "</api/v1/audit-logs/export?") {
				t.Fatalf("Link %q", link)
			}
			path = strings.TrimSuffix(strings.TrimPrefix(link, "<"), `>; rel="next"`)
		}
		if page > 3 {
			t.Fatal("export does not end")
		}
	}
	if got != 10_000 {
		t.Fatalf("export answered %d of the 10,000 rows", got)
	}
	exports, _ := auditPage(t, w, fixture.SysAdmin, "/api/v1/audit-logs?partnerId="+large+"&action=audit.export&limit=5")
	if len(exports) == 0 {
		t.Fatal("no audit.export entry")
	}
}

// TestAuditLogExport: CSV with a header and quoting, NDJSON, MFA and
// audit:export required, the export audited.
func TestAuditLogExport(t *testing.T) {
	w := fixture.NewWorld(t, "audit-logs", "organizations")
	fixture.Expect(t, w.Call(t, http.MethodPatch, "/api/v1/organizations/"+w.A.ID, fixture.AAdmin, map[string]any{"name": "A, \"quoted\" name"}), http.StatusOK)
	res := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs/export?format=csv&action=organization.*", fixture.AAdmin, nil), http.StatusOK)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/csv") {
		t.Fatalf("content type %q", ct)
	}
	rows, err := csv.NewReader(strings.NewReader(string(res.Body))).ReadAll()
	if err != nil {
		t.Fatalf("csv: %v\n%s", err, res.Body)
	}
	if len(rows) < 2 || rows[0][0] != "id" || rows[0][5] != "action" {
		t.Fatalf("csv rows %v", rows)
	}
	found := false
	for _, r := range rows[1:] {
		found = found || r[8] == "A, \"quoted\" name"
	}
	if !found {
		t.Fatalf("no row names the organization: %s", res.Body)
	}
	w.Env.Clock.Advance(time.Millisecond) // the NDJSON export's entry is the newer
	res = fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs/export", fixture.AAdmin, nil), http.StatusOK)
	for _, line := range strings.Split(strings.TrimSpace(string(res.Body)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil || e["id"] == nil {
			t.Fatalf("ndjson line %q: %v", line, err)
		}
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs/export?format=xml", fixture.AAdmin, nil), "format")
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs/export", fixture.ANoMFA, nil), http.StatusForbidden)
	fixture.NotFound(t, w.Call(t, http.MethodGet, "/api/v1/audit-logs/export?orgId="+w.A.ID, fixture.CAdmin, nil))
	exports, _ := auditPage(t, w, fixture.AAdmin, "/api/v1/audit-logs?action=audit.export")
	if len(exports) != 2 || exports[0]["details"].(map[string]any)["format"] != "ndjson" || exports[1]["details"].(map[string]any)["format"] != "csv" {
		t.Fatalf("audit.export entries %v", exports)
	}
}

// TestAuditRowsHoldNoSecrets drives the operations that issue or take a
// secret (API key create and rotate, service principal create and rotate,
// enrollment key create, webhook create with a signing secret) and finds none
// of the secrets in any audit row.
func TestAuditRowsHoldNoSecrets(t *testing.T) {
	w := fixture.NewWorld(t, "audit-logs", "api-keys", "service-principals", "enrollment-keys", "webhooks")
	secret := func(res fixture.Response, field string) string {
		t.Helper()
		if res.Status >= 300 {
			t.Fatalf("%d %s", res.Status, res.Body)
		}
		s, _ := res.JSON(t)[field].(string)
		if len(s) < 16 {
			t.Fatalf("no %s in %s", field, res.Body)
		}
		return s
	}
	key := w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "scan-key", "scopes": []string{"devices:read"}})
	secrets := []string{secret(key, "key")}
	secrets = append(secrets, secret(w.Call(t, http.MethodPost, "/api/v1/api-keys/"+key.JSON(t)["id"].(string)+"/rotate", fixture.AAdmin, nil), "key"))
	sp := w.Call(t, http.MethodPost, "/api/v1/service-principals", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "scan-sp", "scopes": []string{"devices:read"}})
	secrets = append(secrets, secret(sp, "key"))
	secrets = append(secrets, secret(w.Call(t, http.MethodPost, "/api/v1/service-principals/"+sp.JSON(t)["id"].(string)+"/rotate", fixture.AAdmin, nil), "key"))
	secrets = append(secrets, secret(w.Call(t, http.MethodPost, "/api/v1/enrollment-keys", fixture.AAdmin, map[string]any{"name": "scan-ekey", "siteId": w.A1.ID, "maxUsage": 5}), "key"))
	hookSecret := "whsec-audit-scan-5e1d9c0b7a"
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/webhooks", fixture.AAdmin, map[string]any{"name": "scan-hook",
		"url": "https://93.184.216.34/in", "secret": hookSecret, "events": []string{"device.offline"}}), http.StatusCreated)
	secrets = append(secrets, hookSecret)

	recs, err := audit.List(context.Background(), w.Env.Store, audit.Tenant(w.A.ID, ""), 200)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) < 6 {
		t.Fatalf("%d audit rows for six operations", len(recs))
	}
	for _, r := range recs {
		raw, _ := json.Marshal(r)
		for _, s := range secrets {
			if strings.Contains(string(raw), s) {
				t.Errorf("audit row %s holds a secret: %s", r.Action, raw)
			}
		}
	}
}
