// Command health serves the health route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/healthgroup"
)

func main() { app.RunHTTP(healthgroup.Health) }
