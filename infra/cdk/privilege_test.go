package main

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// Action sets, written out here rather than taken from iam.go, so a change to
// what a function may do shows in this file's diff.
var (
	xrayActs     = []string{"xray:PutTelemetryRecords", "xray:PutTraceSegments"}
	readActs     = []string{"dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:Query"}
	writeActs    = []string{"dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
	sendActs     = []string{"sqs:SendMessage"}
	consumeActs  = []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}
	getSecret    = []string{"secretsmanager:GetSecretValue"}
	putSecret    = []string{"secretsmanager:PutSecretValue"}
	notifyActs   = []string{"ses:SendEmail", "ses:SendRawEmail", "sns:Publish"}
	manageActs   = []string{"execute-api:ManageConnections"} // the agent channel's connections (checkChannel)
	routeGroup   = slices.Concat(readActs, writeActs, sendActs, getSecret, xrayActs)
	tokenIssuers = []string{"auth", "auth-passkeys", "sso"}
)

// wantActions is every function's exact action set. A route group not listed
// (a new one) must have the default group set.
var wantActions = map[string][]string{
	"health":         slices.Concat([]string{"dynamodb:DescribeTable", "sqs:GetQueueAttributes"}, xrayActs),
	"search":         slices.Concat(readActs, writeActs, getSecret, xrayActs), // no queue: it raises no event
	"auth":           slices.Concat(routeGroup, putSecret),
	"auth-passkeys":  slices.Concat(routeGroup, putSecret),
	"sso":            slices.Concat(routeGroup, putSecret),
	"admin":          slices.Concat(routeGroup, consumeActs),
	"webhook-worker": slices.Concat(readActs, writeActs, sendActs, consumeActs, getSecret, xrayActs),
	"mailer":         slices.Concat(readActs, writeActs, consumeActs, notifyActs, []string{"sns:CreatePlatformEndpoint"}, xrayActs), // no secret, no send; push endpoints
	"sweeper":        slices.Concat(routeGroup, manageActs),
	// The agent channel and those that push to it.
	"agent-channel": slices.Concat(readActs, writeActs, sendActs, manageActs, xrayActs), // no secret: the agent token is checked against the table
	"devices":       slices.Concat(routeGroup, manageActs),
	"pam":           slices.Concat(routeGroup, manageActs),
}

// wantWriteKeys: functions whose writes are confined to partitions.
var wantWriteKeys = map[string][]string{
	"search":         {"APIKEYHASH#*", "RL#*", "ORG#*"},
	"webhook-worker": {"ORG#*"},
	"mailer":         {"USER#*", "AUDIT#*"},
	"agent-channel":  {"AGENT#*", "ORG#*", "OUTBOX#*"},
}

// wantSecrets: which functions read each secret (others: none).
var wantSecrets = map[string][]string{
	"TokenSigningSecret":     tokenIssuers,
	"EncryptionSecret":       {"auth", "sso", "webhook-worker", "webhooks"},
	"EnrollmentPepperSecret": {"agents", "enrollment-keys"},
	"AdminPasswordSecret":    {"sweeper"},
}

// wantSend: queues a function sends to, when not just the events queue.
var wantSend = map[string][]string{
	"health":         nil,
	"search":         nil,
	"mailer":         nil,
	"auth":           {"EventsQueue", "MailQueue"},
	"auth-passkeys":  {"EventsQueue", "MailQueue"},
	"users":          {"EventsQueue", "MailQueue"},
	"pam":            {"EventsQueue", "MailQueue"},
	"admin":          {"EventsQueue", "MailQueue", "WebhookDeliveriesQueue"},
	"webhook-worker": {"MailQueue", "WebhookDeliveriesDlq", "WebhookDeliveriesQueue"},
}

// wantReceive: queues a function reads (its event sources included).
var wantReceive = map[string][]string{
	"webhook-worker": {"EventsQueue", "WebhookDeliveriesDlq", "WebhookDeliveriesQueue"},
	"admin":          {"WebhookDeliveriesDlq"},
	"mailer":         {"MailQueue"},
}

// dataService reports whether an action touches data: such an action never
// has "*" as its resource.
func dataService(action string) bool {
	svc, _, _ := strings.Cut(action, ":")
	return svc == "dynamodb" || svc == "sqs" || svc == "secretsmanager" || svc == "kms"
}

