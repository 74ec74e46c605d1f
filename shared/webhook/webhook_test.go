package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
)

const base = "/api/v1/webhooks"

func hookBody(extra map[string]any) map[string]any {
	b := map[string]any{"name": "Ops", "url": "https://hooks.example.com/in", "events": []string{"device.offline", "alert.triggered"}}
	for k, v := range extra {
		b[k] = v
	}
	return b
}

func fieldErrors(t *testing.T, res fixture.Response) map[string]any {
	t.Helper()
	d, _ := res.JSON(t)["details"].(map[string]any)
	fe, _ := d["fieldErrors"].(map[string]any)
	return fe
}

func TestCreateGetListShowNoSecretsAndMask(t *testing.T) {
	w := newWorld(t)
	wh := w.create(t, aAdmin, hookBody(map[string]any{
		"url":     "https://user:pa55@hooks.example.com/in?token=q-SECRET#frag",
		"secret":  "whsec-SECRET-value",
		"headers": []map[string]string{{"key": "Authorization", "value": "Bearer hdr-SECRET"}},
	}))
	if wh.OrgID != w.a.ID || !wh.HasSecret || wh.URL != "https://hooks.example.com/in" || wh.Status != webhook.StatusActive ||
		len(wh.Headers) != 1 || wh.Headers[0].Value != webhook.MaskedValue || wh.Headers[0].Key != "Authorization" {
		t.Fatalf("created %+v", wh)
	}
	res := fixture.Expect(t, w.call(t, http.MethodGet, base+"/"+wh.ID, aAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 3)
	var d struct {
		webhook.Webhook
		DeliveryStats webhook.Stats `json:"deliveryStats"`
	}
	res.Decode(t, &d)
	if d.URL != wh.URL || d.DeliveryStats.Total != 0 || d.DeliveryStats.LastDeliveredAt != nil {
		t.Errorf("get: %+v", d)
	}
	for _, body := range [][]byte{res.Body} {
		for _, s := range []string{"SECRET", "pa55", "secretSealed", "urlSealed"} {
			if strings.Contains(string(body), s) {
				t.Errorf("response shows %q: %s", s, body)
			}
		}
	}
	// A partner caller names the organization (a second later: lists are newest first).
	w.env.Clock.Advance(time.Second)
	cr := fixture.Expect(t, w.call(t, http.MethodPost, base, pxAdmin, hookBody(map[string]any{"orgId": w.a.ID, "name": "Partner hook"})), http.StatusCreated)
	fixture.Budget(t, cr, 4)
	list := fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK)
	fixture.Budget(t, list, 3)
	var l struct {
		Data       []webhook.Webhook
		Pagination struct{ Page, Limit, Total int }
	}
	list.Decode(t, &l)
	if l.Pagination.Total != 2 || len(l.Data) != 2 || l.Data[0].Name != "Partner hook" {
		t.Errorf("list: %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID+"&status=paused", pxAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != 0 {
		t.Errorf("status filter: %+v", l)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID+"&page=2&limit=1", sysAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != 2 || len(l.Data) != 1 || l.Data[0].ID != wh.ID {
		t.Errorf("page 2: %+v", l)
	}
	// The table holds none of the secrets in the clear.
	scanFor(t, w, "whsec-SECRET-value", "q-SECRET", "pa55", "hdr-SECRET")
}

// scanFor fails when any attribute of any item contains one of needles.
func scanFor(t *testing.T, w *world, needles ...string) {
	t.Helper()
	out, err := w.env.Store.DB.Scan(context.Background(), &dynamodb.ScanInput{TableName: &w.env.Store.Table})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) == 0 {
		t.Fatal("empty table")
	}
	for _, it := range out.Items {
		raw, _ := json.Marshal(it)
		for _, n := range needles {
			if strings.Contains(string(raw), n) {
				t.Errorf("table item %v holds %q in the clear", it["SK"], n)
			}
		}
	}
}

func TestTenancyAndPermissions(t *testing.T) {
	w := newWorld(t)
	wh := w.create(t, aAdmin, hookBody(nil))
	path := base + "/" + wh.ID
	// Other tenants: 404 by id and by orgId, never data.
	for _, c := range []string{bAdmin, cAdmin, pyAdmin, pxSelectedB} {
		for _, r := range []struct{ m, p string }{{http.MethodGet, path}, {http.MethodPatch, path}, {http.MethodDelete, path},
			{http.MethodGet, path + "/deliveries"}, {http.MethodPost, path + "/test"}} {
			var body any
			if r.m == http.MethodPatch {
				body = map[string]any{"name": "x"}
			}
			if res := w.call(t, r.m, r.p, c, body); res.Status != http.StatusNotFound {
				t.Errorf("%s %s %s: %d, want 404: %s", c, r.m, r.p, res.Status, res.Body)
			}
		}
	}
	for _, c := range []string{pyAdmin, pxSelectedB} {
		fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.a.ID, c, nil), http.StatusNotFound)
		fixture.Expect(t, w.call(t, http.MethodPost, base, c, hookBody(map[string]any{"orgId": w.a.ID})), http.StatusNotFound)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+w.b.ID, aAdmin, nil), http.StatusNotFound)
	fixture.Expect(t, w.call(t, http.MethodGet, base+"?orgId="+uuid.NewString(), sysAdmin, nil), http.StatusNotFound)
	// Partner and system callers must name the organization.
	for _, c := range []string{pxAdmin, sysAdmin} {
		res := fixture.Expect(t, w.call(t, http.MethodGet, base, c, nil), http.StatusBadRequest)
		if res.JSON(t)["error"] != "Organization context required" {
			t.Errorf("%s list without orgId: %s", c, res.Body)
		}
		res = fixture.Expect(t, w.call(t, http.MethodPost, base, c, hookBody(nil)), http.StatusBadRequest)
		if res.JSON(t)["error"] != "Organization context required" {
			t.Errorf("%s create without orgId: %s", c, res.Body)
		}
	}
	// Reads need organizations:read, writes organizations:write and MFA; a
	// site-restricted admin may not change organization-wide webhooks.
	fixture.Expect(t, w.call(t, http.MethodGet, base, aViewer, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodGet, path, pxTech, nil), http.StatusOK)
	fixture.Expect(t, w.call(t, http.MethodPatch, path, pxTech, map[string]any{"name": "x"}), http.StatusForbidden)
	if res := fixture.Expect(t, w.call(t, http.MethodPost, base, aNoMFA, hookBody(nil)), http.StatusForbidden); res.JSON(t)["code"] != "MFA_REQUIRED" {
		t.Errorf("no MFA: %s", res.Body)
	}
	fixture.Expect(t, w.call(t, http.MethodDelete, path, aNoMFA, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodPost, base, aRestricted, hookBody(nil)), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodPost, path+"/test", aRestricted, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodDelete, path, aRestricted, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodGet, path, aRestricted, nil), http.StatusOK)
	// Nothing changed.
	var d webhook.Webhook
	fixture.Expect(t, w.call(t, http.MethodGet, path, aAdmin, nil), http.StatusOK).Decode(t, &d)
	if d.Name != "Ops" || d.UpdatedAt != wh.UpdatedAt {
		t.Errorf("changed by a refused call: %+v", d)
	}
	var l struct{ Pagination struct{ Total int } }
	fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != 1 {
		t.Errorf("%d webhooks after refused creates", l.Pagination.Total)
	}
	// Admin routes are system scope.
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/admin/webhook-dlq", pxAdmin, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodPost, "/admin/webhook-dlq/redrive", aAdmin, nil), http.StatusForbidden)
	fixture.Expect(t, w.call(t, http.MethodGet, "/admin/webhook-dlq", sysAdmin, nil), http.StatusOK)
	// Account deletion administration shares the admin function (shared/deletion).
	fixture.Expect(t, w.call(t, http.MethodGet, "/api/v1/admin/account-deletion-requests", sysAdmin, nil), http.StatusOK)
}

