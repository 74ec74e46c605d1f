// Command users serves the users route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/usersgroup"
)

func main() { app.RunHTTP(usersgroup.Users) }
