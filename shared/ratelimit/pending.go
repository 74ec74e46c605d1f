package ratelimit

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// Pending is one event of a rule, admitted from its row as its caller read
// it (Limiter.Admit), that the caller counts when its request ends: in the
// request's own transaction when it writes one (CountWrite's protocol), on
// its own when it is refused. Settle counts it, once whichever way the
// request ends. A nil *Pending is an event counted already: Settle then only
// commits or refuses.
type Pending struct {
	limiter Limiter
	key     store.KeyRef
	rule    Rule
	read    store.Item
}

// Settle ends the event's request and counts the event once. A request
// refused before any write (refused: a bad body, a failed read) counts on its
// own, and the window's 429 wins over refused, as when it is checked first.
// Otherwise commit writes writes in one transaction with the count's write
// in it; when the count fails its condition (the window filled, or the row
// changed since it was read), the event counts on its own (CountOn: exact,
// 429 when the window is full) and the writes commit again without it. A
// commit that fails for another cause counts on its own, as a refusal.
func (p *Pending) Settle(ctx context.Context, refused error, writes []*store.Write, commit func(*store.Tx) error) error {
	if refused == nil && p == nil {
		return commit((&store.Tx{}).Add(writes...))
	}
	if refused == nil {
		tx := (&store.Tx{}).Add(writes...)
		w := tx.Include(p.limiter.CountWrite(p.key, p.rule, p.read, retoken))
		err := commit(tx)
		var te *store.TxError
		if errors.As(err, &te) && te.FailedOn(w) {
			if _, err := p.limiter.CountOn(ctx, p.key, p.rule, nil); err != nil {
				return err
			}
			return commit((&store.Tx{}).Add(writes...))
		}
		if err == nil {
			return nil
		}
		refused = err
	}
	if p == nil {
		return refused
	}
	var fe *fault.Error
	if _, err := p.limiter.CountFrom(ctx, p.key, p.rule, p.read, nil); errors.As(err, &fe) && fe.Kind == fault.KindRateLimited {
		return err
	}
	return refused
}

// retoken gives a count written in a transaction a fresh write token, as a
// single write's count gets from the store: a transaction leaves the token
// as it was, and a rebase is conditional on the token of the row it read, so
// without it a second rebase of the same read would apply over the first and
// drop its count (TestTransactionRebasesOfOneReadCountBoth).
func retoken(u expression.UpdateBuilder) expression.UpdateBuilder {
	return u.Set(expression.Name(store.TokenAttr), expression.Value(uuid.NewString()))
}
