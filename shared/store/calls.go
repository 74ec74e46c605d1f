package store

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// Calls counts DynamoDB API calls made with a context, the items they read and
// the capacity units they consumed. The calls and the units are the figures
// each endpoint's budgets are asserted against (tests/fixture); the items read
// (a Query's or Scan's ScannedCount, the items a GetItem, BatchGetItem or
// TransactGetItems answered) are what the list benchmarks report.
type Calls struct {
	n, items atomic.Int64
	// Capacity in half units: the smallest a read is billed (an eventually
	// consistent read of up to 4 KB) is half a read unit.
	rcu2, wcu2 atomic.Int64
}

// N returns the count so far.
func (c *Calls) N() int { return int(c.n.Load()) }

// Items returns the items read so far.
func (c *Calls) Items() int { return int(c.items.Load()) }

// RCU returns the read capacity units consumed so far.
func (c *Calls) RCU() float64 { return float64(c.rcu2.Load()) / 2 }

// WCU returns the write capacity units consumed so far.
func (c *Calls) WCU() float64 { return float64(c.wcu2.Load()) / 2 }

type callsKey struct{}

// WithCalls returns a context that counts the DynamoDB calls made with it.
func WithCalls(ctx context.Context) (context.Context, *Calls) {
	c := &Calls{}
	return context.WithValue(ctx, callsKey{}, c), c
}

// CallsFrom returns the counter of ctx, or nil.
func CallsFrom(ctx context.Context) *Calls {
	c, _ := ctx.Value(callsKey{}).(*Calls)
	return c
}

// CountCalls is an SDK API option: it increments the context's counter once per
// operation (retries included in one operation count once), adds the items the
// operation read, and adds the capacity it consumed. It asks DynamoDB for the
// consumed capacity (ReturnConsumedCapacity TOTAL) on every operation that can
// answer it; see the package doc, "Capacity".
func CountCalls(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("GaleCountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c := CallsFrom(ctx)
			if c != nil {
				c.n.Add(1)
				askCapacity(in.Parameters)
			}
			out, md, err := next.HandleInitialize(ctx, in)
			if c != nil {
				if err == nil {
					c.items.Add(int64(itemsRead(out.Result)))
					c.add(consumed(out.Result))
				} else {
					c.add(failedWrite(in.Parameters, err))
				}
			}
			return out, md, err
		}), middleware.Before)
}

// capacity is what one operation consumed, in half units.
type capacity struct{ read, write int64 }

func (c *Calls) add(u capacity) {
	c.rcu2.Add(u.read)
	c.wcu2.Add(u.write)
}

// CallCounter is the edge's call counter (it satisfies httpapi.CallCounter):
// the counter a context carries already, or a new one.
type CallCounter struct{}

// Count returns ctx with a counter and its reading.
func (CallCounter) Count(ctx context.Context) (context.Context, func() (calls int, rcu, wcu float64)) {
	c := CallsFrom(ctx)
	if c == nil {
		ctx, c = WithCalls(ctx)
	}
	return ctx, func() (int, float64, float64) { return c.N(), c.RCU(), c.WCU() }
}

// itemsRead is the number of items an operation's output says it read.
func itemsRead(res any) int {
	switch r := res.(type) {
	case *dynamodb.QueryOutput:
		return int(r.ScannedCount)
	case *dynamodb.ScanOutput:
		return int(r.ScannedCount)
	case *dynamodb.GetItemOutput:
		if r.Item != nil {
			return 1
		}
	case *dynamodb.BatchGetItemOutput:
		n := 0
		for _, items := range r.Responses {
			n += len(items)
		}
		return n
	case *dynamodb.TransactGetItemsOutput:
		return len(r.Responses)
	}
	return 0
}

// askCapacity sets ReturnConsumedCapacity on an operation's input unless its
// caller asked for it already.
func askCapacity(params any) {
	const total = types.ReturnConsumedCapacityTotal
	switch p := params.(type) {
	case *dynamodb.GetItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.BatchGetItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.QueryInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.ScanInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.TransactGetItemsInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.PutItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.UpdateItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.DeleteItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.BatchWriteItemInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	case *dynamodb.TransactWriteItemsInput:
		p.ReturnConsumedCapacity = or(p.ReturnConsumedCapacity, total)
	}
}

func or(v, def types.ReturnConsumedCapacity) types.ReturnConsumedCapacity {
	if v == "" {
		return def
	}
	return v
}

// consumed is the capacity an operation's output reports.
func consumed(res any) capacity {
	half := func(cs ...*types.ConsumedCapacity) int64 {
		var u float64
		for _, c := range cs {
			if c != nil && c.CapacityUnits != nil {
				u += *c.CapacityUnits
			}
		}
		return int64(u*2 + 0.5)
	}
	all := func(cs []types.ConsumedCapacity) int64 {
		var n int64
		for i := range cs {
			n += half(&cs[i])
		}
		return n
	}
	switch r := res.(type) {
	case *dynamodb.GetItemOutput:
		return capacity{read: half(r.ConsumedCapacity)}
	case *dynamodb.QueryOutput:
		return capacity{read: half(r.ConsumedCapacity)}
	case *dynamodb.ScanOutput:
		return capacity{read: half(r.ConsumedCapacity)}
	case *dynamodb.BatchGetItemOutput:
		return capacity{read: all(r.ConsumedCapacity)}
	case *dynamodb.TransactGetItemsOutput:
		return capacity{read: all(r.ConsumedCapacity)}
	case *dynamodb.PutItemOutput:
		return capacity{write: half(r.ConsumedCapacity)}
	case *dynamodb.UpdateItemOutput:
		return capacity{write: half(r.ConsumedCapacity)}
	case *dynamodb.DeleteItemOutput:
		return capacity{write: half(r.ConsumedCapacity)}
	case *dynamodb.BatchWriteItemOutput:
		return capacity{write: all(r.ConsumedCapacity)}
	case *dynamodb.TransactWriteItemsOutput:
		return capacity{write: all(r.ConsumedCapacity)}
	}
	return capacity{}
}

// failedWrite is what a write refused by its condition is billed, which
// DynamoDB's error does not report: a single-item write at least one unit
// (more when the item it answered back is larger), a cancelled transaction
// at least two a member.
func failedWrite(params any, err error) capacity {
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return capacity{write: 2 * int64(WriteUnits(ItemSize(ccf.Item), 0))}
	}
	var tc *types.TransactionCanceledException
	if t, ok := params.(*dynamodb.TransactWriteItemsInput); ok && errors.As(err, &tc) {
		return capacity{write: 2 * 2 * int64(len(t.TransactItems))}
	}
	return capacity{}
}
