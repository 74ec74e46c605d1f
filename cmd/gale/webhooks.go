package main

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) webhooksCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "webhooks", Short: "Manage webhooks (create, test, deliveries)", Args: cobra.NoArgs}
	cmd.AddCommand(a.webhooksCreate(), a.webhooksTest(), a.webhooksDeliveries())
	return cmd
}

func (a *app) webhooksCreate() *cobra.Command {
	var name, url, secret, org string
	var events []string
	cmd := &cobra.Command{
		Use:   "create --name NAME --url URL --events e1,e2 [--secret S]",
		Short: "Create a webhook",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g, err := a.client()
			if err != nil {
				return err
			}
			orgID, err := orgOf(org)
			if err != nil {
				return err
			}
			body := client.WebhookCreateRequest{Name: name, Url: url, OrgId: orgID}
			for _, e := range events {
				body.Events = append(body.Events, client.WebhookEventType(e))
			}
			if secret != "" {
				body.Secret = &secret
			}
			r, err := client.OK(g.CreateWebhookWithResponse(cmd.Context(), body))
			if err != nil {
				return err
			}
			w := r.JSON201
			evs := make([]string, 0, len(w.Events))
			for _, e := range w.Events {
				evs = append(evs, string(e))
			}
			return a.show(w, []string{"ID", "NAME", "STATUS", "EVENTS"}, [][]string{{w.Id.String(), w.Name, string(w.Status), strings.Join(evs, ",")}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the webhook's name")
	f.StringVar(&url, "url", "", "where deliveries are posted (HTTPS)")
	f.StringSliceVar(&events, "events", nil, "event types, comma-separated")
	f.StringVar(&secret, "secret", "", "HMAC signing secret")
	f.StringVar(&org, "org", "", "organization id (partner and system scope)")
	for _, n := range []string{"name", "url", "events"} {
		_ = cmd.MarkFlagRequired(n)
	}
	return cmd
}

func (a *app) webhooksTest() *cobra.Command {
	return &cobra.Command{
		Use:   "test ID",
		Short: "Queue a test delivery (event webhook.test)",
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			r, err := client.OK(g.TestWebhookWithResponse(cmd.Context(), id.String(), client.TestWebhookJSONRequestBody{}))
			if err != nil {
				return err
			}
			d := r.JSON202.Delivery
			return a.show(r.JSON202, []string{"DELIVERY", "EVENT", "STATUS"}, [][]string{{d.Id.String(), d.Event, string(d.Status)}})
		}),
	}
}

func (a *app) webhooksDeliveries() *cobra.Command {
	var status string
	cmd := &cobra.Command{
		Use:   "deliveries ID",
		Short: "List a webhook's deliveries",
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			params := client.ListWebhookDeliveriesParams{}
			if status != "" {
				s := client.WebhookDeliveryStatus(status)
				params.Status = &s
			}
			list := []client.WebhookDelivery{}
			for d, err := range client.All(func(page int, _ *string) ([]client.WebhookDelivery, client.Pagination, error) {
				p := params
				p.Page = &page
				r, err := client.OK(g.ListWebhookDeliveriesWithResponse(cmd.Context(), id.String(), &p))
				if err != nil {
					return nil, client.Pagination{}, err
				}
				return r.JSON200.Data, r.JSON200.Pagination, nil
			}) {
				if err != nil {
					return err
				}
				list = append(list, d)
			}
			rows := make([][]string, 0, len(list))
			for _, d := range list {
				rows = append(rows, []string{d.Id.String(), d.Event, string(d.Status), fmt.Sprint(d.Attempt), num(d.ResponseStatus), d.CreatedAt.UTC().Format("2006-01-02T15:04:05Z")})
			}
			return a.show(list, []string{"ID", "EVENT", "STATUS", "ATTEMPTS", "HTTP", "CREATED"}, rows)
		}),
	}
	cmd.Flags().StringVar(&status, "status", "", "only deliveries with this status")
	return cmd
}
