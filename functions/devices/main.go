// Command devices serves the devices route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/devicesgroup"
)

func main() { app.RunHTTP(devicesgroup.Devices) }
