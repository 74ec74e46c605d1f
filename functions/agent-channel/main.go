// Command agent-channel serves the agent channel's WebSocket API (the
// $connect authorizer, $connect, $disconnect, $default) as a Lambda function.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/agentchannelgroup"
)

func main() { lambda.Start(agentchannelgroup.Handler(app.Start()).Invoke) }
