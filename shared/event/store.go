package event

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Shards is the number of outbox partitions. One partition takes about 1,000
// writes a second before DynamoDB throttles it; events spread over all of them
// by a hash of their id.
const Shards = 16

// ShardPK is the partition key of outbox shard i: OUTBOX#00 .. OUTBOX#15.
func ShardPK(i int) string { return fmt.Sprintf("OUTBOX#%02d", i) }

// shardOf picks the shard of an event id.
func shardOf(id string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	return int(h.Sum32() % Shards)
}

// outboxItem is one unsent event. LeaseUntil (epoch milliseconds) and LeaseID
// are set by a drain that is sending it, so overlapping drains send it once.
type outboxItem struct {
	store.Keys
	Body       string `dynamodbav:"body"`
	LeaseUntil int64  `dynamodbav:"leaseUntil,omitempty"`
	LeaseID    string `dynamodbav:"leaseId,omitempty"`
}

// outbox is the event package's access to its rows.
type outbox struct{ st *store.Store }

// putWrite is the write that stores a pending event in its shard.
func (o outbox) putWrite(pk, sk, body string) *store.Write {
	return store.PutNew(outboxItem{Keys: store.Keys{PK: pk, SK: sk}, Body: body})
}

// due lists the items of shard i stamped at or before cutoff.
func (o outbox) due(ctx context.Context, i int, cutoff string) ([]outboxItem, error) {
	var items []outboxItem
	if err := o.st.AllInto(ctx, store.Query{PK: ShardPK(i), SKTo: cutoff}, &items); err != nil {
		return nil, fmt.Errorf("outbox shard %d: %w", i, err)
	}
	return items, nil
}

// lease claims an item for d: it succeeds only when the item still exists and
// no other drain holds an unexpired lease. It returns the lease id, or
// ok=false when the item is gone or leased.
func (o outbox) lease(ctx context.Context, it outboxItem, now time.Time, d time.Duration) (id string, ok bool, err error) {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id = hex.EncodeToString(b)
	free := expression.Name("leaseUntil").AttributeNotExists().
		Or(expression.Name("leaseUntil").LessThan(expression.Value(now.UnixMilli())))
	upd := expression.Set(expression.Name("leaseUntil"), expression.Value(now.Add(d).UnixMilli())).
		Set(expression.Name("leaseId"), expression.Value(id))
	err = o.st.Do(ctx, store.Change(it.PK, it.SK, upd).When(free).Exists())
	switch {
	case errors.Is(err, store.ErrConditionFailed):
		return "", false, nil
	case err != nil:
		return "", false, err
	}
	return id, true, nil
}

// clear deletes a sent item. With a lease id it deletes only while that lease
// is held; a sent item whose lease was taken over is left to the new holder
// (delivery is at least once).
func (o outbox) clear(ctx context.Context, pk, sk, leaseID string) error {
	w := store.Delete(pk, sk)
	if leaseID != "" {
		w.When(store.Is("leaseId", leaseID))
	}
	err := o.st.Do(ctx, w)
	if errors.Is(err, store.ErrConditionFailed) {
		return nil
	}
	return err
}
