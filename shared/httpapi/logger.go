package httpapi

import (
	"context"
	"io"
	"log/slog"
)

// NewLogger is the JSON logger of every process. Each line logged with a
// request's context carries that request's id, whoever logs it (the edge, a
// service, the store), so one request's lines can be found together.
func NewLogger(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(requestHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})})
}

// requestHandler adds requestId from the context to every record.
type requestHandler struct{ slog.Handler }

func (h requestHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("requestId", id))
	}
	return h.Handler.Handle(ctx, withMetrics(r)) // metrics.go
}

func (h requestHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestHandler) WithGroup(name string) slog.Handler {
	return requestHandler{h.Handler.WithGroup(name)}
}
