package main

import (
	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) pamCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "pam", Short: "Privileged access: elevation requests (requests, approve, deny)", Args: cobra.NoArgs}
	cmd.AddCommand(a.pamRequests(), a.pamRespond("approve"), a.pamRespond("deny"))
	return cmd
}

func (a *app) pamRequests() *cobra.Command {
	var org, status string
	cmd := &cobra.Command{
		Use:   "requests",
		Short: "List elevation requests",
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
			params := client.ListElevationRequestsParams{OrgId: orgID}
			if status != "" {
				s := client.PamElevationStatus(status)
				params.Status = &s
			}
			list := []client.PamElevationRequest{}
			for e, err := range client.All(func(page int, cursor *string) ([]client.PamElevationRequest, client.Pagination, error) {
				p := params
				p.Page, p.Cursor = &page, cursor
				r, err := client.OK(g.ListElevationRequestsWithResponse(cmd.Context(), &p))
				if err != nil {
					return nil, client.Pagination{}, err
				}
				return r.JSON200.Requests, r.JSON200.Pagination, nil
			}) {
				if err != nil {
					return err
				}
				list = append(list, e)
			}
			rows := make([][]string, 0, len(list))
			for _, e := range list {
				rows = append(rows, []string{e.Id.String(), string(e.Status), e.DeviceHostname, e.SubjectUsername, e.TargetExecutablePath})
			}
			return a.show(list, []string{"ID", "STATUS", "DEVICE", "USER", "EXECUTABLE"}, rows)
		},
	}
	cmd.Flags().StringVar(&org, "org", "", "organization id (partner and system scope)")
	cmd.Flags().StringVar(&status, "status", "", "only requests with this status (e.g. pending)")
	return cmd
}

// pamRespond is approve or deny: the same route with the decision.
func (a *app) pamRespond(decision string) *cobra.Command {
	var reason string
	var minutes int
	short := map[string]string{"approve": "Approve a pending elevation request", "deny": "Deny a pending elevation request"}[decision]
	cmd := &cobra.Command{
		Use:   decision + " ID",
		Short: short,
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			body := client.PamRespondRequest{Decision: client.PamRespondRequestDecision(decision)}
			if reason != "" {
				body.Reason = &reason
			}
			if minutes > 0 {
				body.DurationMinutes = &minutes
			}
			r, err := client.OK(g.RespondElevationRequestWithResponse(cmd.Context(), id.String(), body))
			if err != nil {
				return err
			}
			return a.show(r.JSON200, []string{"ID", "STATUS"}, [][]string{{r.JSON200.Id.String(), string(r.JSON200.Status)}})
		}),
	}
	cmd.Flags().StringVar(&reason, "reason", "", "the reason recorded with the decision")
	if decision == "approve" {
		cmd.Flags().IntVar(&minutes, "duration", 0, "minutes the elevation lasts (default: the API's 15)")
	}
	return cmd
}
