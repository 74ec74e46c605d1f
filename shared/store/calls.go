package store

import (
	"context"
	"sync/atomic"

	"github.com/aws/smithy-go/middleware"
)

// Calls counts DynamoDB API calls made with a context. It is the figure each
// endpoint's call budget is asserted against.
type Calls struct{ n atomic.Int64 }

// N returns the count so far.
func (c *Calls) N() int { return int(c.n.Load()) }

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
// operation (retries included in one operation count once).
func CountCalls(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("GaleCountCalls",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			if c := CallsFrom(ctx); c != nil {
				c.n.Add(1)
			}
			return next.HandleInitialize(ctx, in)
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
