// Command gale is Gale's command-line tool: sign in once (gale login) and
// manage API keys, devices, webhooks, PAM requests and the audit log export
// from a shell or a script. It is built on the typed client (package client)
// and is not a Lambda (it lives outside functions/).
//
// It uses spf13/cobra rather than the standard flag package: nested commands
// (gale keys rotate), --help on every one and shell completion for bash, zsh,
// fish and PowerShell (gale completion) come with it, where flag would need
// all three written by hand.
//
// Credentials: gale login stores the API address, the access token and the
// refresh token in <user config dir>/gale/credentials.json with file mode
// 0600 (the directory 0700); a refresh rewrites them. --api-key (or
// GALE_API_KEY) uses an API key instead, for automation.
package main

import (
	"context"
	"os"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], newIO(os.Stdin, os.Stdout, os.Stderr)))
}
