package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// Agent channel settings: its own WebSocket API and stage, so agent traffic
// never shares the HTTP API's stage throttle (ctxThrottleRate).
const (
	channelStageName     = "agents"
	channelThrottleRate  = 1000
	channelThrottleBurst = 2000
)

// channelAPI is the agent channel (shared/channel): a WebSocket API whose
// $connect, $disconnect and $default routes invoke the agent-channel
// function.
type channelAPI struct {
	api   awsapigatewayv2.WebSocketApi
	stage awsapigatewayv2.WebSocketStage
}

// newChannelAPI creates the API and its stage; the routes come once the
// function exists (route), since the functions' environment names the stage.
func newChannelAPI(stack awscdk.Stack) channelAPI {
	api := awsapigatewayv2.NewWebSocketApi(stack, jsii.String("AgentChannelApi"), &awsapigatewayv2.WebSocketApiProps{
		ApiName:                  jsii.String("gale-agent-channel"),
		Description:              jsii.String("Gale agent channel (docs/decisions.md#agent-channel)"),
		RouteSelectionExpression: jsii.String("$request.body.type"),
	})
	stage := awsapigatewayv2.NewWebSocketStage(stack, jsii.String("AgentChannelStage"), &awsapigatewayv2.WebSocketStageProps{
		WebSocketApi: api,
		StageName:    jsii.String(channelStageName),
		AutoDeploy:   jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(channelThrottleRate),
			BurstLimit: jsii.Number(channelThrottleBurst),
		},
	})
	return channelAPI{api: api, stage: stage}
}

// route sends $connect, $disconnect and $default to fn; $default answers on
// the connection (a pong, an error frame: the route's response).
func (c channelAPI) route(stack awscdk.Stack, fn awslambda.Function) {
	for _, r := range []struct {
		key, id string
		reply   bool
	}{{"$connect", "Connect", false}, {"$disconnect", "Disconnect", false}, {"$default", "Default", true}} {
		c.api.AddRoute(jsii.String(r.key), &awsapigatewayv2.WebSocketRouteOptions{
			Integration:    awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("AgentChannel"+r.id), fn, nil),
			ReturnResponse: jsii.Bool(r.reply),
		})
	}
}