func leastPrivilege(t *testing.T, cfn cfnTemplate, fnName map[string]string) {
	signingReaders := []string{}
	for _, name := range routes.Functions() {
		stmts := cfn.statements(t, cfn.function(t, fnName, name))
		var actions []string
		for _, s := range stmts {
			for _, a := range s.Actions {
				if a == "*" || strings.HasSuffix(a, ":*") {
					t.Errorf("%s: wildcard action %q", name, a)
				}
				if dataService(a) && slices.Contains(s.Resources, any("*")) {
					t.Errorf("%s: %s on resource *", name, a)
				}
				if !slices.Contains(actions, a) {
					actions = append(actions, a)
				}
			}
		}
		sort.Strings(actions)
		want, ok := wantActions[name]
		if !ok {
			want = routeGroup
			if slices.Contains(routes.Workers, name) {
				want = xrayActs
			}
		}
		want = slices.Clone(want)
		sort.Strings(want)
		if !slices.Equal(actions, want) {
			t.Errorf("%s: actions\n got %v\nwant %v", name, actions, want)
		}
		t.Logf("%s: %d statements, %d actions", name, len(stmts), len(actions))

		// Resources of the data actions.
		table := []string{"Table"}
		if got := granted(stmts, "dynamodb:GetItem"); name != "health" && !slices.Equal(got, table) {
			t.Errorf("%s: GetItem on %v", name, got)
		}
		if got := granted(stmts, "dynamodb:Query"); name != "health" && len(indexARNs(stmts, "dynamodb:Query")) != 1 {
			t.Errorf("%s: Query on %v without the indexes", name, got)
		}
		send, ok := wantSend[name]
		if !ok {
			send = []string{"EventsQueue"}
		}
		if got := granted(stmts, "sqs:SendMessage"); !slices.Equal(got, send) {
			t.Errorf("%s: SendMessage on %v, want %v", name, got, send)
		}
		for _, a := range []string{"sqs:ReceiveMessage", "sqs:DeleteMessage"} {
			if got := granted(stmts, a); !slices.Equal(got, wantReceive[name]) {
				t.Errorf("%s: %s on %v, want %v", name, a, got, wantReceive[name])
			}
		}
		readable := granted(stmts, "secretsmanager:GetSecretValue")
		for secret, readers := range wantSecrets {
			if got := slices.Contains(readable, secret); got != slices.Contains(readers, name) {
				t.Errorf("%s: reads %s = %v", name, secret, got)
			}
		}
		if got := slices.Contains(readable, "TokenPublicKeysSecret"); got != (name != "health" && !slices.Contains(routes.Workers, name)) {
			t.Errorf("%s: reads the public keys = %v", name, got)
		}
		if slices.Contains(readable, "TokenSigningSecret") {
			signingReaders = append(signingReaders, name)
		}
		if got := granted(stmts, "secretsmanager:PutSecretValue"); len(got) > 0 && !slices.Equal(got, []string{"TokenPublicKeysSecret"}) {
			t.Errorf("%s: PutSecretValue on %v", name, got)
		}

		// Writes confined to partitions.
		for _, s := range stmts {
			if !slices.Contains(s.Actions, "dynamodb:PutItem") {
				continue
			}
			var got []string
			if like, ok := dig(s.Condition, "ForAllValues:StringLike", "dynamodb:LeadingKeys").([]any); ok {
				for _, p := range like {
					got = append(got, p.(string))
				}
			}
			if want := wantWriteKeys[name]; !slices.Equal(got, want) {
				t.Errorf("%s: writes limited to %v, want %v", name, got, want)
			}
			if slices.ContainsFunc(s.Resources, func(r any) bool { return getAtt(r) == "" }) {
				t.Errorf("%s: writes on an index or other resource: %v", name, s.Resources)
			}
		}
	}
	sort.Strings(signingReaders)
	if !slices.Equal(signingReaders, tokenIssuers) {
		t.Errorf("functions reading the token-signing key: %v, want only the sign-in functions %v", signingReaders, tokenIssuers)
	}
	if !slices.Equal(routes.TokenIssuers, tokenIssuers) {
		t.Errorf("routes.TokenIssuers = %v", routes.TokenIssuers)
	}
}

// indexARNs lists the table/index/* resources action is granted on.
func indexARNs(stmts []statement, action string) []string {
	var out []string
	for _, s := range stmts {
		if !slices.Contains(s.Actions, action) {
			continue
		}
		for _, r := range s.Resources {
			raw, _ := json.Marshal(r)
			if strings.Contains(string(raw), "/index/*") {
				out = append(out, string(raw))
			}
		}
	}
	return out
}

