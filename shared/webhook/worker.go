// Package webhook owns outbound webhooks. This file is the queue consumer that the
// webhook-worker function runs: platform events from the event queue are fanned
// out to deliveries, and deliveries are sent. Until the Webhooks issue lands there
// are no subscriptions: event messages are validated and acknowledged, and
// delivery messages are reported as failures so the redrive policy keeps them.
package webhook

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/gale-rmm/gale/shared/event"
)

// Worker consumes the event and delivery queues.
type Worker struct {
	// EventsQueueName identifies messages of the event queue: the last part of their source ARN.
	EventsQueueName string
	Log             *slog.Logger
}

// Handle processes an SQS batch and reports each failed message, so only those
// are retried (ReportBatchItemFailures).
func (w *Worker) Handle(ctx context.Context, batch events.SQSEvent) (events.SQSEventResponse, error) {
	var resp events.SQSEventResponse
	for _, m := range batch.Records {
		if err := w.handle(ctx, m); err != nil {
			w.Log.WarnContext(ctx, "message failed", "messageId", m.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: m.MessageId})
		}
	}
	return resp, nil
}

func (w *Worker) handle(ctx context.Context, m events.SQSMessage) error {
	if !w.fromEvents(m) {
		return errDeliveriesNotBuilt
	}
	var ev event.Event
	if err := json.Unmarshal([]byte(m.Body), &ev); err != nil || ev.ID == "" || ev.Type == "" {
		return errBadEvent
	}
	w.Log.InfoContext(ctx, "event received", "event", ev.Type, "eventId", ev.ID, "orgId", ev.OrgID)
	return nil
}

func (w *Worker) fromEvents(m events.SQSMessage) bool {
	name := m.EventSourceARN[strings.LastIndex(m.EventSourceARN, ":")+1:]
	return name == w.EventsQueueName
}

type workerErr string

func (e workerErr) Error() string { return string(e) }

const (
	errDeliveriesNotBuilt = workerErr("webhook deliveries are not built yet")
	errBadEvent           = workerErr("message is not a platform event")
)
