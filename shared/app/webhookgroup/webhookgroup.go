// Package webhookgroup wires the webhooks function (/webhooks), the
// webhook-worker function (the events and deliveries queues) and the
// dead-letter queue service the admin function serves.
package webhookgroup

import (
	"fmt"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/webhook"
)

// Webhooks builds the webhooks group.
func Webhooks(d *app.Deps) (http.Handler, error) {
	svc, err := Service(d)
	if err != nil {
		return nil, err
	}
	rt := d.Router()
	(&webhook.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}

// Guard builds the destination guard from OUTBOUND_ALLOW_CIDRS (alias
// WEBHOOK_ALLOW_CIDRS).
func Guard(d *app.Deps) (*outbound.Guard, error) { return outbound.NewGuard(d.Cfg.OutboundAllowCIDRs) }

func box(d *app.Deps) (*secret.Box, error) {
	b, err := secret.New(d.Cfg.EncryptionKey, d.Cfg.PreviousEncryptionKeys...)
	if err != nil {
		return nil, fmt.Errorf("webhook secrets: %w", err)
	}
	return b, nil
}

// Service builds the /webhooks service.
func Service(d *app.Deps) (*webhook.Service, error) {
	b, err := box(d)
	if err != nil {
		return nil, err
	}
	g, err := Guard(d)
	if err != nil {
		return nil, err
	}
	return &webhook.Service{St: webhook.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock, Box: b, Guard: g,
		Queue: webhook.SQSQueue{SQS: d.SQS}, DeliveryQueueURL: d.Cfg.DeliveryQueueURL}, nil
}

// Worker builds the queue consumer: the guard (OUTBOUND_ALLOW_CIDRS) and the
// delivery client (OUTBOUND_CA_FILE). Building it does no I/O beyond reading the
// CA file when one is set.
func Worker(d *app.Deps) (*webhook.Worker, error) {
	b, err := box(d)
	if err != nil {
		return nil, err
	}
	g, err := Guard(d)
	if err != nil {
		return nil, err
	}
	client, err := webhook.NewHTTPClient(g, d.Cfg.OutboundCAFile)
	if err != nil {
		return nil, err
	}
	return &webhook.Worker{St: webhook.Store{St: d.Store}, Box: b, Guard: g, HTTP: client, Queue: webhook.SQSQueue{SQS: d.SQS},
		Clock: d.Clock, EventsQueueName: app.QueueName(d.Cfg.EventsQueueURL), DeliveryQueueURL: d.Cfg.DeliveryQueueURL,
		DLQURL: d.Cfg.DeliveryDLQURL, Log: d.Log}, nil
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

// DLQ builds the dead-letter queue service of /admin/webhook-dlq.
func DLQ(d *app.Deps) *webhook.DLQ {
	return &webhook.DLQ{St: webhook.Store{St: d.Store}, SQS: d.SQS, Queue: webhook.SQSQueue{SQS: d.SQS}, Clock: d.Clock,
		URL: d.Cfg.DeliveryDLQURL, DeliveryQueueURL: d.Cfg.DeliveryQueueURL}
}
