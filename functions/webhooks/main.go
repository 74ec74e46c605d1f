// Command webhooks serves the webhooks route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
)

func main() { app.RunHTTP(webhooksgroup.Webhooks) }
