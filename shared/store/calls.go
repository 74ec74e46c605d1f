package store

import (
	"context"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"
)

// Calls counts DynamoDB API calls made with a context, and the items they read.
// The calls are the figure each endpoint's call budget is asserted against; the
// items read (a Query's or Scan's ScannedCount, the items a GetItem,
// BatchGetItem or TransactGetItems answered) are what a request pays in read
// units, measured by the list benchmarks.
type Calls struct{ n, items atomic.Int64 }

// N returns the count so far.
func (c *Calls) N() int { return int(c.n.Load()) }

// Items returns the items read so far.
func (c *Calls) Items() int { return int(c.items.Load()) }

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
// operation (retries included in one operation count once) and adds the items
// the operation read.
func CountCalls(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("GaleCountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			c := CallsFrom(ctx)
			if c != nil {
				c.n.Add(1)
			}
			out, md, err := next.HandleInitialize(ctx, in)
			if c != nil && err == nil {
				c.items.Add(int64(itemsRead(out.Result)))
			}
			return out, md, err
		}), middleware.Before)
}

// CallCounter is the edge's call counter (it satisfies httpapi.CallCounter):
// the counter a context carries already, or a new one.
type CallCounter struct{}

// Count returns ctx with a counter and its reading.
func (CallCounter) Count(ctx context.Context) (context.Context, func() int) {
	c := CallsFrom(ctx)
	if c == nil {
		ctx, c = WithCalls(ctx)
	}
	return ctx, c.N
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
