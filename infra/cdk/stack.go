package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscertificatemanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// Context keys the app reads (cdk.json "context" or `cdk synth -c key=value`);
// cdk.json holds the defaults, and so does the code, for a context without them.
const (
	// ctxDistDir is the directory holding <function>/bootstrap, relative to the
	// project root (the directory of cdk.json) unless absolute. Default "dist".
	ctxDistDir = "distDir"
	// ctxAppURL is the public URL of the web app, used in links the API sends.
	ctxAppURL = "appUrl"
	// ctxAdminEmail names the system administrator the sweeper's bootstrap job
	// creates; its password is the admin-password secret's.
	ctxAdminEmail = "adminEmail"
	// ctxStageName is the HTTP API's stage. "$default" serves the routes at the
	// root of the API's URL; any other stage prefixes the execute-api path
	// with its name, which the routes do not expect: use it with a custom
	// domain (the mapping hides the stage).
	ctxStageName = "stageName"
	// ctxDomainName and ctxCertificateArn: a custom domain for the API (an ACM
	// certificate of the stack's region); empty for none.
	ctxDomainName     = "domainName"
	ctxCertificateArn = "certificateArn"
	// ctxCorsOrigins: comma-separated browser origins allowed to call the API
	// (CORS_ALLOWED_ORIGINS); empty for none.
	ctxCorsOrigins = "corsOrigins"
	// ctxPushAPNSAppArn and ctxPushFCMAppArn: the SNS platform applications
	// (created outside the stack: they hold the APNs key and the FCM
	// credentials) through which the mailer sends PAM mobile approval
	// requests (PUSH_APNS_APP_ARN, PUSH_FCM_APP_ARN); empty for none (the
	// mailer then drops push messages of that platform, logged).
	ctxPushAPNSAppArn = "pushApnsAppArn"
	ctxPushFCMAppArn  = "pushFcmAppArn"
	// ctxAlarmEmail subscribes an address to the alarm topic; empty for none.
	ctxAlarmEmail = "alarmEmail"
	// ctxThrottleRate and ctxThrottleBurst: the stage's default route
	// throttling (requests per second, burst).
	ctxThrottleRate  = "throttleRateLimit"
	ctxThrottleBurst = "throttleBurstLimit"
	// ctxAgentThrottleRate and ctxAgentThrottleBurst: the agent routes' own
	// throttling (requests per second, burst), apart from the management
	// routes' (README, "Throttling").
	ctxAgentThrottleRate  = "agentThrottleRateLimit"
	ctxAgentThrottleBurst = "agentThrottleBurstLimit"
	// ctxXRay turns on X-Ray: active tracing of the functions, and their AWS
	// SDK calls as subsegments (GALE_XRAY): "true" or "false".
	ctxXRay = "xray"
	// ctxLogRetentionDays is how long function logs are kept.
	ctxLogRetentionDays = "logRetentionDays"

	defaultDistDir       = "dist"
	defaultAppURL        = "https://app.example.com"
	defaultStageName     = "$default"
	defaultThrottleRate  = 200
	defaultThrottleBurst = 400
	// 1,000,000 agents polling every 60 s +-10% make 16,700 requests a
	// second on average (3,300 at 300 s with a channel open); the rest is
	// headroom for inventory uploads and reconnect waves (README).
	defaultAgentThrottleRate  = 20000
	defaultAgentThrottleBurst = 40000
	defaultLogRetention       = 30
)

// Function settings. Workers stay well under their queues' visibility timeout
// (routes.Queue.VisibilityTimeoutSeconds), so a message is never handed to a
// second consumer while the first still works on it.
const (
	memoryMB          = 256
	httpTimeoutSecond = 29 // API Gateway's integration limit
	workerTimeoutSec  = 50
	dlqRetentionDays  = 14
)

// Queue names this stack wires by role, and the env-var stem each queue's URLs
// are published under (<STEM>_QUEUE_URL, <STEM>_DLQ_URL).
const (
	eventsQueue     = "events"
	deliveriesQueue = "webhook-deliveries"
	mailQueue       = "mail"
)

var queueEnvStem = map[string]string{
	eventsQueue:     "EVENTS",
	deliveriesQueue: "DELIVERY",
	mailQueue:       "MAIL",
}

