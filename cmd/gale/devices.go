package main

import (
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) devicesCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "devices", Short: "Read devices (list, get)", Args: cobra.NoArgs}
	cmd.AddCommand(a.devicesList(), a.devicesGet())
	return cmd
}

func (a *app) devicesList() *cobra.Command {
	var org, site string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List devices",
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
			params := client.ListDevicesParams{OrgId: orgID}
			if site != "" {
				id, err := uuid.Parse(site)
				if err != nil {
					return fmt.Errorf("--site: %w", err)
				}
				params.SiteId = &id
			}
			devices := []client.Device{}
			for d, err := range client.All(func(page int, cursor *string) ([]client.Device, client.Pagination, error) {
				p := params
				p.Page, p.Cursor = &page, cursor
				r, err := client.OK(g.ListDevicesWithResponse(cmd.Context(), &p))
				if err != nil {
					return nil, client.Pagination{}, err
				}
				return r.JSON200.Data, r.JSON200.Pagination, nil
			}) {
				if err != nil {
					return err
				}
				devices = append(devices, d)
			}
			rows := make([][]string, 0, len(devices))
			for _, d := range devices {
				rows = append(rows, []string{d.Id.String(), d.Hostname, string(d.OsType), string(d.Status), when(d.LastSeenAt)})
			}
			return a.show(devices, []string{"ID", "HOSTNAME", "OS", "STATUS", "LAST SEEN"}, rows)
		},
	}
	cmd.Flags().StringVar(&org, "org", "", "organization id (partner and system scope)")
	cmd.Flags().StringVar(&site, "site", "", "only devices of this site")
	return cmd
}

func (a *app) devicesGet() *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show one device",
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			r, err := client.OK(g.GetDeviceWithResponse(cmd.Context(), id))
			if err != nil {
				return err
			}
			d := r.JSON200
			return a.show(d, []string{"FIELD", "VALUE"}, [][]string{
				{"id", d.Id.String()}, {"hostname", d.Hostname}, {"os", string(d.OsType) + " " + d.OsVersion},
				{"status", string(d.Status)}, {"agent", d.AgentVersion}, {"site", uuidStr(d.SiteId)},
				{"last seen", when(d.LastSeenAt)}, {"last user", str(d.LastUser)}, {"tags", strings.Join(d.Tags, ",")},
			})
		}),
	}
}
