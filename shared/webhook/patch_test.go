package webhook_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
)

// A PATCH body of the wrong shape names the field, nested ones by their dotted
// path, as the create body does; nothing is written.
func TestPatchWrongTypesNameTheField(t *testing.T) {
	w := newWorld(t)
	wh := w.create(t, aAdmin, hookBody(nil))
	path := base + "/" + wh.ID
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"name": 3}, "name"},
		{map[string]any{"url": true}, "url"},
		{map[string]any{"secret": 7}, "secret"},
		{map[string]any{"events": "device.offline"}, "events"},
		{map[string]any{"events": []any{1}}, "events"},
		{map[string]any{"headers": map[string]any{"key": "X-A"}}, "headers"},
		{map[string]any{"headers": []any{map[string]any{"key": 1, "value": "v"}}}, "headers.0.key"},
		{map[string]any{"headers": []any{map[string]any{"key": "X-A", "value": "v", "extra": 1}}}, "headers.0.extra"},
		{map[string]any{"status": []string{"paused"}}, "status"},
		{map[string]any{"retryPolicy": []int{1}}, "retryPolicy"},
		{map[string]any{"retryPolicy": map[string]any{"maxRetries": "3"}}, "retryPolicy.maxRetries"},
		{map[string]any{"retryPolicy": map[string]any{"maxRetries": 1.5}}, "retryPolicy.maxRetries"},
		{map[string]any{"retryPolicy": map[string]any{"maxRetriez": 3}}, "retryPolicy.maxRetriez"},
		{map[string]any{"retryPolicy": map[string]any{"maxDelayMs": 1}}, "retryPolicy.maxDelayMs"},
		{map[string]any{"url": nil}, "url"},
		{map[string]any{"events": nil}, "events"},
		{map[string]any{"headers": nil}, "headers"},
		{map[string]any{"status": nil}, "status"},
	} {
		res := w.call(t, http.MethodPatch, path, aAdmin, c.body)
		if res.Status != http.StatusBadRequest || fieldErrors(t, res)[c.field] == nil {
			t.Errorf("%v: %d %s, want 400 naming %s", c.body, res.Status, res.Body, c.field)
		}
	}
	var d webhook.Webhook
	fixture.Expect(t, w.call(t, http.MethodGet, path, aAdmin, nil), http.StatusOK).Decode(t, &d)
	if d.UpdatedAt != wh.UpdatedAt {
		t.Errorf("changed by bad PATCH bodies: %+v", d)
	}
}
