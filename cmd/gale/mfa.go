package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gale-rmm/gale/client"
)

func (a *app) mfaCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "mfa", Short: "Second factor: the account's MFA state and TOTP enrolment", Args: cobra.NoArgs}
	totp := &cobra.Command{Use: "totp", Short: "TOTP authenticator (enroll)", Args: cobra.NoArgs}
	totp.AddCommand(a.mfaTOTPEnroll())
	cmd.AddCommand(a.mfaStatus(), totp)
	return cmd
}

// afterEnrolment is what the API's MFA_REQUIRED hint says, for gale: the
// session's MFA state is set at sign-in, so enrolling alone does not lift it.
const afterEnrolment = "This session was signed in without a second factor: run `gale login` again " +
	"(with the next code) to get an MFA session; creating API keys and other \"+ MFA\" changes need one."

func (a *app) mfaTOTPEnroll() *cobra.Command {
	return &cobra.Command{
		Use:   "enroll",
		Short: "Enrol a TOTP authenticator app: print the otpauth URI and secret, confirm a code, print the recovery codes",
		Long: "enroll starts a TOTP setup, prints the otpauth URI (most apps import it; or type the secret), asks for\n" +
			"the code the app shows and enables TOTP, then prints the 10 recovery codes once: keep them safe.\n" +
			"The code is read from standard input when it is not a terminal. Afterwards sign in again\n" +
			"(gale login) to get a session that passed the second factor.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g, err := a.client()
			if err != nil {
				return err
			}
			setup, err := client.OK(g.AuthMfaSetupWithResponse(cmd.Context()))
			if err != nil {
				return err
			}
			s := setup.JSON200
			fmt.Fprintf(a.io.errOut, "Add this account to your authenticator app:\n  otpauth URI: %s\n  secret:      %s\n", s.OtpAuthUrl, s.Secret)
			fmt.Fprint(a.io.errOut, "Code shown by the app: ")
			code, err := a.io.line()
			if err != nil {
				return err
			}
			on, err := client.OK(g.AuthMfaEnableWithResponse(cmd.Context(), client.AuthCode{Code: strings.TrimSpace(code)}))
			if err != nil {
				return err
			}
			codes := s.RecoveryCodes
			if on.JSON200.RecoveryCodes != nil {
				codes = *on.JSON200.RecoveryCodes
			}
			if a.json {
				err = a.show(map[string]any{"mfaEnabled": on.JSON200.MfaEnabled, "mfaMethod": on.JSON200.MfaMethod,
					"otpAuthUrl": s.OtpAuthUrl, "secret": s.Secret, "recoveryCodes": codes}, nil, nil)
			} else {
				fmt.Fprintln(a.io.out, "TOTP enabled. Recovery codes (each works once; shown only now):")
				for _, c := range codes {
					fmt.Fprintln(a.io.out, "  "+c)
				}
			}
			fmt.Fprintln(a.io.errOut, afterEnrolment)
			return err
		},
	}
}

func (a *app) mfaStatus() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether the account has a second factor and whether this session passed it",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			g, err := a.client()
			if err != nil {
				return err
			}
			me, err := client.OK(g.AuthMeWithResponse(cmd.Context()))
			if err != nil {
				return err
			}
			u := me.JSON200.User
			method := ""
			if u.MfaMethod != nil {
				method = string(*u.MfaMethod)
			}
			access, _ := g.Tokens()
			session := sessionMFA(access)
			err = a.show(map[string]any{"mfaEnabled": u.MfaEnabled, "mfaMethod": method, "sessionMfa": session},
				[]string{"MFA", "METHOD", "SESSION MFA"}, [][]string{{onOff(u.MfaEnabled), str(&method), onOff(session)}})
			if err == nil && u.MfaEnabled && !session && !a.json {
				fmt.Fprintln(a.io.errOut, afterEnrolment)
			}
			return err
		},
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// sessionMFA reads the access token's mfa claim: whether the session passed a
// second factor at sign-in. Only a hint to the user; the API checks the
// signature and decides.
func sessionMFA(access string) bool {
	parts := strings.Split(access, ".")
	if len(parts) != 3 {
		return false
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return false
	}
	var c struct {
		MFA bool `json:"mfa"`
	}
	return json.Unmarshal(raw, &c) == nil && c.MFA
}
