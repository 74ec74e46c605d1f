package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) loginCmd() *cobra.Command {
	var email string
	cmd := &cobra.Command{
		Use:   "login",
		Short: "Sign in with e-mail, password and TOTP code; store the tokens",
		Long: "login asks for the password (and, when the account has TOTP, the current code) and stores\n" +
			"the API address and tokens in the credentials file (mode 0600). Password and code are read\n" +
			"from standard input when it is not a terminal.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if email == "" {
				fmt.Fprint(a.io.errOut, "E-mail: ")
				var err error
				if email, err = a.io.line(); err != nil {
					return err
				}
			}
			fmt.Fprint(a.io.errOut, "Password: ")
			password, err := a.io.readPassword()
			if err != nil {
				return err
			}
			saved, err := a.load()
			if err != nil {
				return err
			}
			url := a.url(saved.APIURL)
			g, err := client.New(url)
			if err != nil {
				return err
			}
			// SignIn asks again only after the API refused the code as
			// already used (client.CodeUsed): say so, and wait for the next.
			asked := 0
			totp := func(context.Context) (string, error) {
				if asked++; asked > 1 {
					fmt.Fprintln(a.io.errOut, "That code was already used (each code works once): wait for the next code, then enter it.")
				}
				fmt.Fprint(a.io.errOut, "TOTP code: ")
				return a.io.line()
			}
			if err := g.SignIn(cmd.Context(), email, password, totp); err != nil {
				return err
			}
			access, refresh := g.Tokens()
			if err := a.store(credentials{APIURL: url, Email: email, AccessToken: access, RefreshToken: refresh}); err != nil {
				return err
			}
			fmt.Fprintf(a.io.out, "Signed in to %s as %s\n", url, email)
			return nil
		},
	}
	cmd.Flags().StringVar(&email, "email", "", "the account's e-mail (asked when absent)")
	return cmd
}
