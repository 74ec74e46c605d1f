// Command admin serves the admin route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/admingroup"
)

func main() { app.RunHTTP(admingroup.Admin) }
