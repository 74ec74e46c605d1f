// Command agents serves the agents route group as a Lambda function.
package main

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/agentsgroup"
)

func main() { app.RunHTTP(agentsgroup.Agents) }
