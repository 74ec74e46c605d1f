// Command auth serves the auth route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/authgroup"
)

func main() { app.RunHTTP(authgroup.Auth) }
