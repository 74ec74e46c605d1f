package ratelimit

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// Pending is one event of Rule on the row at Key that its caller counts in a
// transaction of its own (CountWrite's protocol), having read the row (Read;
// nil when absent) in a call it made anyway. Its owner builds it; the code
// that writes the transaction settles it with Full, Commit and Settle, so the
// event counts once whichever way the request ends. A nil *Pending is an
// event counted already: every method then only passes through.
type Pending struct {
	Limiter Limiter
	Key     store.KeyRef
	Rule    Rule
	Read    store.Item

	counted bool
}

// Full refuses the event with 429 (retryAfter) when the row read is full:
// nothing is written, and a refused event does not count.
func (p *Pending) Full() error {
	if p == nil {
		return nil
	}
	full, after := p.Limiter.Full(p.Rule, p.Read, p.Limiter.Clock.Now())
	if !full {
		return nil
	}
	p.counted = true
	return fault.RateLimited(message, after)
}

// Commit commits the transaction build makes with the count's write in it.
// When the count fails its condition (the window filled, or the row changed
// since it was read), the event counts on its own (CountOn: exact, 429 when
// the window is full) and the transaction commits again without it.
func (p *Pending) Commit(ctx context.Context, build func() *store.Tx, commit func(*store.Tx) error) error {
	if p == nil || p.counted {
		return commit(build())
	}
	tx := build()
	w := tx.Include(p.Limiter.CountWrite(p.Key, p.Rule, p.Read, nil))
	err := commit(tx)
	var te *store.TxError
	if errors.As(err, &te) && te.FailedOn(w) {
		p.counted = true
		if _, err := p.Limiter.CountOn(ctx, p.Key, p.Rule, nil); err != nil {
			return err
		}
		return commit(build())
	}
	p.counted = err == nil
	return err
}

// Settle counts an event that err refused after the row was read (a bad
// body, a failed store) and that no transaction counted, so every event
// counts once; the window's 429 wins over err, as when it is checked first.
func (p *Pending) Settle(ctx context.Context, err error) error {
	if p == nil || p.counted {
		return err
	}
	p.counted = true
	var fe *fault.Error
	if _, cerr := p.Limiter.CountFrom(ctx, p.Key, p.Rule, p.Read, nil); errors.As(cerr, &fe) && fe.Kind == fault.KindRateLimited {
		return cerr
	}
	return err
}
