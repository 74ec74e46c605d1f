// Package webhookworkergroup wires the webhook-worker function: the consumer of
// the events and webhook-deliveries queues.
package webhookworkergroup

import (
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pushgroup"
	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
	"github.com/gale-rmm/gale/shared/webhook"
)

// Worker builds the queue consumer (webhook deliveries, and the mobile
// approval fan-out of pending elevation requests, shared/push): the guard (OUTBOUND_ALLOW_CIDRS), the
// delivery client (OUTBOUND_CA_FILE) and the failure policy
// (WEBHOOK_FAILURE_THRESHOLD, WEBHOOK_FAILURE_WINDOW_HOURS) with the mail
// queue that tells a failed webhook's administrators. Building it does no I/O beyond reading the
// CA file when one is set.
func Worker(d *app.Deps) (*webhook.Worker, error) {
	b, err := webhooksgroup.Box(d)
	if err != nil {
		return nil, err
	}
	g, err := webhooksgroup.Guard(d)
	if err != nil {
		return nil, err
	}
	client, err := webhook.NewHTTPClient(g, d.Cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	return &webhook.Worker{St: webhook.Store{St: d.Store, DeliveryRetention: d.Cfg.WebhookDeliveryRetention}, Box: b, Guard: g, HTTP: client, Queue: webhook.SQSQueue{SQS: d.SQS},
		Clock: d.Clock, EventsQueueName: app.QueueName(d.Cfg.EventsQueueURL), DeliveryQueueURL: d.Cfg.DeliveryQueueURL,
		DLQURL: d.Cfg.DeliveryDLQURL, Log: d.Log, React: pushgroup.Mobile(d).OnEvent,
		Failure: webhook.FailurePolicy{Threshold: d.Cfg.WebhookFailureThreshold, Window: d.Cfg.WebhookFailureWindow},
		Users:   d.Users, Roles: d.Roles, Mail: d.Notify}, nil
}

// RunWorker starts the webhook-worker Lambda.
func RunWorker() {
	w, err := Worker(app.Start())
	if err != nil {
		slog.Error("startup failed", "err", err)
		os.Exit(1)
	}
	lambda.Start(w.Handle)
}