func TestBadInputNamesTheFieldAndChangesNothing(t *testing.T) {
	w := newWorld(t)
	wh := w.create(t, aAdmin, hookBody(nil))
	path := base + "/" + wh.ID
	long := strings.Repeat("x", 256)
	cases := []struct {
		name, method, path string
		body               any
		field              string
	}{
		{"missing name", http.MethodPost, base, map[string]any{"url": "https://hooks.example.com/", "events": []string{"device.online"}}, "name"},
		{"long name", http.MethodPost, base, hookBody(map[string]any{"name": long}), "name"},
		{"control name", http.MethodPost, base, hookBody(map[string]any{"name": "a\x00b"}), "name"},
		{"name type", http.MethodPost, base, hookBody(map[string]any{"name": 5}), "name"},
		{"missing url", http.MethodPost, base, map[string]any{"name": "x", "events": []string{"device.online"}}, "url"},
		{"url type", http.MethodPost, base, hookBody(map[string]any{"url": []string{"https://x.example.com"}}), "url"},
		{"no events", http.MethodPost, base, hookBody(map[string]any{"events": []string{}}), "events"},
		{"unknown event", http.MethodPost, base, hookBody(map[string]any{"events": []string{"device.online", "device.exploded"}}), "events.1"},
		{"test type not subscribable", http.MethodPost, base, hookBody(map[string]any{"events": []string{"webhook.test"}}), "events.0"},
		{"events type", http.MethodPost, base, hookBody(map[string]any{"events": "device.online"}), "events"},
		{"short secret", http.MethodPost, base, hookBody(map[string]any{"secret": ""}), "secret"},
		{"long secret", http.MethodPost, base, hookBody(map[string]any{"secret": long}), "secret"},
		{"reserved header", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]string{{"key": "X-Service-Signature", "value": "x"}}}), "headers.0.key"},
		{"reserved host", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]string{{"key": "a", "value": "1"}, {"key": "Host", "value": "x"}}}), "headers.1.key"},
		{"duplicate header", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]string{{"key": "X-A", "value": "1"}, {"key": "x-a", "value": "2"}}}), "headers.1.key"},
		{"bad header name", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]string{{"key": "Bad Name", "value": "1"}}}), "headers.0.key"},
		{"header newline", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]string{{"key": "X-A", "value": "1\r\nX-B: 2"}}}), "headers.0.value"},
		{"header unknown field", http.MethodPost, base, hookBody(map[string]any{"headers": []map[string]any{{"key": "X-A", "value": "1", "extra": true}}}), "headers.0.extra"},
		{"retries", http.MethodPost, base, hookBody(map[string]any{"retryPolicy": map[string]any{"maxRetries": 11}}), "retryPolicy.maxRetries"},
		{"initial delay", http.MethodPost, base, hookBody(map[string]any{"retryPolicy": map[string]any{"initialDelayMs": 99}}), "retryPolicy.initialDelayMs"},
		{"multiplier", http.MethodPost, base, hookBody(map[string]any{"retryPolicy": map[string]any{"backoffMultiplier": 0.5}}), "retryPolicy.backoffMultiplier"},
		{"max delay", http.MethodPost, base, hookBody(map[string]any{"retryPolicy": map[string]any{"maxDelayMs": 900001}}), "retryPolicy.maxDelayMs"},
		{"unknown field", http.MethodPost, base, hookBody(map[string]any{"secretz": "x"}), "secretz"},
		{"case-mismatched field", http.MethodPost, base, hookBody(map[string]any{"Name": "x"}), "Name"},
		{"orgId", http.MethodPost, base + "", hookBody(map[string]any{"orgId": "nope"}), "orgId"},
		{"list orgId", http.MethodGet, base + "?orgId=nope", nil, "orgId"},
		{"list status", http.MethodGet, base + "?status=on", nil, "status"},
		{"list page", http.MethodGet, base + "?page=0", nil, "page"},
		{"list limit", http.MethodGet, base + "?limit=101", nil, "limit"},
		{"bad id", http.MethodGet, base + "/nope", nil, "id"},
		{"patch bad id", http.MethodPatch, base + "/nope", map[string]any{"name": "x"}, "id"},
		{"patch status", http.MethodPatch, path, map[string]any{"status": "disabled"}, "status"},
		{"patch null name", http.MethodPatch, path, map[string]any{"name": nil}, "name"},
		{"patch events", http.MethodPatch, path, map[string]any{"events": []string{}}, "events"},
		{"patch masked header unknown", http.MethodPatch, path, map[string]any{"headers": []map[string]string{{"key": "X-New", "value": "********"}}}, "headers.0.value"},
		{"patch unknown field", http.MethodPatch, path, map[string]any{"nmae": "x"}, "nmae"},
		{"deliveries status", http.MethodGet, path + "/deliveries?status=lost", nil, "status"},
		{"deliveries page", http.MethodGet, path + "/deliveries?page=-1", nil, "page"},
		{"test event", http.MethodPost, path + "/test", map[string]any{"event": "nope"}, "event"},
		{"test payload", http.MethodPost, path + "/test", map[string]any{"payload": []int{1}}, "payload"},
		{"test unknown", http.MethodPost, path + "/test", map[string]any{"evnt": "webhook.test"}, "evnt"},
		{"retry bad delivery id", http.MethodPost, path + "/retry/nope", nil, "deliveryId"},
		{"dlq limit", http.MethodGet, "/admin/webhook-dlq?limit=11", nil, "limit"},
		{"redrive limit", http.MethodPost, "/admin/webhook-dlq/redrive", map[string]any{"limit": 0}, "limit"},
	}
	for _, c := range cases {
		caller := aAdmin
		if strings.Contains(c.path, "admin/") {
			caller = sysAdmin
		}
		res := w.call(t, c.method, c.path, caller, c.body)
		if res.Status != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400: %s", c.name, res.Status, res.Body)
			continue
		}
		if fe := fieldErrors(t, res); fe[c.field] == nil {
			t.Errorf("%s: fieldErrors %v do not name %s", c.name, fe, c.field)
		}
	}
	// Malformed JSON and an empty PATCH.
	fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, `{"name": "x",`), http.StatusBadRequest)
	fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, `{"name": "x", "name": "y"}`), http.StatusBadRequest)
	if res := fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{}), http.StatusBadRequest); res.JSON(t)["error"] != "No updates provided" {
		t.Errorf("empty patch: %s", res.Body)
	}
	// Nothing changed: one webhook, as created.
	var d webhook.Webhook
	fixture.Expect(t, w.call(t, http.MethodGet, path, aAdmin, nil), http.StatusOK).Decode(t, &d)
	if d.UpdatedAt != wh.UpdatedAt || d.Status != "active" || len(d.Events) != 2 {
		t.Errorf("changed by bad input: %+v", d)
	}
	var l struct{ Pagination struct{ Total int } }
	fixture.Expect(t, w.call(t, http.MethodGet, base, aAdmin, nil), http.StatusOK).Decode(t, &l)
	if l.Pagination.Total != 1 {
		t.Errorf("%d webhooks after bad creates", l.Pagination.Total)
	}
}