// Functions the stack wires by name.
const (
	webhookWorker   = "webhook-worker"
	sweeper         = "sweeper"
	agentsFunction  = "agents"
	channelFunction = "agent-channel"
)

// GaleStackProps configures NewGaleStack.
type GaleStackProps struct {
	awscdk.StackProps
	// DistDir holds one directory per function with its "bootstrap" binary.
	// Empty means the "distDir" context value, else "dist"; a relative path is
	// taken from the project root (the directory of cdk.json).
	DistDir string
	// AppURL is the web app's public URL. Empty means the "appUrl" context
	// value, else https://app.example.com.
	AppURL string
	// AdminEmail is the system administrator's e-mail, created by the sweeper's
	// hourly bootstrap job with the generated password of the admin-password
	// secret. Empty means the "adminEmail" context value, else no
	// administrator is created.
	AdminEmail string
}

// NewGaleStack defines the whole deployment: table, queues, secrets, one Lambda
// per routes.Functions() entry with exactly the rights routes.NeedsOf lists,
// the HTTP API, the sweeper schedules, alarms and the dashboard. It panics (as
// CDK constructs do) when the route table and the stack disagree or a
// function's binary is missing.
func NewGaleStack(scope constructs.Construct, id string, props *GaleStackProps) awscdk.Stack {
	if props == nil {
		props = &GaleStackProps{}
	}
	if err := checkRoutes(); err != nil {
		panic(err)
	}
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)

	distDir := resolveDistDir(stack, props.DistDir)
	if err := checkAssets(distDir, routes.Functions()); err != nil {
		panic(err)
	}
	appURL := props.AppURL
	if appURL == "" {
		appURL = contextString(stack, ctxAppURL, defaultAppURL)
	}
	adminEmail := props.AdminEmail
	if adminEmail == "" {
		adminEmail = contextString(stack, ctxAdminEmail, "")
	}
	xray := contextBool(stack, ctxXRay, false)
	cors := contextString(stack, ctxCorsOrigins, "")
	pushApps := map[string]string{"PUSH_APNS_APP_ARN": contextString(stack, ctxPushAPNSAppArn, ""),
		"PUSH_FCM_APP_ARN": contextString(stack, ctxPushFCMAppArn, "")}

	table := newTable(stack)
	queues := newQueues(stack)
	secrets := newSecrets(stack)

	env := map[string]*string{
		"APP_ENV": jsii.String("production"),
		"APP_URL": jsii.String(appURL),
	}
	for _, q := range routes.Queues {
		stem := queueEnvStem[q.Name]
		env[stem+"_QUEUE_URL"] = queues[q.Name].queue.QueueUrl()
		env[stem+"_DLQ_URL"] = queues[q.Name].dlq.QueueUrl()
	}

	channel := newChannelAPI(stack)

	fns := map[string]awslambda.Function{}
	for _, name := range routes.Functions() {
		needs := routes.NeedsOf(name)
		timeout := httpTimeoutSecond
		if slices.Contains(routes.Workers, name) {
			timeout = workerTimeoutSec
		}
		fenv := maps.Clone(env)
		fenv["GALE_FUNCTION"] = jsii.String(name)
		if needs.Table != routes.TableNone {
			fenv["TABLE_NAME"] = table.TableName()
		}
		for _, s := range needs.Secrets {
			fenv[secretEnv[s]] = secrets[s].SecretArn()
		}
		if name == sweeper && adminEmail != "" {
			fenv["SYSTEM_ADMIN_EMAIL"] = jsii.String(adminEmail)
		}
		if xray {
			fenv["GALE_XRAY"] = jsii.String("true") // AWS SDK calls as subsegments (shared/config/xray.go)
		}
		if cors != "" && !slices.Contains(routes.Workers, name) {
			fenv["CORS_ALLOWED_ORIGINS"] = jsii.String(cors)
		}
		var pushARNs []*string
		for k, arn := range pushApps {
			if needs.Notify && arn != "" {
				fenv[k] = jsii.String(arn)
				pushARNs = append(pushARNs, jsii.String(arn))
			}
		}
		if needs.Channel {
			// The functions that push post through this API's Management
			// API, and only to its connections.
			fenv["CHANNEL_ENDPOINT"] = channel.stage.CallbackUrl()
		}
		if name == agentsFunction {
			fenv["CHANNEL_URL"] = channel.stage.Url() // told to agents (channelUrl)
		}
		fn := newFunction(stack, name, filepath.Join(distDir, name), timeout, fenv, xray)
		grant(stack, fn, name, needs, table, queues, secrets)
		if needs.Channel {
			channel.stage.GrantManagementApiAccess(fn)
		}
		if len(pushARNs) > 0 {
			// Mobile push: an endpoint per device token under the platform
			// applications, then sns:Publish to it (granted with SMS).
			slices.SortFunc(pushARNs, func(a, b *string) int { return strings.Compare(*a, *b) })
			fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("sns:CreatePlatformEndpoint"), Resources: &pushARNs}))
		}
		fns[name] = fn
	}

	// Each event source grants consume rights on its own queue.
	for _, q := range routes.Queues {
		fns[q.Consumer].AddEventSource(awslambdaeventsources.NewSqsEventSource(queues[q.Name].queue,
			&awslambdaeventsources.SqsEventSourceProps{
				BatchSize:               jsii.Number(q.BatchSize),
				MaxConcurrency:          jsii.Number(q.MaxConcurrency),
				ReportBatchItemFailures: jsii.Bool(true),
			}))
	}

	api, stage := newHTTPAPI(stack, fns)
	channel.route(stack, fns[channelFunction])

	for _, s := range routes.Schedules {
		rule := awsevents.NewRule(stack, jsii.String("Schedule"+pascal(s.Job)), &awsevents.RuleProps{
			Description: jsii.String("Gale sweeper job " + s.Job),
			Schedule:    awsevents.Schedule_Expression(jsii.String(rateExpression(s.RateMinutes))),
		})
		rule.AddTarget(awseventstargets.NewLambdaFunction(fns[sweeper], &awseventstargets.LambdaFunctionProps{
			Event: awsevents.RuleTargetInput_FromObject(map[string]any{"job": s.Job}),
		}))
	}

	newOperations(stack, api, channel, table, queues, fns)

	output(stack, "ApiUrl", stage.Url())
	output(stack, "AgentChannelUrl", channel.stage.Url())
	output(stack, "TableName", table.TableName())
	for _, q := range routes.Queues {
		output(stack, pascal(q.Name)+"QueueUrl", queues[q.Name].queue.QueueUrl())
		output(stack, pascal(q.Name)+"DlqUrl", queues[q.Name].dlq.QueueUrl())
	}
	for _, s := range routes.AllSecrets {
		output(stack, pascal(string(s))+"SecretArn", secrets[s].SecretArn())
	}
	return stack
}

