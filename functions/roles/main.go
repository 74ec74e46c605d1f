// Command roles serves the roles route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/rolesgroup"
)

func main() { app.RunHTTP(rolesgroup.Roles) }
