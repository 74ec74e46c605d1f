// Command sso serves the sso route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/ssogroup"
)

func main() { app.RunHTTP(ssogroup.SSO) }