// checkRoutes verifies the parts of the route table this stack relies on.
func checkRoutes() error {
	for _, name := range []string{eventsQueue, deliveriesQueue, mailQueue} {
		if !slices.ContainsFunc(routes.Queues, func(q routes.Queue) bool { return q.Name == name }) {
			return fmt.Errorf("routes: queue %q missing", name)
		}
	}
	fns := routes.Functions()
	for _, name := range []string{webhookWorker, sweeper, agentsFunction} {
		if !slices.Contains(fns, name) {
			return fmt.Errorf("routes: function %q missing", name)
		}
	}
	// Every name in the needs table is a function, and every queue it names
	// exists: a typo would silently grant nothing.
	queueNames := map[string]bool{}
	for _, q := range routes.Queues {
		queueNames[q.Name], queueNames[routes.DLQ(q.Name)] = true, true
	}
	for name, n := range routes.FunctionNeeds {
		if !slices.Contains(fns, name) {
			return fmt.Errorf("routes: needs of unknown function %q", name)
		}
		for _, q := range slices.Concat(n.Send, n.Receive, n.Inspect) {
			if !queueNames[q] {
				return fmt.Errorf("routes: function %q needs unknown queue %q", name, q)
			}
		}
		for _, sec := range n.Secrets {
			if _, ok := secretEnv[sec]; !ok {
				return fmt.Errorf("routes: function %q needs unknown secret %q", name, sec)
			}
		}
	}
	for _, q := range routes.Queues {
		if _, ok := queueEnvStem[q.Name]; !ok {
			return fmt.Errorf("routes: queue %q has no environment variable name in infra/cdk", q.Name)
		}
		if !slices.Contains(routes.Workers, q.Consumer) {
			return fmt.Errorf("routes: queue %q consumer %q is not a worker", q.Name, q.Consumer)
		}
		if q.VisibilityTimeoutSeconds <= workerTimeoutSec {
			return fmt.Errorf("routes: queue %q visibility timeout %ds must exceed the worker timeout %ds",
				q.Name, q.VisibilityTimeoutSeconds, workerTimeoutSec)
		}
	}
	return nil
}