func TestInvalidWebhookURLGivesTheReason(t *testing.T) {
	w := newWorld(t)
	w.dns.set("internal.example.com", "10.0.0.8")
	wh := w.create(t, aAdmin, hookBody(nil))
	for _, u := range []string{"http://hooks.example.com/", "https://localhost/", "https://x.localhost/", "https://nas.local/",
		"https://10.0.0.1/", "https://169.254.169.254/latest/meta-data", "https://[::1]/", "https://[::ffff:10.0.0.1]/",
		"https://[64:ff9b::a00:1]/", "https://2130706433/", "https://0x7f000001/", "https://0177.0.0.1/", "https://127.1/",
		"https://internal.example.com/", "https://nowhere.example.com/", "https://127.0.0.2/",
		// Issue 18: IPv4-translated, NAT64 (both prefixes), 6to4 and Teredo around loopback and metadata.
		"https://[::ffff:0:127.0.0.1]/", "https://[::ffff:0:a9fe:a9fe]/", "https://[64:ff9b::169.254.169.254]/",
		"https://[64:ff9b:1:7f00:0:100::]/", "https://[2002:7f00:1::1]/", "https://[2002:a9fe:a9fe::]/",
		"https://[2001:0:808:404:0:0:80ff:fffe]/", "https://[2001:0:a9fe:a9fe::f7f7:f7f7]/"} {
		for _, req := range []struct{ m, p string }{{http.MethodPost, base}, {http.MethodPatch, base + "/" + wh.ID}} {
			res := w.call(t, req.m, req.p, aAdmin, hookBody(map[string]any{"url": u}))
			if req.m == http.MethodPatch {
				res = w.call(t, req.m, req.p, aAdmin, map[string]any{"url": u})
			}
			body := res.JSON(t)
			d, _ := body["details"].(map[string]any)
			if res.Status != http.StatusBadRequest || body["error"] != "Invalid webhook URL" || d["reason"] == "" || fieldErrors(t, res)["url"] == nil {
				t.Errorf("%s %s: %d %s", req.m, u, res.Status, res.Body)
			}
		}
	}
	// With another bad field, the URL's reason joins the field errors.
	res := fixture.Expect(t, w.call(t, http.MethodPost, base, aAdmin, hookBody(map[string]any{"url": "http://x.example.com/", "name": ""})), http.StatusBadRequest)
	if fe := fieldErrors(t, res); fe["url"] == nil || fe["name"] == nil {
		t.Errorf("both fields: %s", res.Body)
	}
}

