package event

import (
	"context"
	"log/slog"

	"github.com/gale-rmm/gale/shared/store"
)

// CommitDeferred is Commit without the send: it commits tx with the events'
// outbox writes and returns the send (SQS, then the outbox clear) for the
// caller to run when it suits it, e.g. after its response on a hot path
// (agent elevation ingest). An event never sent stays in the outbox and the
// sweeper's drain sends it, so deferring never loses one.
func (p *Publisher) CommitDeferred(ctx context.Context, tx *store.Tx, events ...*Pending) (func(context.Context), error) {
	for _, e := range events {
		tx.Add(e.Write())
	}
	if err := p.Store.Commit(ctx, tx); err != nil {
		return nil, err
	}
	return func(ctx context.Context) {
		for _, e := range events {
			if err := p.send(ctx, e.pk, e.sk, e.body, ""); err != nil {
				slog.WarnContext(ctx, "event left in outbox", "event", e.Event.Type, "eventId", e.Event.ID, "err", err)
			}
		}
	}, nil
}