// checkAssets reports the first function whose bootstrap binary is missing.
func checkAssets(distDir string, fns []string) error {
	for _, fn := range fns {
		p := filepath.Join(distDir, fn, "bootstrap")
		if _, err := os.Stat(p); err != nil {
			return fmt.Errorf("function %s: %w (build the functions first with `make build`, or point -c %s=... at them)",
				fn, err, ctxDistDir)
		}
	}
	return nil
}

// resolveDistDir picks the asset directory: explicit, context, default; a
// relative path is taken from the project root.
func resolveDistDir(scope constructs.Construct, explicit string) string {
	dir := explicit
	if dir == "" {
		dir = contextString(scope, ctxDistDir, defaultDistDir)
	}
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(projectRoot(), dir)
	}
	return filepath.Clean(dir)
}

// projectRoot is the nearest directory at or above the working directory that
// holds cdk.json. `cdk synth` runs the app from infra/cdk (see cdk.json "app"),
// so paths in context are resolved from where cdk.json is, not from here.
func projectRoot() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "cdk.json")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			return wd
		}
	}
}

func contextString(scope constructs.Construct, key, fallback string) string {
	v, ok := scope.Node().TryGetContext(jsii.String(key)).(string)
	if !ok || v == "" {
		return fallback
	}
	return v
}

// contextBool reads a context value given as a JSON boolean or as the string
// "true"/"false" (what -c key=value passes).
func contextBool(scope constructs.Construct, key string, fallback bool) bool {
	switch v := scope.Node().TryGetContext(jsii.String(key)).(type) {
	case bool:
		return v
	case string:
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
		panic(fmt.Sprintf("context %s: %q is not true or false", key, v))
	}
	return fallback
}

// contextNumber reads a context value given as a JSON number or a string.
func contextNumber(scope constructs.Construct, key string, fallback float64) float64 {
	switch v := scope.Node().TryGetContext(jsii.String(key)).(type) {
	case float64:
		return v
	case string:
		if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
			return n
		}
		panic(fmt.Sprintf("context %s: %q is not a number", key, v))
	}
	return fallback
}

// listAttributes are the attributes the list indexes project beside the keys
// (shared/store.ListAttributes; infra/cdk imports shared/routes only, and
// TestListIndexesMatchTheStore in the root module holds the two equal).
var listAttributes = []string{"orgId", "partnerId", "siteId", "groupIds", "status", "severity", "deviceId", "expiresAt"}

func newTable(stack awscdk.Stack) awsdynamodb.Table {
	str := awsdynamodb.AttributeType_STRING
	table := awsdynamodb.NewTable(stack, jsii.String("Table"), &awsdynamodb.TableProps{
		PartitionKey:        &awsdynamodb.Attribute{Name: jsii.String("PK"), Type: str},
		SortKey:             &awsdynamodb.Attribute{Name: jsii.String("SK"), Type: str},
		BillingMode:         awsdynamodb.BillingMode_PAY_PER_REQUEST,
		TimeToLiveAttribute: jsii.String("ttl"),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		// The table outlives the stack: deleting the stack, or a change that
		// would replace the table, keeps it (and CloudFormation cannot delete it).
		RemovalPolicy:      awscdk.RemovalPolicy_RETAIN,
		DeletionProtection: jsii.Bool(true),
	})
	for _, gsi := range []string{"GSI1", "GSI2"} {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(gsi),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(gsi + "PK"), Type: str},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(gsi + "SK"), Type: str},
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
	// The list indexes (shared/store: GSI3 partner-keyed, GSI4
	// organization-keyed) project the keys and the reach attributes only, so a
	// heartbeat never writes them. The same shape as store.CreateTable.
	for _, gsi := range []string{"GSI3", "GSI4"} {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:        jsii.String(gsi),
			PartitionKey:     &awsdynamodb.Attribute{Name: jsii.String(gsi + "PK"), Type: str},
			SortKey:          &awsdynamodb.Attribute{Name: jsii.String(gsi + "SK"), Type: str},
			ProjectionType:   awsdynamodb.ProjectionType_INCLUDE,
			NonKeyAttributes: jsii.Strings(listAttributes...),
		})
	}
	// The last-seen index of online devices (shared/device, GSI5): keys only,
	// since its keys move with heartbeats (at most once per 5 minutes per
	// device) and a projection would copy the device on every move. A
	// deployed table gains it by one UpdateTable (CloudFormation adds one
	// index per update); the sweep reads the legacy GSI2 shards meanwhile.
	table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
		IndexName:      jsii.String("GSI5"),
		PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String("GSI5PK"), Type: str},
		SortKey:        &awsdynamodb.Attribute{Name: jsii.String("GSI5SK"), Type: str},
		ProjectionType: awsdynamodb.ProjectionType_KEYS_ONLY,
	})
	return table
}

