package main

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// Context keys the app reads (cdk.json "context" or `cdk synth -c key=value`).
const (
	// ctxDistDir is the directory holding <function>/bootstrap, relative to the
	// project root (the directory of cdk.json) unless absolute. Default "dist".
	ctxDistDir = "distDir"
	// ctxAppURL is the public URL of the web app, used in links the API sends.
	ctxAppURL = "appUrl"
	// ctxAdminEmail names the system administrator the sweeper's bootstrap job
	// creates; its password is the app secret's systemAdminPassword.
	ctxAdminEmail = "adminEmail"

	defaultDistDir = "dist"
	defaultAppURL  = "https://app.example.com"
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

// Functions with extra rights beyond the baseline every function gets (read/write
// table data, send to the events queue, read the app secret).
const (
	webhookWorker = "webhook-worker"
	sweeper       = "sweeper"
	adminFunction = "admin"
	mailer        = "mailer"
)

// notifiers send e-mail (SES) and SMS/push (SNS): only the mailer, which
// delivers what mailSenders put on the mail queue.
var (
	notifiers   = []string{mailer}
	mailSenders = []string{"auth", "auth-passkeys", "users", "admin", "pam"}
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
	// hourly bootstrap job with the generated password the app secret holds
	// (systemAdminPassword). Empty means the "adminEmail" context value, else
	// no administrator is created.
	AdminEmail string
}

// NewGaleStack defines the whole deployment: table, queues, secret, one Lambda
// per routes.Functions() entry, the HTTP API and the sweeper schedules. It panics
// (as CDK constructs do) when the route table and the stack disagree or a
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

	table := newTable(stack)
	queues := newQueues(stack)
	secret := newAppSecret(stack)

	env := map[string]*string{
		"TABLE_NAME":     table.TableName(),
		"APP_SECRET_ARN": secret.SecretArn(),
		"APP_ENV":        jsii.String("production"),
		"APP_URL":        jsii.String(appURL),
	}
	for _, q := range routes.Queues {
		stem := queueEnvStem[q.Name]
		env[stem+"_QUEUE_URL"] = queues[q.Name].queue.QueueUrl()
		env[stem+"_DLQ_URL"] = queues[q.Name].dlq.QueueUrl()
	}

	adminEmail := props.AdminEmail
	if adminEmail == "" {
		adminEmail = contextString(stack, ctxAdminEmail, "")
	}

	fns := map[string]awslambda.Function{}
	for _, name := range routes.Functions() {
		timeout := httpTimeoutSecond
		if slices.Contains(routes.Workers, name) {
			timeout = workerTimeoutSec
		}
		fenv := env
		if name == sweeper && adminEmail != "" {
			fenv = maps.Clone(env)
			fenv["SYSTEM_ADMIN_EMAIL"] = jsii.String(adminEmail)
		}
		fn := newFunction(stack, name, filepath.Join(distDir, name), timeout, fenv)

		// Baseline of every function.
		table.GrantReadWriteData(fn)
		queues[eventsQueue].queue.GrantSendMessages(fn)
		secret.GrantRead(fn, nil)
		if slices.Contains(notifiers, name) {
			grantNotify(stack, fn)
		}
		if slices.Contains(mailSenders, name) {
			queues[mailQueue].queue.GrantSendMessages(fn)
		}
		fns[name] = fn
	}

	// The webhook worker fans events out to deliveries and retries deliveries;
	// it also reads and refills the delivery DLQ. Each event source grants
	// consume rights on its own queue.
	for _, q := range routes.Queues {
		fns[q.Consumer].AddEventSource(awslambdaeventsources.NewSqsEventSource(queues[q.Name].queue,
			&awslambdaeventsources.SqsEventSourceProps{
				BatchSize:               jsii.Number(q.BatchSize),
				MaxConcurrency:          jsii.Number(q.MaxConcurrency),
				ReportBatchItemFailures: jsii.Bool(true),
			}))
	}
	deliveries := queues[deliveriesQueue]
	deliveries.queue.GrantSendMessages(fns[webhookWorker])
	deliveries.dlq.GrantConsumeMessages(fns[webhookWorker])
	deliveries.dlq.GrantSendMessages(fns[webhookWorker])

	// Admin redrive: take messages off the delivery DLQ, put them back on the
	// deliveries queue.
	deliveries.dlq.GrantConsumeMessages(fns[adminFunction])
	deliveries.queue.GrantSendMessages(fns[adminFunction])

	api := newHTTPAPI(stack, fns)

	for _, s := range routes.Schedules {
		rule := awsevents.NewRule(stack, jsii.String("Schedule"+pascal(s.Job)), &awsevents.RuleProps{
			Description: jsii.String("Gale sweeper job " + s.Job),
			Schedule:    awsevents.Schedule_Expression(jsii.String(rateExpression(s.RateMinutes))),
		})
		rule.AddTarget(awseventstargets.NewLambdaFunction(fns[sweeper], &awseventstargets.LambdaFunctionProps{
			Event: awsevents.RuleTargetInput_FromObject(map[string]any{"job": s.Job}),
		}))
	}

	output(stack, "ApiUrl", api.Url())
	output(stack, "TableName", table.TableName())
	for _, q := range routes.Queues {
		output(stack, pascal(q.Name)+"QueueUrl", queues[q.Name].queue.QueueUrl())
		output(stack, pascal(q.Name)+"DlqUrl", queues[q.Name].dlq.QueueUrl())
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
	for _, name := range slices.Concat([]string{webhookWorker, sweeper, adminFunction}, notifiers, mailSenders) {
		if !slices.Contains(fns, name) {
			return fmt.Errorf("routes: function %q missing", name)
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
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	for _, gsi := range []string{"GSI1", "GSI2"} {
		table.AddGlobalSecondaryIndex(&awsdynamodb.GlobalSecondaryIndexProps{
			IndexName:      jsii.String(gsi),
			PartitionKey:   &awsdynamodb.Attribute{Name: jsii.String(gsi + "PK"), Type: str},
			SortKey:        &awsdynamodb.Attribute{Name: jsii.String(gsi + "SK"), Type: str},
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
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

// newAppSecret creates the secret the functions read at start: a JSON object
// {"jwtSecret", "encryptionKey", "enrollmentPepper"}, each value generated by
// Secrets Manager at deploy time and never present in the template.
//
// Secrets Manager generates only one key per secret, so encryptionKey and
// enrollmentPepper are generated into two seed secrets and copied into the app
// secret's template through CloudFormation dynamic references; jwtSecret is the
// app secret's own generated key. The functions are granted the app secret only.
//
// Formats: jwtSecret and enrollmentPepper are 64 alphanumeric characters;
// encryptionKey is 64 lowercase hex digits, i.e. a hex-encoded 32-byte key.
//
// All three secrets are retained with the table: the table holds data sealed
// with encryptionKey and hashes peppered with enrollmentPepper.
func newAppSecret(stack awscdk.Stack) awssecretsmanager.Secret {
	seed := func(id, desc string, gen *awssecretsmanager.SecretStringGenerator) *string {
		s := awssecretsmanager.NewSecret(stack, jsii.String(id), &awssecretsmanager.SecretProps{
			Description:          jsii.String(desc),
			GenerateSecretString: gen,
			RemovalPolicy:        awscdk.RemovalPolicy_RETAIN,
		})
		// A dynamic reference ({{resolve:secretsmanager:...}}) is resolved by
		// CloudFormation at deploy time; the template holds only the reference.
		return awscdk.SecretValue_SecretsManager(s.SecretArn(), nil).UnsafeUnwrap()
	}
	encryptionKey := seed("EncryptionKeySeed", "Gale: seed of APP_SECRET encryptionKey (hex, 32 bytes)",
		&awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
			ExcludeUppercase:   jsii.Bool(true),
			ExcludeCharacters:  jsii.String("ghijklmnopqrstuvwxyz"),
		})
	pepper := seed("EnrollmentPepperSeed", "Gale: seed of APP_SECRET enrollmentPepper",
		&awssecretsmanager.SecretStringGenerator{
			PasswordLength:     jsii.Number(64),
			ExcludePunctuation: jsii.Bool(true),
		})
	adminPassword := seed("SystemAdminPasswordSeed", "Gale: seed of APP_SECRET systemAdminPassword",
		&awssecretsmanager.SecretStringGenerator{
			PasswordLength:    jsii.Number(32),
			ExcludeCharacters: jsii.String(`"\\/@` + "`"),
		})

	template := stack.ToJsonString(map[string]any{
		"encryptionKey":       encryptionKey,
		"enrollmentPepper":    pepper,
		"systemAdminPassword": adminPassword,
	}, nil)
	return awssecretsmanager.NewSecret(stack, jsii.String("AppSecret"), &awssecretsmanager.SecretProps{
		Description:   jsii.String("Gale application secrets: jwtSecret, encryptionKey, enrollmentPepper, systemAdminPassword"),
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
			SecretStringTemplate: template,
			GenerateStringKey:    jsii.String("jwtSecret"),
			PasswordLength:       jsii.Number(64),
			ExcludePunctuation:   jsii.Bool(true),
		},
	})
}

func newFunction(stack awscdk.Stack, name, assetDir string, timeoutSec int, env map[string]*string) awslambda.Function {
	id := pascal(name)
	logs := awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	return awslambda.NewFunction(stack, jsii.String(id+"Function"), &awslambda.FunctionProps{
		Description:  jsii.String("Gale " + name),
		Runtime:      awslambda.Runtime_PROVIDED_AL2023(),
		Architecture: awslambda.Architecture_ARM_64(),
		Handler:      jsii.String("bootstrap"),
		Code:         awslambda.Code_FromAsset(jsii.String(assetDir), nil),
		MemorySize:   jsii.Number(memoryMB),
		Timeout:      awscdk.Duration_Seconds(jsii.Number(timeoutSec)),
		Environment:  &env,
		LogGroup:     logs,
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
// to the group's function.
func newHTTPAPI(stack awscdk.Stack, fns map[string]awslambda.Function) awsapigatewayv2.HttpApi {
	api := awsapigatewayv2.NewHttpApi(stack, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:     jsii.String("gale"),
		Description: jsii.String("Gale HTTP API"),
	})
	for _, g := range routes.Groups {
		integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(
			jsii.String(pascal(g.Function)+"Integration"), fns[g.Function],
			&awsapigatewayv2integrations.HttpLambdaIntegrationProps{
				PayloadFormatVersion: awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
			})
		for _, prefix := range g.Prefixes {
			for _, path := range []string{prefix, prefix + "/{proxy+}"} {
				api.AddRoutes(&awsapigatewayv2.AddRoutesOptions{
					Path:        jsii.String(path),
					Methods:     &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_ANY},
					Integration: integration,
				})
			}
		}
	}
	return api
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
