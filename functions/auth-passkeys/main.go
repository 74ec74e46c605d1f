// Command auth-passkeys serves the passkey routes of /auth as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/authpasskeysgroup"
)

func main() { app.RunHTTP(authpasskeysgroup.AuthPasskeys) }