type queuePair struct {
	queue, dlq awssqs.Queue
}

func newQueues(stack awscdk.Stack) map[string]queuePair {
	out := map[string]queuePair{}
	for _, q := range routes.Queues {
		id := pascal(q.Name)
		dlq := awssqs.NewQueue(stack, jsii.String(id+"Dlq"), &awssqs.QueueProps{
			RetentionPeriod: awscdk.Duration_Days(jsii.Number(dlqRetentionDays)),
			EnforceSSL:      jsii.Bool(true),
			Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		})
		queue := awssqs.NewQueue(stack, jsii.String(id+"Queue"), &awssqs.QueueProps{
			VisibilityTimeout: awscdk.Duration_Seconds(jsii.Number(q.VisibilityTimeoutSeconds)),
			DeadLetterQueue: &awssqs.DeadLetterQueue{
				Queue:           dlq,
				MaxReceiveCount: jsii.Number(q.MaxReceiveCount),
			},
			EnforceSSL: jsii.Bool(true),
			// Mail jobs carry reset links and codes until delivered.
			Encryption: awssqs.QueueEncryption_SQS_MANAGED,
		})
		out[q.Name] = queuePair{queue: queue, dlq: dlq}
	}
	return out
}

func newFunction(stack awscdk.Stack, name, assetDir string, timeoutSec int, env map[string]*string, xray bool) awslambda.Function {
	id := pascal(name)
	logs := awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     retention(contextNumber(stack, ctxLogRetentionDays, defaultLogRetention)),
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	tracing := awslambda.Tracing_DISABLED
	if xray {
		tracing = awslambda.Tracing_ACTIVE
	}
	return awslambda.NewFunction(stack, jsii.String(id+"Function"), &awslambda.FunctionProps{
		Tracing:      tracing,
		Description:  jsii.String("Gale " + name),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(assetDir), nil),
		MemorySize:   jsii.Number(memoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeoutSec)),
		Environment:  &env,
		LogGroup:     logs,
		// JSON logging lets the platform's own lines be filtered: at WARN,
		// Lambda drops its START, END and REPORT lines (about 350 bytes an
		// invocation, a tenth of a device's monthly bill at one heartbeat a
		// minute); its metrics (duration, errors) do not come from them.
		// The functions' lines are JSON already and pass unchanged.
		LoggingFormat:    awslambda.LoggingFormat_JSON,
		SystemLogLevelV2: awslambda.SystemLogLevel_WARN,
	})
}

// grantNotify lets fn send e-mail through SES and SMS/push through SNS.
func grantNotify(stack awscdk.Stack, fn awslambda.Function) {
	// SES authorizes SendEmail against the sending identity and, when one is
	// used, the configuration set; both are configured outside this stack, so
	// the grant covers this account's identities and configuration sets.
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("ses:SendEmail", "ses:SendRawEmail"),
		Resources: &[]*string{
			stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("identity"), ResourceName: jsii.String("*")}),
			stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ses"), Resource: jsii.String("configuration-set"), ResourceName: jsii.String("*")}),
		},
	}))
	// SMS goes to a phone number, which has no ARN: IAM evaluates sns:Publish to
	// a phone number against resource "*", so no narrower resource can allow it.
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("sns:Publish"),
		Resources: jsii.Strings("*"),
	}))
}

