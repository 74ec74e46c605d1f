package tenant_test

import (
	"net/http"
	"testing"
)

// The PATCH bodies of organizations, sites and device groups refuse null, and
// a wrong type, by the field's name; a device group's siteId null detaches it.
func TestPatchRefusesNullByName(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	for _, c := range []struct {
		h     http.Handler
		path  string
		body  map[string]any
		field string
	}{
		{w.orgs, orgs + "/" + w.a.ID, map[string]any{"name": nil}, "name"},
		{w.orgs, orgs + "/" + w.a.ID, map[string]any{"status": nil}, "status"},
		{w.orgs, orgs + "/" + w.a.ID, map[string]any{"name": 1}, "name"},
		{w.sites, sites + "/" + w.a1.ID, map[string]any{"name": nil}, "name"},
		{w.sites, sites + "/" + w.a1.ID, map[string]any{"timezone": nil}, "timezone"},
		{w.sites, groups + "/" + w.gA1.ID, map[string]any{"name": nil}, "name"},
		{w.sites, groups + "/" + w.gA1.ID, map[string]any{"siteId": 3}, "siteId"},
	} {
		invalid(t, w.call(t, c.h, http.MethodPatch, c.path, aAdmin, c.body), c.field)
	}
}
