package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// checkChannel holds the agent channel's part of the template: its own
// WebSocket API and throttled stage, the three routes on the channel
// function, execute-api:ManageConnections on this API's connections only,
// granted exactly to the functions whose needs say Channel, the endpoint in
// their environment, and the alarms.
func checkChannel(t *testing.T, tmpl assertions.Template, cfn cfnTemplate, fnName map[string]string) {
	apiID := cfn.only(t, "AWS::ApiGatewayV2::Api", "AgentChannelApi")
	check(t, func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Api"), map[string]any{
			"ProtocolType": "WEBSOCKET", "RouteSelectionExpression": "$request.body.type"})
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"ApiId": map[string]any{"Ref": apiID}, "StageName": channelStageName, "AutoDeploy": true,
			"DefaultRouteSettings": map[string]any{"ThrottlingRateLimit": channelThrottleRate, "ThrottlingBurstLimit": channelThrottleBurst}})
	})
	channelFn := cfn.function(t, fnName, channelFunction)
	var keys []string
	for _, r := range cfn.of("AWS::ApiGatewayV2::Route") {
		if ref(r.Properties["ApiId"]) != apiID {
			continue
		}
		keys = append(keys, r.Properties["RouteKey"].(string))
		target, _ := r.Properties["Target"].(map[string]any)
		integ := ""
		for _, part := range list(dig(target, "Fn::Join")) {
			for _, p := range list(part) {
				if id := ref(p); id != "" {
					integ = id
				}
			}
		}
		uri := cfn.Resources[integ].Properties["IntegrationUri"]
		if !strings.Contains(mustJSON(t, uri), channelFn) {
			t.Errorf("route %v integrates %v, want the %s function", r.Properties["RouteKey"], uri, channelFunction)
		}
		if r.Properties["RouteKey"] == "$default" && r.Properties["RouteResponseSelectionExpression"] != "$default" {
			t.Errorf("$default answers no route response: %v", r.Properties)
		}
		// $connect alone is authorised, by the channel function's
		// authorizer (the agent token); the other routes are the
		// connection's and carry its context.
		authID := ref(r.Properties["AuthorizerId"])
		if r.Properties["RouteKey"] != "$connect" {
			if authID != "" || (r.Properties["AuthorizationType"] != nil && r.Properties["AuthorizationType"] != "NONE") {
				t.Errorf("route %v is authorised: %v", r.Properties["RouteKey"], r.Properties)
			}
			continue
		}
		if r.Properties["AuthorizationType"] != "CUSTOM" || authID == "" {
			t.Fatalf("$connect is not authorised by a Lambda authorizer: %v", r.Properties)
		}
		a := cfn.Resources[authID]
		if a.Type != "AWS::ApiGatewayV2::Authorizer" || a.Properties["AuthorizerType"] != "REQUEST" || ref(a.Properties["ApiId"]) != apiID {
			t.Errorf("$connect's authorizer %s: %v", authID, a.Properties)
		}
		if got := mustJSON(t, a.Properties["IdentitySource"]); got != mustJSON(t, channelIdentity) {
			t.Errorf("authorizer identity sources %s, want %v", got, channelIdentity)
		}
		if !strings.Contains(mustJSON(t, a.Properties["AuthorizerUri"]), channelFn) {
			t.Errorf("authorizer invokes %v, want the %s function", a.Properties["AuthorizerUri"], channelFunction)
		}
		// API Gateway may invoke the function as this API's authorizer.
		invokable := false
		for _, p := range cfn.of("AWS::Lambda::Permission") {
			if strings.Contains(mustJSON(t, p.Properties["FunctionName"]), channelFn) && strings.Contains(mustJSON(t, p.Properties["SourceArn"]), apiID) &&
				strings.Contains(mustJSON(t, p.Properties["SourceArn"]), "authorizers") {
				invokable = true
			}
		}
		if !invokable {
			t.Errorf("no permission for the channel API to invoke its authorizer")
		}
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []string{"$connect", "$default", "$disconnect"}) {
		t.Errorf("channel routes %v", keys)
	}
	for id, name := range fnName {
		needs := routes.NeedsOf(name)
		stmts := cfn.statements(t, id)
		var res []string
		for _, s := range stmts {
			if slices.Contains(s.Actions, "execute-api:ManageConnections") {
				for _, r := range s.Resources {
					res = append(res, mustJSON(t, r))
				}
			}
		}
		if !needs.Channel {
			if len(res) > 0 {
				t.Errorf("%s may manage connections: %v", name, res)
			}
			continue
		}
		if len(res) == 0 {
			t.Errorf("%s pushes but may not manage connections", name)
		}
		for _, r := range res {
			if !strings.Contains(r, apiID) || !strings.Contains(r, "@connections") || strings.Contains(r, `"*"`) {
				t.Errorf("%s: ManageConnections on %s, want this API's connections only", name, r)
			}
		}
		env := dig(cfn.Resources[id].Properties, "Environment", "Variables", "CHANNEL_ENDPOINT")
		if !strings.Contains(mustJSON(t, env), apiID) {
			t.Errorf("%s: CHANNEL_ENDPOINT %v", name, env)
		}
	}
	agents := cfn.function(t, fnName, agentsFunction)
	if u := dig(cfn.Resources[agents].Properties, "Environment", "Variables", "CHANNEL_URL"); !strings.Contains(mustJSON(t, u), "wss://") {
		t.Errorf("agents: CHANNEL_URL %v", u)
	}
	for _, a := range []string{"AgentChannelIntegrationErrorsAlarm", "AgentChannelExecutionErrorsAlarm", pascal(channelFunction) + "ErrorsAlarm"} {
		cfn.only(t, "AWS::CloudWatch::Alarm", a)
	}
	check(t, func() {
		tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), map[string]any{
			"MetricName": "IntegrationError", "Namespace": "AWS/ApiGateway", "Threshold": 0})
		tmpl.HasOutput(jsii.String("AgentChannelUrl"), map[string]any{})
	})
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
