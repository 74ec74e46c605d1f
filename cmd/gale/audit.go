package main

import (
	"fmt"
	"io"
	"net/url"
	"os"

	"github.com/spf13/cobra"
)

func (a *app) auditCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "audit", Short: "The audit log (export)", Args: cobra.NoArgs}
	cmd.AddCommand(a.auditExport())
	return cmd
}

func (a *app) auditExport() *cobra.Command {
	var format, output, from, to, org string
	cmd := &cobra.Command{
		Use:   "export [--format ndjson|csv] [--output FILE]",
		Short: "Export the audit log, following its pages to the end",
		Long: "export writes the audit log as NDJSON or CSV to standard output or --output, one request per\n" +
			"5,000 rows; a progress line goes to standard error.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "ndjson" && format != "csv" {
				return fmt.Errorf("--format must be ndjson or csv, not %q", format)
			}
			g, err := a.client()
			if err != nil {
				return err
			}
			var w io.Writer = a.io.out
			if output != "" {
				f, err := os.OpenFile(output, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
				if err != nil {
					return err
				}
				defer f.Close()
				w = f
			}
			q := url.Values{}
			for k, v := range map[string]string{"from": from, "to": to, "orgId": org} {
				if v != "" {
					q.Set(k, v)
				}
			}
			progress := func(pages, rows int) {
				fmt.Fprintf(a.io.errOut, "\rexported %d rows (%d pages)", rows, pages)
			}
			err = g.ExportAuditLogs(cmd.Context(), format, q, w, progress)
			fmt.Fprintln(a.io.errOut)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "ndjson", "ndjson or csv")
	f.StringVarP(&output, "output", "o", "", "write to this file (mode 0600) instead of standard output")
	f.StringVar(&from, "from", "", "from this time (RFC 3339)")
	f.StringVar(&to, "to", "", "up to this time (RFC 3339)")
	f.StringVar(&org, "org", "", "organization id (partner and system scope)")
	return cmd
}
