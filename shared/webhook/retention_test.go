package webhook_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Deliveries and the audit rows beside them carry a ttl from the injected
// clock: 30 days for a delivery (the store's default), 400 for an audit row,
// so DynamoDB removes history and nothing sweeps it.
func TestDeliveriesAndAuditRowsExpire(t *testing.T) {
	rc := newReceiver(t, 200)
	w := newWorld(t, rc)
	wh := w.create(t, aAdmin, hookBody(map[string]any{"url": "https://example.com:" + rc.port() + "/in"}))
	w.env.Clock.Advance(time.Minute)
	sent := w.env.Clock.Now()
	res := fixture.Expect(t, w.call(t, http.MethodPost, base+"/"+wh.ID+"/test", aAdmin, nil), http.StatusAccepted)
	var q struct{ Delivery struct{ ID string } }
	res.Decode(t, &q)
	w.pump(t)

	k := webhook.DeliveryKey(w.a.ID, wh.ID, q.Delivery.ID)
	items, err := w.env.Store.BatchGet(context.Background(), store.KeyRef{PK: k.PK, SK: k.SK})
	if err != nil {
		t.Fatal(err)
	}
	var d webhook.Delivery
	if err := store.Unmarshal(items[k.PK+"|"+k.SK], &d); err != nil {
		t.Fatal(err)
	}
	if want := sent.Add(webhook.DefaultDeliveryRetention).Unix(); d.TTL != want {
		t.Fatalf("delivery ttl %d, want %d (30 days after it was made)", d.TTL, want)
	}

	rows, err := w.env.Store.All(context.Background(), store.Query{PK: "AUDIT#" + store.OrgPK(w.a.ID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) == 0 {
		t.Fatal("no audit rows")
	}
	for _, it := range rows {
		var r audit.Record
		if err := store.Unmarshal(it, &r); err != nil {
			t.Fatal(err)
		}
		at, err := time.Parse(time.RFC3339Nano, r.At)
		if err != nil {
			t.Fatal(err)
		}
		if want := at.Add(audit.DefaultRetention).Unix(); r.TTL != want {
			t.Errorf("audit row %s (%s): ttl %d, want %d (400 days after it)", r.ID, r.Action, r.TTL, want)
		}
	}
}
