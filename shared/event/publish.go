package event

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

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
	send, err := p.CommitDeferred(ctx, tx, events...)
	if err != nil {
		return err
	}
	send(ctx)
	return nil
}

// CommitDeferred is Commit without the send: it commits tx with the events'
// outbox writes and returns the send (SQS, then the outbox clear) for the
// caller to run when it suits it, e.g. after the rest of its work on a hot
// path (agent elevation ingest), always before its response (Lambda freezes
// the process after it). An event never sent stays in the outbox and the
// sweeper's drain sends it, so deferring never loses one.
func (p *Publisher) CommitDeferred(ctx context.Context, tx *store.Tx, events ...*Pending) (func(context.Context), error) {
	send := func(ctx context.Context) {
		for _, e := range events {
			if err := p.send(ctx, e.pk, e.sk, e.body, ""); err != nil {
				slog.WarnContext(ctx, "event left in outbox", "event", e.Event.Type, "eventId", e.Event.ID, "err", err)
			}
		}
	}
	for _, e := range events {
		tx.Add(e.Write())
	}
	if err := p.Store.Commit(ctx, tx); err != nil {
		return nil, err
	}
	return send, nil
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