func checkSecrets(t *testing.T, cfn cfnTemplate) {
	secrets := cfn.of("AWS::SecretsManager::Secret")
	if len(secrets) != len(routes.AllSecrets) {
		t.Errorf("%d secrets, want %d", len(secrets), len(routes.AllSecrets))
	}
	wantKey := map[string]string{"TokenSigningSecret": "current", "EncryptionSecret": "current",
		"EnrollmentPepperSecret": "pepper", "AdminPasswordSecret": "password"}
	for id, s := range secrets {
		if s.DeletionPolicy != "Retain" {
			t.Errorf("secret %s: deletion policy %q, want Retain", id, s.DeletionPolicy)
		}
		c := constructID(id)
		if c == "TokenPublicKeysSecret" { // public keys, not secret: an empty key set
			if got := dig(s.Properties, "SecretString"); got != `{"version":0,"keys":[]}` {
				t.Errorf("public keys initial value %v", got)
			}
			continue
		}
		if dig(s.Properties, "SecretString") != nil {
			t.Errorf("secret %s has a literal value in the template", id)
		}
		if got := dig(s.Properties, "GenerateSecretString", "GenerateStringKey"); got != wantKey[c] {
			t.Errorf("secret %s generates %v, want %s", c, got, wantKey[c])
		}
	}
	gen, _ := dig(cfn.Resources[cfn.only(t, "AWS::SecretsManager::Secret", "TokenSigningSecret")].Properties, "GenerateSecretString").(map[string]any)
	if gen["PasswordLength"] != 64.0 || gen["ExcludeCharacters"] != "ghijklmnopqrstuvwxyz" || gen["SecretStringTemplate"] != `{"version":1}` {
		t.Errorf("token-signing generator %v: want 64 hex digits in {version:1}", gen)
	}
}

