package ratelimit

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// StepWrite is one event of subject counted as a write of another change's
// transaction (agent elevation ingest counts its event in the transaction
// that records it, so a refused event writes nothing and a counted one costs
// no call of its own). It is the limiter's idle case (tat <= now: tat = now +
// interval), or with busy its second case (now < tat <= now + window -
// interval: tat += interval); both are compare-and-swap. A transaction whose
// idle step fails its condition is retried with the busy step; when that
// fails too, the rule refuses the event (Refused gives the retry delay).
func StepWrite(r Rule, subject string, now time.Time, busy bool) *store.Write {
	pk, sk := bucket(r, subject)
	iv := r.interval()
	nowMs := now.UnixMilli()
	tat := expression.Name("tat")
	if !busy {
		next := now.Add(iv)
		return store.Change(pk, sk, expression.Set(tat, expression.Value(next.UnixMilli())).
			Set(expression.Name("ttl"), expression.Value(store.TTL(next.Add(time.Second))))).
			When(tat.AttributeNotExists().Or(tat.LessThanEqual(expression.Value(nowMs))))
	}
	limit := now.Add(r.Window - iv).UnixMilli()
	return store.Change(pk, sk, expression.Add(tat, expression.Value(iv.Milliseconds())).
		Set(expression.Name("ttl"), expression.Value(store.TTL(now.Add(r.Window+time.Second))))).
		When(tat.GreaterThan(expression.Value(nowMs)).And(tat.LessThanEqual(expression.Value(limit))))
}

// Refused is the 429 of rule r for an event refused by StepWrite at now:
// retryAfter is one interval (the soonest a cell can free up), at least 1 s.
func Refused(r Rule) error {
	return fault.RateLimited(message, int((r.interval()+time.Second-1)/time.Second))
}
