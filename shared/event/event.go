// Package event publishes platform events ({id, type, timestamp, orgId, data}) to
// the SQS event queue through a transactional outbox: the event is written as an
// outbox item in the same DynamoDB transaction as the change that raises it, then
// sent after the commit. A change that does not commit raises nothing; an event
// whose send fails after commit stays in the outbox, and the sweeper's
// outbox-drain job sends it later. Delivery is at least once: consumers dedupe on
// the event id.
//
// Rows: PK OUTBOX, SK <time>#<id>, body (the event JSON). The partition is
// platform-wide (not a tenant's) because only the sweeper reads it.
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
)

// Event is a platform event; it is also the webhook payload.
type Event struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Timestamp string `json:"timestamp"`
	OrgID     string `json:"orgId"`
	Data      any    `json:"data"`
}

// outboxPK is the outbox partition.
const outboxPK = "OUTBOX"

type outboxItem struct {
	store.Keys
	Body string `dynamodbav:"body"`
}

// Pending is an event raised in a transaction, not yet sent.
type Pending struct {
	Event Event
	sk    string
	body  string
}

// New stamps an event of type for orgID.
func New(clk clock.Clock, typ, orgID string, data any) (*Pending, error) {
	now := clk.Now()
	ev := Event{ID: uuid.NewString(), Type: typ, Timestamp: clock.Format(now), OrgID: orgID, Data: data}
	body, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("event %s: marshal: %w", typ, err)
	}
	return &Pending{Event: ev, sk: clock.Stamp(now) + "#" + ev.ID, body: string(body)}, nil
}

// Write is the outbox write to add to the change's transaction.
func (p *Pending) Write() *store.Write {
	return store.PutNew(outboxItem{Keys: store.Keys{PK: outboxPK, SK: p.sk}, Body: p.body})
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
		if err := p.send(ctx, e.sk, e.body); err != nil {
			slog.WarnContext(ctx, "event left in outbox", "event", e.Event.Type, "eventId", e.Event.ID, "err", err)
		}
	}
	return nil
}

// Raise publishes events that accompany no other write.
func (p *Publisher) Raise(ctx context.Context, events ...*Pending) error {
	return p.Commit(ctx, &store.Tx{}, events...)
}

func (p *Publisher) send(ctx context.Context, sk, body string) error {
	if p.QueueURL == "" {
		return fmt.Errorf("event: no queue configured")
	}
	if _, err := p.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(p.QueueURL), MessageBody: aws.String(body)}); err != nil {
		return fmt.Errorf("event: send: %w", err)
	}
	if err := p.Store.Do(ctx, store.Delete(outboxPK, sk)); err != nil {
		return fmt.Errorf("event: clear outbox: %w", err)
	}
	return nil
}

// Drain sends outbox items older than grace (so in-flight requests finish their
// own sends first) and returns how many it sent.
func (p *Publisher) Drain(ctx context.Context, grace time.Duration) (int, error) {
	cutoff := clock.Stamp(p.Store.Clock.Now().Add(-grace))
	var items []outboxItem
	if err := p.Store.AllInto(ctx, store.Query{PK: outboxPK, SKTo: cutoff}, &items); err != nil {
		return 0, fmt.Errorf("event: drain: %w", err)
	}
	sent := 0
	for _, it := range items {
		if err := p.send(ctx, it.SK, it.Body); err != nil {
			return sent, err
		}
		sent++
	}
	return sent, nil
}
