package main

import (
	"fmt"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) enrollmentKeysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "enrollment-keys", Short: "Keys that enrol devices (create)", Args: cobra.NoArgs}
	cmd.AddCommand(a.enrollmentKeysCreate())
	return cmd
}

// enrollmentKeysCreate issues the key an agent enrols with (POST
// /api/v1/agents/enroll): the first step of a device, hence of a PAM request.
func (a *app) enrollmentKeysCreate() *cobra.Command {
	var name, org, site string
	var uses int
	cmd := &cobra.Command{
		Use:   "create --name NAME [--org ID] [--site ID] [--max-usage N]",
		Short: "Create an enrollment key (its secret is shown once)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g, err := a.client()
			if err != nil {
				return err
			}
			body := client.EnrollmentKeyCreateRequest{Name: name}
			if body.OrgId, err = orgOf(org); err != nil {
				return err
			}
			if site != "" {
				id, err := uuid.Parse(site)
				if err != nil {
					return fmt.Errorf("--site: %w", err)
				}
				body.SiteId = &id
			}
			if uses > 0 {
				body.MaxUsage = &uses
			}
			r, err := client.OK(g.CreateEnrollmentKeyWithResponse(cmd.Context(), body))
			if err != nil {
				return err
			}
			k := r.JSON201
			return a.show(k, []string{"ID", "NAME", "EXPIRES", "KEY"}, [][]string{{k.Id.String(), k.Name, when(&k.ExpiresAt), k.Key}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the key's name")
	f.StringVar(&org, "org", "", "organization id (partner and system scope; default: your organization)")
	f.StringVar(&site, "site", "", "enrol devices into this site")
	f.IntVar(&uses, "max-usage", 0, "devices it may enrol (default: the API's 1)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}