func TestPatchKeepsMaskedValuesAndClears(t *testing.T) {
	w := newWorld(t)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": "https://u:p@hooks.example.com/in?sig=abc", "secret": "s3cret",
		"headers": []map[string]string{{"key": "X-Token", "value": "tok-1"}, {"key": "X-Other", "value": "o-1"}}}))
	path := base + "/" + wh.ID
	// Send back what GET showed, change the name: the stored URL and header values stay.
	res := fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"name": "Renamed", "url": wh.URL,
		"headers":     []map[string]string{{"key": "X-Token", "value": webhook.MaskedValue}, {"key": "X-New", "value": "n-1"}},
		"retryPolicy": map[string]any{"maxRetries": 2}}), http.StatusOK)
	fixture.Budget(t, res, 4)
	var got webhook.Webhook
	res.Decode(t, &got)
	if got.Name != "Renamed" || got.URL != "https://hooks.example.com/in" || len(got.Headers) != 2 || got.RetryPolicy == nil ||
		got.RetryPolicy.MaxRetries != 2 || got.RetryPolicy.InitialDelayMs != 1000 || !got.HasSecret {
		t.Fatalf("patched: %+v", got)
	}
	h := w.openHook(t, wh.ID)
	if h.URL != "https://u:p@hooks.example.com/in?sig=abc" || h.Headers["X-Token"] != "tok-1" || h.Headers["X-New"] != "n-1" || h.Headers["X-Other"] != "" {
		t.Errorf("stored after patch: %+v", h)
	}
	// secret and retryPolicy null clear; status is stored as given.
	fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"secret": nil, "retryPolicy": nil, "status": "paused"}), http.StatusOK).Decode(t, &got)
	if got.HasSecret || got.RetryPolicy != nil || got.Status != "paused" {
		t.Errorf("cleared: %+v", got)
	}
	// A new URL is validated and stored.
	fixture.Expect(t, w.call(t, http.MethodPatch, path, aAdmin, map[string]any{"url": "https://8.8.8.8/new?k=1"}), http.StatusOK).Decode(t, &got)
	if got.URL != "https://8.8.8.8/new" || w.openHook(t, wh.ID).URL != "https://8.8.8.8/new?k=1" {
		t.Errorf("new url: %+v", got)
	}
}

