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
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
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

// Publisher commits changes with their events and sends them.
type Publisher struct {
	Store    *store.Store
	SQS      *sqs.Client
	QueueURL string
}

// Commit adds the events' outbox writes to tx, commits it, then sends the events.
// A send failure after the commit is logged, not returned: the change happened and
// the sweeper will send the event.
func (p *Publisher) Commit(ctx context.Context, tx *store.Tx, events ...*Pending) error {
	for _, e := range events {
		tx.Add(e.Write())
	}
	if err := p.Store.Commit(ctx, tx); err != nil {
		return err
	}
	for _, e := range events {
		if err := p.send(ctx, e.pk, e.sk, e.body, ""); err != nil {
			slog.WarnContext(ctx, "event left in outbox", "event", e.Event.Type, "eventId", e.Event.ID, "err", err)
		}
	}
	return nil
}

// Raise publishes events that accompany no other write.
func (p *Publisher) Raise(ctx context.Context, events ...*Pending) error {
	return p.Commit(ctx, &store.Tx{}, events...)
}

func (p *Publisher) send(ctx context.Context, pk, sk, body, leaseID string) error {
	if p.QueueURL == "" {
		return fmt.Errorf("event: no queue configured")
	}
	if _, err := p.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.QueueURL), MessageBody: aws.String(body)}); err != nil {
		return fmt.Errorf("event: send: %w", err)
	}
	if err := (outbox{st: p.Store}).clear(ctx, pk, sk, leaseID); err != nil {
		return fmt.Errorf("event: clear outbox: %w", err)
	}
	return nil
}

// Drain sends outbox items older than grace (so in-flight requests finish their
// own sends first), shard by shard, and returns how many it sent. Each item is
// leased before it is sent, so drains that overlap send it once.
func (p *Publisher) Drain(ctx context.Context, grace time.Duration) (int, error) {
	ob := outbox{st: p.Store}
	sent := 0
	for i := range Shards {
		now := p.Store.Clock.Now()
		items, err := ob.due(ctx, i, clock.Stamp(now.Add(-grace)))
		if err != nil {
			return sent, fmt.Errorf("event: drain: %w", err)
		}
		for _, it := range items {
			id, ok, err := ob.lease(ctx, it, p.Store.Clock.Now(), LeaseFor)
			if err != nil {
				return sent, fmt.Errorf("event: drain: lease: %w", err)
			}
			if !ok {
				continue // sent or being sent by another drain
			}
			if err := p.send(ctx, it.PK, it.SK, it.Body, id); err != nil {
				return sent, err
			}
			sent++
		}
	}
	return sent, nil
}
