package webhook_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
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
