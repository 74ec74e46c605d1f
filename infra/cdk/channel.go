package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2authorizers"
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

// channelIdentity is the $connect authorizer's identity sources: the agent
// token and the device it claims (API Gateway refuses a handshake missing
// either with 401 without invoking the function).
var channelIdentity = []string{"route.request.header.Authorization", "route.request.querystring.deviceId"}

// route sends $connect, $disconnect and $default to fn; $default answers on
// the connection (a pong, an error frame: the route's response). $connect
// is authorised by fn itself as a Lambda REQUEST authorizer (the agent token
// check; shared/channel's Handler.Authorize): its context (the device and
// its organization) reaches every event of the connection, so the function
// keeps no connection rows. One function rather than an authorizer of its
// own: the same token check, and a reconnect's two invocations share one
// warm function.
func (c channelAPI) route(stack awscdk.Stack, fn awslambda.Function) {
	auth := awsapigatewayv2authorizers.NewWebSocketLambdaAuthorizer(jsii.String("AgentChannelAuthorizer"), fn,
		&awsapigatewayv2authorizers.WebSocketLambdaAuthorizerProps{
			AuthorizerName: jsii.String("agent-token"),
			IdentitySource: jsii.Strings(channelIdentity...),
		})
	for _, r := range []struct {
		key, id string
		reply   bool
	}{{"$connect", "Connect", false}, {"$disconnect", "Disconnect", false}, {"$default", "Default", true}} {
		opts := &awsapigatewayv2.WebSocketRouteOptions{
			Integration:    awsapigatewayv2integrations.NewWebSocketLambdaIntegration(jsii.String("AgentChannel"+r.id), fn, nil),
			ReturnResponse: jsii.Bool(r.reply),
		}
		if r.key == "$connect" {
			opts.Authorizer = auth
		}
		c.api.AddRoute(jsii.String(r.key), opts)
	}
}