// newHTTPAPI routes every prefix of every group, exactly and with its subpaths,
// to the group's function, on one stage with the context's throttling, and
// maps the custom domain when one is configured.
func newHTTPAPI(stack awscdk.Stack, fns map[string]awslambda.Function) (awsapigatewayv2.HttpApi, awsapigatewayv2.HttpStage) {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:            jsii.String("gale"),
		Description:        jsii.String("Gale HTTP API"),
		CreateDefaultStage: jsii.Bool(false),
	})
	stage := awsapigatewayv2.NewHttpStage(stack, jsii.String("Stage"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    api,
		StageName:  jsii.String(contextString(stack, ctxStageName, defaultStageName)),
		AutoDeploy: jsii.Bool(true),
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(contextNumber(stack, ctxThrottleRate, defaultThrottleRate)),
			BurstLimit: jsii.Number(contextNumber(stack, ctxThrottleBurst, defaultThrottleBurst)),
		},
	})
	// Agent traffic does not share the management routes' limits: each
	// route of the agents function gets its own throttling (route settings
	// override the stage's default), so a million polling devices neither
	// starve nor are starved by the API's users.
	agentLimits := map[string]any{
		"ThrottlingRateLimit":  contextNumber(stack, ctxAgentThrottleRate, defaultAgentThrottleRate),
		"ThrottlingBurstLimit": contextNumber(stack, ctxAgentThrottleBurst, defaultAgentThrottleBurst),
	}
	routeSettings := map[string]any{}
	var agentRoutes []constructs.IDependable
	for _, g := range routes.Groups {
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(
			jsii.String(pascal(g.Function)+"Integration"), fns[g.Function],
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
				PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
			})
		var paths []string
		for _, prefix := range g.Prefixes {
			paths = append(paths, prefix, prefix+"/{proxy+}")
		}
		for _, path := range append(paths, g.Exact...) {
			rs := api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
				Path:        jsii.String(path),
				Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
				Integration: integration,
			})
			if g.Function == agentsFunction {
				routeSettings["ANY "+path] = agentLimits
				for _, r := range *rs {
					agentRoutes = append(agentRoutes, r)
				}
			}
		}
	}
	// A stage's route settings name existing routes: the stage waits for them.
	stage.Node().DefaultChild().(awsapigatewayv2.CfnStage).AddPropertyOverride(jsii.String("RouteSettings"), routeSettings)
	for _, r := range agentRoutes {
		stage.Node().AddDependency(r)
	}
	if domain := contextString(stack, ctxDomainName, ""); domain != "" {
		arn := contextString(stack, ctxCertificateArn, "")
		if arn == "" {
			panic(fmt.Sprintf("context %s needs %s (an ACM certificate of the stack's region)", ctxDomainName, ctxCertificateArn))
		}
		dn := awsapigatewayv2.NewDomainName(stack, jsii.String("Domain"), &awsapigatewayv2.DomainNameProps{
			DomainName:  jsii.String(domain),
			Certificate: awscertificatemanager.Certificate_FromCertificateArn(stack, jsii.String("Certificate"), jsii.String(arn)),
		})
		awsapigatewayv2.NewApiMapping(stack, jsii.String("DomainMapping"), &awsapigatewayv2.ApiMappingProps{
			Api: api, DomainName: dn, Stage: stage,
		})
		// Point the domain's DNS record (CNAME or alias) here.
		output(stack, "DomainTarget", dn.RegionalDomainName())
	}
	return api, stage
}

// rateExpression is the EventBridge rate for a whole number of minutes, kept in
// minutes (CDK's Schedule.rate would write "rate(1 hour)" for 60) so the
// template reads like routes.Schedules.
func rateExpression(minutes int) string {
	if minutes == 1 {
		return "rate(1 minute)"
	}
	return fmt.Sprintf("rate(%d minutes)", minutes)
}

func output(stack awscdk.Stack, id string, value *string) {
	awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value})
}

// pascal turns a routes name ("webhook-deliveries") into a construct id part
// ("WebhookDeliveries").
func pascal(name string) string {
	var b strings.Builder
	for _, part := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '_' }) {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}