// stored is a webhook's unsealed configuration, read as the worker reads it.
type stored struct {
	URL     string
	Secret  string
	Headers map[string]string
}

func (w *world) openHook(t testing.TB, id string) stored {
	t.Helper()
	var s stored
	r, err := webhook.Store{St: w.env.Store}.ByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	u, sec, hs, err := webhook.Open(w.worker.Box, r)
	if err != nil {
		t.Fatal(err)
	}
	s.URL, s.Secret, s.Headers = u, string(sec), map[string]string{}
	for _, h := range hs {
		s.Headers[h.Key] = h.Value
	}
	return s
}

func TestDeleteRemovesTheWebhookAndItsDeliveries(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": rc.url("/in")}))
	for range 3 {
		fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	}
	w.pump(t)
	res := fixture.Expect(t, w.call(t, http.MethodDelete, base+"/"+wh.ID, aAdmin, nil), http.StatusOK)
	if string(res.Body) != "{\"success\":true}\n" {
		t.Errorf("delete body %s", res.Body)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"/"+wh.ID, aAdmin, nil), http.StatusNotFound)
	fixture.Expect(t, w.call(t, http.MethodDelete, base+"/"+wh.ID, aAdmin, nil), http.StatusNotFound)
	items, err := w.env.Store.All(context.Background(), store.Query{PK: "ORG#" + w.a.ID, SKPrefix: "WHDLV#"})
	if err != nil || len(items) != 0 {
		t.Errorf("%d deliveries left (%v)", len(items), err)
	}
}
