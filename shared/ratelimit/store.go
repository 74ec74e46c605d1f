package ratelimit

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// bucket is the key of subject's GCRA row for r.
func bucket(r Rule, subject string) (pk, sk string) { return "RL#" + r.Name + "#" + subject, "GCRA" }

// take spends one cell of subject's bucket at now and answers the new tat, or
// a *limitedError carrying the current tat when no cell is free. An idle bucket
// (tat <= now) costs one conditional update; a busy one a second.
func (l Limiter) take(ctx context.Context, r Rule, subject string, now time.Time) (time.Time, error) {
	pk, sk := bucket(r, subject)
	iv := r.interval()
	nowMs := now.UnixMilli()
	// The row outlives its tat by nothing: once tat is past, an absent row and
	// an idle one mean the same.
	ttl := func(tat time.Time) int64 { return store.TTL(tat.Add(time.Second)) }

	idleTat := now.Add(iv)
	idle := expression.Name("tat").AttributeNotExists().Or(expression.Name("tat").LessThanEqual(expression.Value(nowMs)))
	err := l.St.Do(ctx, store.Change(pk, sk, expression.Set(expression.Name("tat"), expression.Value(idleTat.UnixMilli())).
		Set(expression.Name("ttl"), expression.Value(ttl(idleTat)))).When(idle))
	if !errors.Is(err, store.ErrConditionFailed) {
		return idleTat, err
	}

	var row struct {
		TAT int64 `dynamodbav:"tat"`
	}
	limit := now.Add(r.Window - iv).UnixMilli()
	busy := expression.Name("tat").GreaterThan(expression.Value(nowMs)).
		And(expression.Name("tat").LessThanEqual(expression.Value(limit)))
	err = l.St.UpdateReturn(ctx, store.Change(pk, sk, expression.Add(expression.Name("tat"), expression.Value(iv.Milliseconds())).
		Set(expression.Name("ttl"), expression.Value(ttl(now.Add(r.Window))))).When(busy), &row)
	if errors.Is(err, store.ErrConditionFailed) {
		tat, rerr := l.tat(ctx, r, subject)
		if rerr != nil {
			return time.Time{}, rerr
		}
		return time.Time{}, &limitedError{tat: tat}
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(row.TAT), nil
}

// tat reads subject's theoretical arrival time (the zero time when it has none).
func (l Limiter) tat(ctx context.Context, r Rule, subject string) (time.Time, error) {
	pk, sk := bucket(r, subject)
	var row struct {
		TAT int64 `dynamodbav:"tat"`
	}
	err := l.St.Get(ctx, pk, sk, &row)
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, err
	}
	return time.UnixMilli(row.TAT), nil
}

// clear deletes subject's bucket.
func (l Limiter) clear(ctx context.Context, r Rule, subject string) error {
	pk, sk := bucket(r, subject)
	return l.St.Do(ctx, store.Delete(pk, sk))
}

// BucketKey is the row of subject's bucket for r, for callers that read it in
// a batch with other rows (see Refuses).
func BucketKey(r Rule, subject string) store.KeyRef {
	pk, sk := bucket(r, subject)
	return store.KeyRef{PK: pk, SK: sk}
}

// Refuses reports whether the bucket row item (nil when absent) would refuse
// an event at now, and if so the seconds until it would not.
func Refuses(r Rule, item store.Item, now time.Time) (bool, int, error) {
	if item == nil {
		return false, 0, nil
	}
	var row struct {
		TAT int64 `dynamodbav:"tat"`
	}
	if err := store.Unmarshal(item, &row); err != nil {
		return false, 0, err
	}
	free := time.UnixMilli(row.TAT).Add(-(r.Window - r.interval()))
	if !free.After(now) {
		return false, 0, nil
	}
	return true, retryAfter(now, free), nil
}
