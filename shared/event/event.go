// Package event publishes platform events ({id, type, timestamp, orgId, data}) to
// the SQS event queue through a transactional outbox: the event is written as an
// outbox item in the same DynamoDB transaction as the change that raises it, then
// sent after the commit. A change that does not commit raises nothing; an event
// whose send fails after commit stays in the outbox, and the sweeper's
// outbox-drain job sends it later. Delivery is at least once: consumers dedupe on
// the event id.
//
// Rows: PK OUTBOX#NN (NN = 00..15, from a hash of the event id, so no partition
// gets hot), SK <time>#<id>, body (the event JSON), and while a drain sends it
// leaseUntil (epoch ms) and leaseId. The partitions are platform-wide (not a
// tenant's) because only the sweeper reads them, one shard after another.
//
// A drain leases each due item with a conditional update before sending it and
// deletes it (while it still holds the lease) after: overlapping drains send an
// item once. A drain that dies after leasing leaves the item to a drain after
// the lease expires.
package event

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Event is a platform event; it is also the webhook payload.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	OrgID     string `json:"orgId"`
	Data      any    `json:"data"`
}

// LeaseFor is how long a drain holds an item while it sends it.
const LeaseFor = 2 * time.Minute

// Pending is an event raised in a transaction, not yet sent.
type Pending struct {
	Event Event
	pk    string
	sk    string
	body  string
}

// New stamps an event of type for orgID.
func New(clk clock.Clock, typ, orgID string, data any) (*Pending, error) {
	if !eventtype.Sendable(typ) {
		return nil, fmt.Errorf("event: %q is not in the catalogue (shared/webhook/eventtype)", typ)
	}
	now := clk.Now()
	ev := Event{ID: uuid.NewString(), Type: typ, Timestamp: clock.Format(now), OrgID: orgID, Data: data}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("event %s: marshal: %w", typ, err)
	}
	return &Pending{Event: ev, pk: ShardPK(shardOf(ev.ID)), sk: clock.Stamp(now) + "#" + ev.ID, body: string(body)}, nil
}

// Write is the outbox write to add to the change's transaction.
func (p *Pending) Write() *store.Write {
	return outbox{}.putWrite(p.pk, p.sk, p.body)
}
