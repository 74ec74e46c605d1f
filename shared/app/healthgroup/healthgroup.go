// Package healthgroup wires the health function: GET /api/v1/health, the
// OpenAPI document at GET /api/v1/openapi.json and the API reference page that
// renders it at GET /api/v1/docs (shared/api). It links no sign-in, hashing,
// SES or SNS code.
package healthgroup

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/health"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Health builds the health group.
func Health(d *app.Deps) (http.Handler, error) {
	h := &health.Handler{Version: d.Cfg.Version, Checks: map[string]health.Check{
		"table": d.Store.Ping,
		"queues": func(ctx context.Context) error {
			for _, u := range []string{d.Cfg.EventsQueueURL, d.Cfg.DeliveryQueueURL} {
				if u == "" {
					return fmt.Errorf("queue url not configured")
				}
				if _, err := d.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u)}); err != nil {
					return err
				}
			}
			return nil
		},
	}}
	rt := httpapi.NewRouter(nil, nil)
	h.Routes(rt)
	api.Routes(rt)
	return d.Edge(rt), nil
}
