package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

// orgOf is the --org flag as a UUID (nil when absent: the caller's own
// organization, for an organization-scope user).
func orgOf(s string) (*uuid.UUID, error) {
	if s == "" {
		return nil, nil
	}
	id, err := uuid.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("--org: %w", err)
	}
	return &id, nil
}

// withID is the RunE of a command whose one argument is an id: the id
// parsed, then run with the signed-in client.
func (a *app) withID(run func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		id, err := idArg(args[0])
		if err != nil {
			return err
		}
		g, err := a.client()
		if err != nil {
			return err
		}
		return run(cmd, g, id)
	}
}

func idArg(s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return id, fmt.Errorf("id %q: %w", s, err)
	}
	return id, nil
}

func (a *app) keysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Manage API keys (create, list, rotate, revoke)", Args: cobra.NoArgs}
	cmd.AddCommand(a.keysCreate(), a.keysList(), a.keysRotate(), a.keysRevoke())
	return cmd
}

func (a *app) keysCreate() *cobra.Command {
	var name, org, expires string
	var scopes []string
	var rate int
	cmd := &cobra.Command{
		Use:   "create --name NAME [--scopes s1,s2] [--org ID]",
		Short: "Create an API key (its secret is shown once)",
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
			if orgID == nil {
				// The body names the organization: an organization user's own.
				me, err := client.OK(g.AuthMeWithResponse(cmd.Context()))
				if err != nil {
					return err
				}
				if me.JSON200 == nil || me.JSON200.User.OrgId == nil {
					return fmt.Errorf("--org is required outside an organization")
				}
				orgID = me.JSON200.User.OrgId
			}
			body := client.ApiKeyCreateRequest{OrgId: *orgID, Name: name}
			if len(scopes) > 0 {
				// No --scopes: the field is left out (the API's default), not null.
				body.Scopes = &scopes
			}
			if rate > 0 {
				body.RateLimit = &rate
			}
			if expires != "" {
				t, err := time.Parse(time.RFC3339, expires)
				if err != nil {
					return fmt.Errorf("--expires: %w", err)
				}
				body.ExpiresAt = &t
			}
			r, err := client.OK(g.CreateApiKeyWithResponse(cmd.Context(), body))
			if err != nil {
				return err
			}
			k := r.JSON201
			return a.show(k, []string{"ID", "NAME", "SCOPES", "KEY"},
				[][]string{{k.Id.String(), k.Name, strings.Join(k.Scopes, ","), k.Key}})
		},
	}
	f := cmd.Flags()
	f.StringVar(&name, "name", "", "the key's name")
	f.StringSliceVar(&scopes, "scopes", nil, "the key's scopes, comma-separated (e.g. devices:read)")
	f.StringVar(&org, "org", "", "organization id (default: your organization)")
	f.IntVar(&rate, "rate-limit", 0, "requests per hour (default: the API's)")
	f.StringVar(&expires, "expires", "", "expiry, RFC 3339 (default: never)")
	_ = cmd.MarkFlagRequired("name")
	return cmd
}

func (a *app) keysList() *cobra.Command {
	var org, status string
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List API keys",
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
			params := client.ListApiKeysParams{OrgId: orgID}
			if status != "" {
				s := client.ListApiKeysParamsStatus(status)
				params.Status = &s
			}
			keys := []client.ApiKey{}
			for k, err := range client.All(func(page int, cursor *string) ([]client.ApiKey, client.Pagination, error) {
				p := params
				p.Page, p.Cursor = &page, cursor
				r, err := client.OK(g.ListApiKeysWithResponse(cmd.Context(), &p))
				if err != nil {
					return nil, client.Pagination{}, err
				}
				return r.JSON200.Data, r.JSON200.Pagination, nil
			}) {
				if err != nil {
					return err
				}
				keys = append(keys, k)
			}
			rows := make([][]string, 0, len(keys))
			for _, k := range keys {
				rows = append(rows, []string{k.Id.String(), k.Name, k.KeyPrefix, string(k.Status), strings.Join(k.Scopes, ","), when(k.ExpiresAt), when(k.LastUsedAt)})
			}
			return a.show(keys, []string{"ID", "NAME", "PREFIX", "STATUS", "SCOPES", "EXPIRES", "LAST USED"}, rows)
		},
	}
	cmd.Flags().StringVar(&org, "org", "", "organization id (partner and system scope)")
	cmd.Flags().StringVar(&status, "status", "", "only keys with this status (active, revoked, expired)")
	return cmd
}

func (a *app) keysRotate() *cobra.Command {
	return &cobra.Command{
		Use:   "rotate ID",
		Short: "Rotate an API key: new secret (shown once), the old one stops working",
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			r, err := client.OK(g.RotateApiKeyWithResponse(cmd.Context(), id))
			if err != nil {
				return err
			}
			k := r.JSON200
			return a.show(k, []string{"ID", "NAME", "KEY"}, [][]string{{k.Id.String(), k.Name, k.Key}})
		}),
	}
}

func (a *app) keysRevoke() *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke an API key",
		Args:  cobra.ExactArgs(1),
		RunE: a.withID(func(cmd *cobra.Command, g *client.Gale, id uuid.UUID) error {
			r, err := client.OK(g.RevokeApiKeyWithResponse(cmd.Context(), id))
			if err != nil {
				return err
			}
			k := r.JSON200.ApiKey
			return a.show(r.JSON200, []string{"ID", "NAME", "STATUS"}, [][]string{{k.Id.String(), k.Name, string(k.Status)}})
		}),
	}
}