func checkAlarms(t *testing.T, cfn cfnTemplate, fnName map[string]string) {
	alarms := cfn.of("AWS::CloudWatch::Alarm")
	topic := cfn.only(t, "AWS::SNS::Topic", "AlarmTopic")
	want := map[string]bool{"Api5xxRateAlarm": true, "ApiLatencyAlarm": true, "TableThrottlesAlarm": true,
		"TableSystemErrorsAlarm": true, "WebhookBatchFailuresAlarm": true,
		"AgentChannelIntegrationErrorsAlarm": true, "AgentChannelExecutionErrorsAlarm": true}
	for _, q := range routes.Queues {
		want[pascal(q.Name)+"DlqAlarm"] = true
	}
	for _, f := range routes.Functions() {
		want[pascal(f)+"ErrorsAlarm"], want[pascal(f)+"ThrottlesAlarm"] = true, true
	}
	got := map[string]cfnResource{}
	for id, a := range alarms {
		got[constructID(id)] = a
		if ref(list(a.Properties["AlarmActions"])[0]) != topic {
			t.Errorf("alarm %s does not notify the topic", id)
		}
	}
	for id := range want {
		if _, ok := got[id]; !ok {
			t.Errorf("alarm %s missing", id)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d alarms, want %d", len(got), len(want))
	}
	dims := func(a cfnResource) map[string]any {
		out := map[string]any{}
		for _, d := range list(a.Properties["Dimensions"]) {
			out[dig(d, "Name").(string)] = dig(d, "Value")
		}
		return out
	}
	for _, f := range routes.Functions() {
		a := got[pascal(f)+"ErrorsAlarm"]
		if a.Properties["MetricName"] != "Errors" || fnName[ref(dims(a)["FunctionName"])] != f || a.Properties["Threshold"] != 0.0 {
			t.Errorf("%s errors alarm %v", f, a.Properties)
		}
	}
	for _, q := range routes.Queues {
		a := got[pascal(q.Name)+"DlqAlarm"]
		if a.Properties["MetricName"] != "ApproximateNumberOfMessagesVisible" || a.Properties["ComparisonOperator"] != "GreaterThanThreshold" ||
			constructID(getAtt(dims(a)["QueueName"])) != pascal(q.Name)+"Dlq" {
			t.Errorf("%s DLQ alarm %v", q.Name, a.Properties)
		}
	}
	if a := got["ApiLatencyAlarm"]; a.Properties["ExtendedStatistic"] != "p99" || a.Properties["MetricName"] != "Latency" {
		t.Errorf("latency alarm %v", a.Properties)
	}
	a := got["WebhookBatchFailuresAlarm"]
	stat := dig(list(a.Properties["Metrics"])[0], "MetricStat")
	if dig(stat, "Metric", "Namespace") != "Gale" || dig(stat, "Metric", "MetricName") != "batchItemFailures" ||
		dig(list(dig(stat, "Metric", "Dimensions"))[0], "Value") != webhookWorker || dig(stat, "Stat") != "Sum" {
		t.Errorf("batch failures alarm %v", a.Properties)
	}
	for _, id := range []string{"Api5xxRateAlarm", "TableThrottlesAlarm", "TableSystemErrorsAlarm"} {
		if len(list(got[id].Properties["Metrics"])) < 2 {
			t.Errorf("%s is not a metric expression: %v", id, got[id].Properties)
		}
	}
	subs := cfn.of("AWS::SNS::Subscription")
	if len(subs) != 1 {
		t.Fatalf("subscriptions %v", subs)
	}
	for _, sub := range subs {
		if sub.Properties["Protocol"] != "email" || sub.Properties["Endpoint"] != "ops@example.com" || ref(sub.Properties["TopicArn"]) != topic {
			t.Errorf("subscription %v", sub.Properties)
		}
	}
}

func checkDashboard(t *testing.T, cfn cfnTemplate) {
	id := cfn.only(t, "AWS::CloudWatch::Dashboard", "Dashboard")
	raw, _ := json.Marshal(cfn.Resources[id].Properties["DashboardBody"])
	body := string(raw)
	for _, title := range []string{"Requests per minute by route group", "4xx per minute by route group", "5xx per minute by route group",
		"p99 latency (ms) by route group", "DynamoDB calls per request by route group", "Dead-letter queue depth",
		"Webhook deliveries per minute by outcome"} {
		if !strings.Contains(body, title) {
			t.Errorf("dashboard lacks %q", title)
		}
	}
	for _, m := range []string{`\"requests\"`, `\"status4xx\"`, `\"status5xx\"`, `\"durationMs\"`, `\"dbCalls\"`, `\"dbRCU\"`, `\"dbWCU\"`, "ApproximateNumberOfMessagesVisible", "deliveries"} {
		if !strings.Contains(body, m) {
			t.Errorf("dashboard lacks metric %s", m)
		}
	}
	for _, g := range routes.Groups {
		if !strings.Contains(body, `\"function\",\"`+g.Function+`\"`) {
			t.Errorf("dashboard lacks group %s", g.Function)
		}
	}
}

func checkStage(t *testing.T, tmpl assertions.Template, cfn cfnTemplate) {
	check(t, func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"StageName":  "$default",
			"AutoDeploy": true,
			"DefaultRouteSettings": map[string]any{
				"ThrottlingRateLimit":  200,
				"ThrottlingBurstLimit": 400,
			},
		})
	})
	// The agent routes have their own throttling (issue 32: no platform-wide
	// cap below a million devices), and only they.
	agent := map[string]any{"ThrottlingRateLimit": 20000, "ThrottlingBurstLimit": 40000}
	check(t, func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::Stage"), map[string]any{
			"RouteSettings": map[string]any{"ANY /api/v1/agents": agent, "ANY /api/v1/agents/{proxy+}": agent},
		})
	})
	for _, st := range cfn.of("AWS::ApiGatewayV2::Stage") {
		if st.Properties["StageName"] == channelStageName {
			continue // the agent channel's own API (channel_test.go)
		}
		settings, _ := st.Properties["RouteSettings"].(map[string]any)
		if len(settings) != 2 {
			t.Errorf("stage route settings %v, want the two agent routes only", settings)
		}
	}
	check(t, func() {
		tmpl.HasResourceProperties(jsii.String("AWS::ApiGatewayV2::DomainName"), map[string]any{
			"DomainName": "api.example.com",
		})
	})
	check(t, func() { tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::ApiMapping"), jsii.Number(1)) })
	t.Logf("resources: %d (CloudFormation allows 500)", len(cfn.Resources))
	if len(cfn.Resources) > 450 {
		t.Errorf("%d resources: near CloudFormation's 500", len(cfn.Resources))
	}
}

// The context parameters have their defaults in cdk.json.
func TestContextDefaultsInCDKJSON(t *testing.T) {
	ctx := cdkJSONContext(t)
	for key, want := range map[string]any{
		ctxStageName: defaultStageName, ctxThrottleRate: float64(defaultThrottleRate), ctxThrottleBurst: float64(defaultThrottleBurst),
		ctxAgentThrottleRate: float64(defaultAgentThrottleRate), ctxAgentThrottleBurst: float64(defaultAgentThrottleBurst),
		ctxXRay: false, ctxLogRetentionDays: float64(defaultLogRetention), ctxAlarmEmail: "", ctxDomainName: "",
		ctxCertificateArn: "", ctxCorsOrigins: "", ctxPushAPNSAppArn: "", ctxPushFCMAppArn: "",
	} {
		if got, ok := ctx[key]; !ok || got != want {
			t.Errorf("cdk.json context %s = %v (present %v), want %v", key, got, ok, want)
		}
	}
	_ = awscdk.RemovalPolicy_RETAIN
}
