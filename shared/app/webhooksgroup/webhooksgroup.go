// Package webhooksgroup wires the webhooks function (/api/v1/webhooks), and
// holds what the webhook-worker function (webhookworkergroup) and the admin
// function's dead-letter queue routes share with it.
package webhooksgroup

import (
	"fmt"
	"net/http"

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

// Box builds the box sealing webhook secrets.
func Box(d *app.Deps) (*secret.Box, error) {
	b, err := secret.New(d.Cfg.EncryptionKey, d.Cfg.PreviousEncryptionKeys...)
	if err != nil {
		return nil, fmt.Errorf("webhook secrets: %w", err)
	}
	return b, nil
}

// Service builds the /webhooks service.
func Service(d *app.Deps) (*webhook.Service, error) {
	b, err := Box(d)
	if err != nil {
		return nil, err
	}
	g, err := Guard(d)
	if err != nil {
		return nil, err
	}
	return &webhook.Service{St: webhook.Store{St: d.Store, DeliveryRetention: d.Cfg.WebhookDeliveryRetention}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock, Box: b, Guard: g,
		Queue: webhook.SQSQueue{SQS: d.SQS}, DeliveryQueueURL: d.Cfg.DeliveryQueueURL}, nil
}

// DLQ builds the dead-letter queue service of /admin/webhook-dlq.
func DLQ(d *app.Deps) *webhook.DLQ {
	return &webhook.DLQ{St: webhook.Store{St: d.Store, DeliveryRetention: d.Cfg.WebhookDeliveryRetention}, SQS: d.SQS, Queue: webhook.SQSQueue{SQS: d.SQS}, Clock: d.Clock,
		URL: d.Cfg.DeliveryDLQURL, DeliveryQueueURL: d.Cfg.DeliveryQueueURL}
}
