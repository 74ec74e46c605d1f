// Command alerts serves the alerts route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/alertsgroup"
)

func main() { app.RunHTTP(alertsgroup.Alerts) }
