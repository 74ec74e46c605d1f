package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/gale-rmm/gale/client"
)

// defaultAPIURL is where make run serves the API (infra/local).
const defaultAPIURL = "http://127.0.0.1:8080"

// ioSet is the process's input and outputs, and how a password is read
// (without echo on a terminal; a line of input otherwise, e.g. a pipe).
type ioSet struct {
	in           io.Reader
	out, errOut  io.Writer
	readPassword func() (string, error)
}

func newIO(in *os.File, out, errOut io.Writer) ioSet {
	s := ioSet{in: in, out: out, errOut: errOut}
	s.readPassword = func() (string, error) {
		if term.IsTerminal(int(in.Fd())) {
			b, err := term.ReadPassword(int(in.Fd()))
			fmt.Fprintln(errOut)
			return string(b), err
		}
		return s.line()
	}
	return s
}

// line reads one line of input, byte by byte, so that a later read (the TOTP
// code after the password) finds the rest.
func (s ioSet) line() (string, error) {
	var b strings.Builder
	buf := make([]byte, 1)
	for {
		n, err := s.in.Read(buf)
		if n == 1 {
			if buf[0] == '\n' {
				return strings.TrimRight(b.String(), "\r"), nil
			}
			b.WriteByte(buf[0])
		}
		if err != nil {
			if errors.Is(err, io.EOF) && b.Len() > 0 {
				return b.String(), nil
			}
			return "", err
		}
	}
}

// app holds the global flags and builds the client from them.
type app struct {
	io        ioSet
	apiURL    string
	apiKey    string
	configDir string
	json      bool
	gale      *client.Gale
	saved     credentials
}

// credentials is what gale login stores.
type credentials struct {
	APIURL       string `json:"apiUrl"`
	Email        string `json:"email"`
	AccessToken  string `json:"accessToken"`
	RefreshToken string `json:"refreshToken"`
}

func run(ctx context.Context, args []string, s ioSet) int {
	a := &app{io: s}
	root := a.root()
	root.SetArgs(args)
	root.SetIn(s.in)
	root.SetOut(s.out)
	root.SetErr(s.errOut)
	err := root.ExecuteContext(ctx)
	// A refresh during the command rotated the tokens: store the new ones,
	// also when the command failed (the old refresh token is spent).
	if serr := a.saveRotated(); serr != nil && err == nil {
		err = serr
	}
	if err != nil {
		fmt.Fprintln(s.errOut, "gale:", err)
		explain(s.errOut, err)
		return 1
	}
	return 0
}

// explain prints, under a refusal, what the API says to do next: the
// permission or scope missing, the hint, where to enrol a second factor.
func explain(w io.Writer, err error) {
	var e *client.APIError
	if !errors.As(err, &e) {
		return
	}
	switch {
	case len(e.AnyOf) > 0:
		fmt.Fprintln(w, "  missing permission: one of", strings.Join(e.AnyOf, ", "))
	case e.Required != "":
		fmt.Fprintln(w, "  missing permission:", e.Required)
	}
	if e.Hint != "" {
		fmt.Fprintln(w, "  hint:", e.Hint)
	}
	switch {
	case e.Code == "MFA_REQUIRED":
		fmt.Fprintln(w, "  with gale: `gale mfa totp enroll` (once), then `gale login` again")
	case e.EnrollURL != "":
		fmt.Fprintln(w, "  with gale: `gale mfa totp enroll`")
	}
}

func (a *app) root() *cobra.Command {
	root := &cobra.Command{
		Use:           "gale",
		Short:         "Gale's command-line tool",
		Long:          "gale signs in to a Gale API, enrols TOTP and manages API keys, devices, webhooks, PAM requests and audit exports.",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	f := root.PersistentFlags()
	f.StringVar(&a.apiURL, "api-url", "", "the API's address (default: GALE_API_URL, the address gale login used, or "+defaultAPIURL+")")
	f.StringVar(&a.apiKey, "api-key", "", "authenticate with this API key (default: GALE_API_KEY) instead of the login's tokens")
	f.StringVar(&a.configDir, "config-dir", "", "where credentials are kept (default: <user config dir>/gale)")
	f.BoolVar(&a.json, "json", false, "print JSON instead of a table")
	root.AddCommand(a.loginCmd(), a.mfaCmd(), a.keysCmd(), a.enrollmentKeysCmd(), a.devicesCmd(), a.webhooksCmd(), a.pamCmd(), a.auditCmd())
	return root
}

func (a *app) credentialsPath() (string, error) {
	dir := a.configDir
	if dir == "" {
		base, err := os.UserConfigDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(base, "gale")
	}
	return filepath.Join(dir, "credentials.json"), nil
}

func (a *app) load() (credentials, error) {
	var c credentials
	p, err := a.credentialsPath()
	if err != nil {
		return c, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return c, nil
	}
	if err != nil {
		return c, err
	}
	return c, json.Unmarshal(b, &c)
}

// store writes c readable by the user only: a new file is created 0600 and
// renamed over the old, so no moment leaves the tokens readable by others.
func (a *app) store(c credentials) error {
	p, err := a.credentialsPath()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".credentials-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), p)
}

// url is the API address: the flag, GALE_API_URL, the login's, the default.
func (a *app) url(saved string) string {
	for _, u := range []string{a.apiURL, os.Getenv("GALE_API_URL"), saved} {
		if u != "" {
			return u
		}
	}
	return defaultAPIURL
}

// client is the signed-in (or keyed) client of the command.
func (a *app) client() (*client.Gale, error) {
	c, err := a.load()
	if err != nil {
		return nil, err
	}
	key := a.apiKey
	if key == "" {
		key = os.Getenv("GALE_API_KEY")
	}
	if key != "" {
		a.gale, err = client.New(a.url(c.APIURL), client.WithAPIKey(key))
		return a.gale, err
	}
	if c.AccessToken == "" {
		return nil, errors.New("not signed in: run `gale login` (or pass --api-key)")
	}
	// The tokens go only to the API that issued them: another address
	// (a typo, a hostile link) needs its own login.
	if u := a.url(c.APIURL); u != c.APIURL {
		return nil, fmt.Errorf("signed in to %s, not %s: run `gale login --api-url %s`", c.APIURL, u, u)
	}
	a.saved = c
	a.gale, err = client.New(c.APIURL, client.WithTokens(c.AccessToken, c.RefreshToken))
	return a.gale, err
}

func (a *app) saveRotated() error {
	if a.gale == nil || a.saved.AccessToken == "" {
		return nil
	}
	access, refresh := a.gale.Tokens()
	if access == a.saved.AccessToken && refresh == a.saved.RefreshToken {
		return nil
	}
	c := a.saved
	c.AccessToken, c.RefreshToken = access, refresh
	return a.store(c)
}
