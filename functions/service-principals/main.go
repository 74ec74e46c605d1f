// Command service-principals serves the service-principals route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/serviceprincipalsgroup"
)

func main() { app.RunHTTP(serviceprincipalsgroup.ServicePrincipals) }
