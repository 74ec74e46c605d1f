package ratelimit

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// window is the key of subject's window of r that starts at start.
func window(r Rule, subject string, start time.Time) (pk, sk string) {
	return "RL#" + r.Name + "#" + subject, strconv.FormatInt(start.Unix(), 10)
}

// bump adds one to the window's count unless it has reached r.Limit (then
// store.ErrConditionFailed); the row expires at end.
func (l Limiter) bump(ctx context.Context, r Rule, subject string, start, end time.Time) error {
	pk, sk := window(r, subject, start)
	upd := expression.Add(expression.Name("n"), expression.Value(1)).
		Set(expression.Name("ttl"), expression.Value(store.TTL(end)))
	room := expression.Name("n").AttributeNotExists().Or(expression.Name("n").LessThan(expression.Value(r.Limit)))
	return l.St.Do(ctx, store.Change(pk, sk, upd).When(room))
}

// count reads the window's count (0 when it has none).
func (l Limiter) count(ctx context.Context, r Rule, subject string, start time.Time) (int, error) {
	pk, sk := window(r, subject, start)
	var it struct {
		N int `dynamodbav:"n"`
	}
	err := l.St.Get(ctx, pk, sk, &it)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return it.N, err
}

// clear deletes the window.
func (l Limiter) clear(ctx context.Context, r Rule, subject string, start time.Time) error {
	pk, sk := window(r, subject, start)
	return l.St.Do(ctx, store.Delete(pk, sk))
}
