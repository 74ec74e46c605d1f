package webhook_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
	"github.com/gale-rmm/gale/tests/fixture"
)

// The catalogue in code and the OpenAPI document's WebhookEventType agree.
func TestEventTypeCatalogueMatchesTheDocument(t *testing.T) {
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Enum []string `json:"enum"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	got := doc.Components.Schemas["WebhookEventType"].Enum
	want := eventtype.All()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("document %v\ncode     %v", got, want)
	}
	for _, typ := range []string{"device.offline", "user.login", "session.logout", "elevation.auto_approved"} {
		if !eventtype.Known(typ) {
			t.Errorf("%s is not in the catalogue", typ)
		}
	}
	if eventtype.Known(eventtype.Test) || !eventtype.Sendable(eventtype.Test) {
		t.Error("webhook.test must be sendable and not subscribable")
	}
}

// GET /webhooks/event-types lists the catalogue with descriptions and raised
// flags to every caller who may read webhooks (organization, partner without
// orgId, system, a restricted admin), and refuses a caller without
// organizations:read. The catalogue holds no tenant's data: every caller gets
// the same list.
func TestEventTypesRoute(t *testing.T) {
	w := newWorld(t)
	type list struct {
		Data       []eventtype.Type `json:"data"`
		Pagination struct{ Page, Limit, Total int }
	}
	var first list
	for i, c := range []string{aAdmin, aRestricted, pxAdmin, pxTech, cAdmin, sysAdmin} {
		res := fixture.Expect(t, w.call(t, http.MethodGet, base+"/event-types", c, nil), http.StatusOK)
		var l list
		res.Decode(t, &l)
		if i == 0 {
			first = l
			continue
		}
		if !slices.Equal(l.Data, first.Data) {
			t.Errorf("%s sees another catalogue", c)
		}
	}
	if !slices.Equal(first.Data, eventtype.Types()) || first.Pagination.Total != len(eventtype.All()) || len(first.Data) != first.Pagination.Total {
		t.Fatalf("catalogue %+v", first)
	}
	raised := map[string]bool{}
	for _, ty := range first.Data {
		if ty.Description == "" {
			t.Errorf("%s has no description", ty.Name)
		}
		raised[ty.Name] = ty.Raised
	}
	if !raised["device.offline"] || !raised["elevation.requested"] || raised["patch.installed"] || raised["script.failed"] {
		t.Errorf("raised flags %v", raised)
	}
	if _, ok := raised[eventtype.Test]; ok {
		t.Error("webhook.test is listed")
	}
	var page list
	fixture.Expect(t, w.call(t, http.MethodGet, base+"/event-types?page=2&limit=10", aAdmin, nil), http.StatusOK).Decode(t, &page)
	if len(page.Data) != 10 || page.Data[0] != first.Data[10] {
		t.Errorf("page 2 of 10: %+v", page)
	}
	fixture.Expect(t, w.call(t, http.MethodGet, base+"/event-types", aViewer, nil), http.StatusForbidden)
}
