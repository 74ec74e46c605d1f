package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

func TestMain(m *testing.M) {
	// jsii prints a banner when node is past its support window; it says
	// nothing about this code. The kernel starts at the first jsii call, so
	// setting this here is early enough.
	os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
	code := m.Run()
	jsii.Close()
	os.Exit(code)
}

// synth builds the stack once with cdk.json's context (feature flags as in a
// real `cdk synth`) and a dist directory of empty bootstrap files.
// The push platform applications of the synthesised stack.
const (
	testAPNSApp = "arn:aws:sns:us-east-1:123456789012:app/APNS/gale"
	testFCMApp  = "arn:aws:sns:us-east-1:123456789012:app/GCM/gale"
)

func synth(t *testing.T) (assertions.Template, cfnTemplate) {
	t.Helper()
	dist := t.TempDir()
	for _, fn := range routes.Functions() {
		if err := os.MkdirAll(filepath.Join(dist, fn), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dist, fn, "bootstrap"), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := cdkJSONContext(t)
	ctx[ctxDistDir] = dist
	ctx[ctxAdminEmail] = "admin@example.com"
	// Every optional part on, so the assertions and cfn-lint see all of it.
	ctx[ctxAlarmEmail] = "ops@example.com"
	ctx[ctxDomainName] = "api.example.com"
	ctx[ctxCertificateArn] = "arn:aws:acm:us-east-1:123456789012:certificate/00000000-0000-4000-8000-000000000000"
	ctx[ctxCorsOrigins] = "https://app.example.com"
	ctx[ctxXRay] = "true"
	ctx[ctxPushAPNSAppArn] = testAPNSApp
	ctx[ctxPushFCMAppArn] = testFCMApp
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
	stack := NewGaleStack(app, "Gale", nil)

	tmpl := assertions.Template_FromStack(stack, nil)
	raw, err := json.Marshal(tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var cfn cfnTemplate
	if err := json.Unmarshal(raw, &cfn); err != nil {
		t.Fatal(err)
	}
	// make test lints this template with cfn-lint.
	if out := os.Getenv("GALE_TEMPLATE_OUT"); out != "" {
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return tmpl, cfn
}

func cdkJSONContext(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(projectRoot(), "cdk.json"))
	if err != nil {
		t.Fatalf("read cdk.json: %v", err)
	}
	var cfg struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("parse cdk.json: %v", err)
	}
	if cfg.Context == nil {
		cfg.Context = map[string]any{}
	}
	return cfg.Context
}

// check runs a jsii assertion, which panics on mismatch, as a test error.
func check(t *testing.T, assert func()) {
	t.Helper()
	defer func() {
		t.Helper()
		if r := recover(); r != nil {
			t.Error(r)
		}
	}()
	assert()
}

// TestGaleStack synthesizes once (jsii is slow) and checks the template.
func TestGaleStack(t *testing.T) {
	tmpl, cfn := synth(t)
	fnName := cfn.functionNames(t)

	t.Run("table", func(t *testing.T) {
		check(t, func() {
			tmpl.ResourceCountIs(jsii.String("AWS::DynamoDB::Table"), jsii.Number(1))
		})
		key := func(name, typ string) map[string]any {
			return map[string]any{"AttributeName": name, "KeyType": typ}
		}
		gsi := func(name string) map[string]any {
			proj := map[string]any{"ProjectionType": "ALL"}
			if name == "GSI3" || name == "GSI4" {
				proj = map[string]any{"ProjectionType": "INCLUDE", "NonKeyAttributes": []any{"orgId", "partnerId", "siteId", "groupIds", "status", "severity", "deviceId", "expiresAt"}}
			}
			if name == "GSI5" {
				proj = map[string]any{"ProjectionType": "KEYS_ONLY"}
			}
			return map[string]any{
				"IndexName":  name,
				"KeySchema":  []any{key(name+"PK", "HASH"), key(name+"SK", "RANGE")},
				"Projection": proj,
			}
		}
		var attrs []any
		for _, a := range []string{"PK", "SK", "GSI1PK", "GSI1SK", "GSI2PK", "GSI2SK", "GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK", "GSI5PK", "GSI5SK"} {
			attrs = append(attrs, map[string]any{"AttributeName": a, "AttributeType": "S"})
		}
		check(t, func() {
			tmpl.HasResource(jsii.String("AWS::DynamoDB::Table"), map[string]any{
				"DeletionPolicy":      "Retain",
				"UpdateReplacePolicy": "Retain",
				"Properties": map[string]any{
					"KeySchema":                        []any{key("PK", "HASH"), key("SK", "RANGE")},
					"AttributeDefinitions":             assertions.Match_ArrayEquals(&attrs),
					"BillingMode":                      "PAY_PER_REQUEST",
					"GlobalSecondaryIndexes":           []any{gsi("GSI1"), gsi("GSI2"), gsi("GSI3"), gsi("GSI4"), gsi("GSI5")},
					"TimeToLiveSpecification":          map[string]any{"AttributeName": "ttl", "Enabled": true},
					"PointInTimeRecoverySpecification": map[string]any{"PointInTimeRecoveryEnabled": true},
					"DeletionProtectionEnabled":        true,
				},
			})
		})
	})

	t.Run("functions", func(t *testing.T) {
		want := routes.Functions()
		check(t, func() {
			tmpl.ResourceCountIs(jsii.String("AWS::Lambda::Function"), jsii.Number(len(want)))
		})
		check(t, func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::Function"), map[string]any{
				"Runtime":       "provided.al2023",
				"Architectures": []any{"arm64"},
				"Handler":       "bootstrap",
				"MemorySize":    256,
				// The platform's START/END/REPORT lines are INFO: dropped
				// (a cost the model in tests/cost counts as zero).
				"LoggingConfig": map[string]any{"LogFormat": "JSON", "SystemLogLevel": "WARN"},
			})
		})
		var got []string
		for id, fn := range cfn.of("AWS::Lambda::Function") {
			name := fnName[id]
			got = append(got, name)
			wantTimeout := float64(httpTimeoutSecond)
			if slices.Contains(routes.Workers, name) {
				wantTimeout = workerTimeoutSec
			}
			if timeout := fn.Properties["Timeout"]; timeout != wantTimeout {
				t.Errorf("%s: timeout %v, want %v", name, timeout, wantTimeout)
			}
			vars, _ := dig(fn.Properties, "Environment", "Variables").(map[string]any)
			for _, v := range []string{"TABLE_NAME", "EVENTS_QUEUE_URL", "EVENTS_DLQ_URL", "DELIVERY_QUEUE_URL",
				"DELIVERY_DLQ_URL", "APP_ENV", "APP_URL", "GALE_FUNCTION", "GALE_XRAY"} {
				if _, ok := vars[v]; !ok {
					t.Errorf("%s: env %s missing", name, v)
				}
			}
			if vars["GALE_FUNCTION"] != name {
				t.Errorf("%s: GALE_FUNCTION = %v", name, vars["GALE_FUNCTION"])
			}
			if dig(fn.Properties, "TracingConfig", "Mode") != "Active" {
				t.Errorf("%s: tracing %v with xray on", name, fn.Properties["TracingConfig"])
			}
			// Test and local-run settings only: a deployed worker never trusts an
			// extra CA or exempts an address range.
			for _, v := range []string{"OUTBOUND_ALLOW_CIDRS", "OUTBOUND_CA_FILE", "WEBHOOK_ALLOW_CIDRS", "WEBHOOK_CA_FILE",
				"APP_SECRET_ARN", "JWT_SECRET", "TOKEN_SIGNING_KEY"} {
				if _, ok := vars[v]; ok {
					t.Errorf("%s: env %s is set", name, v)
				}
			}
			if vars["APP_ENV"] != "production" || vars["APP_URL"] != "https://app.example.com" {
				t.Errorf("%s: APP_ENV=%v APP_URL=%v", name, vars["APP_ENV"], vars["APP_URL"])
			}
			// A secret's ARN is in the environment exactly when the function reads it.
			needs := routes.NeedsOf(name)
			for sec, v := range secretEnv {
				got := constructID(ref(vars[v]))
				want := map[bool]string{true: pascal(string(sec)) + "Secret"}[needs.Holds(sec)]
				if got != want {
					t.Errorf("%s: %s refers to %q, want %q", name, v, got, want)
				}
			}
			if cors := vars["CORS_ALLOWED_ORIGINS"]; (cors == "https://app.example.com") == slices.Contains(routes.Workers, name) {
				t.Errorf("%s: CORS_ALLOWED_ORIGINS = %v", name, cors)
			}
			for v, queue := range map[string]string{
				"EVENTS_QUEUE_URL": "EventsQueue", "EVENTS_DLQ_URL": "EventsDlq",
				"DELIVERY_QUEUE_URL": "WebhookDeliveriesQueue", "DELIVERY_DLQ_URL": "WebhookDeliveriesDlq",
			} {
				if got := constructID(ref(vars[v])); got != queue {
					t.Errorf("%s: %s refers to %q, want %s", name, v, got, queue)
				}
			}
			// Only the sweeper (its bootstrap job) knows the administrator.
			if got, want := vars["SYSTEM_ADMIN_EMAIL"], map[bool]any{true: "admin@example.com"}[name == sweeper]; got != want {
				t.Errorf("%s: SYSTEM_ADMIN_EMAIL = %v, want %v", name, got, want)
			}
			// Only the mailer (it delivers push) knows the push platform applications.
			for v, arn := range map[string]string{"PUSH_APNS_APP_ARN": testAPNSApp, "PUSH_FCM_APP_ARN": testFCMApp} {
				if got, want := vars[v], map[bool]any{true: arn}[routes.NeedsOf(name).Notify]; got != want {
					t.Errorf("%s: %s = %v, want %v", name, v, got, want)
				}
			}
			if _, ok := vars["SYSTEM_ADMIN_PASSWORD"]; ok {
				t.Errorf("%s: the administrator's password is in the environment, not the secret", name)
			}
			logs := ref(dig(fn.Properties, "LoggingConfig", "LogGroup"))
			if days := dig(cfn.Resources[logs].Properties, "RetentionInDays"); days != 30.0 {
				t.Errorf("%s: log retention %v days, want 30", name, days)
			}
		}
		sort.Strings(got)
		if !slices.Equal(got, want) {
			t.Errorf("functions %v, want %v", got, want)
		}
	})

	t.Run("queues", func(t *testing.T) {
		check(t, func() {
			tmpl.ResourceCountIs(jsii.String("AWS::SQS::Queue"), jsii.Number(2*len(routes.Queues)))
		})
		for _, q := range routes.Queues {
			queue := cfn.only(t, "AWS::SQS::Queue", pascal(q.Name)+"Queue")
			dlq := cfn.only(t, "AWS::SQS::Queue", pascal(q.Name)+"Dlq")
			props := cfn.Resources[queue].Properties
			if got := dig(props, "VisibilityTimeout"); got != float64(q.VisibilityTimeoutSeconds) {
				t.Errorf("%s: visibility timeout %v", q.Name, got)
			}
			if got := dig(props, "RedrivePolicy", "maxReceiveCount"); got != float64(q.MaxReceiveCount) {
				t.Errorf("%s: maxReceiveCount %v, want %d", q.Name, got, q.MaxReceiveCount)
			}
			if got := getAtt(dig(props, "RedrivePolicy", "deadLetterTargetArn")); got != dlq {
				t.Errorf("%s: dead-letter target %q, want %q", q.Name, got, dlq)
			}
			for _, id := range []string{queue, dlq} {
				if dig(cfn.Resources[id].Properties, "SqsManagedSseEnabled") != true {
					t.Errorf("%s: not encrypted", id)
				}
			}
			dprops := cfn.Resources[dlq].Properties
			if got := dig(dprops, "MessageRetentionPeriod"); got != 14*24*3600.0 {
				t.Errorf("%s dlq: retention %v s", q.Name, got)
			}
			if dig(dprops, "RedrivePolicy") != nil {
				t.Errorf("%s dlq has its own redrive policy", q.Name)
			}
		}
	})

	t.Run("event source mappings", func(t *testing.T) {
		check(t, func() { // one per queue: every queue has its consumer
			tmpl.ResourceCountIs(jsii.String("AWS::Lambda::EventSourceMapping"), jsii.Number(len(routes.Queues)))
		})
		check(t, func() {
			tmpl.AllResourcesProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
				"FunctionResponseTypes": []any{"ReportBatchItemFailures"},
			})
		})
		for _, m := range cfn.of("AWS::Lambda::EventSourceMapping") {
			queue := getAtt(m.Properties["EventSourceArn"])
			i := slices.IndexFunc(routes.Queues, func(q routes.Queue) bool { return pascal(q.Name)+"Queue" == constructID(queue) })
			if i < 0 {
				t.Errorf("mapping from %q, not a routes queue", queue)
				continue
			}
			q := routes.Queues[i]
			if got := fnName[ref(m.Properties["FunctionName"])]; got != q.Consumer {
				t.Errorf("%s: mapped to %q, want %q", q.Name, got, q.Consumer)
			}
			if got := m.Properties["BatchSize"]; got != float64(q.BatchSize) {
				t.Errorf("%s: batch size %v, want %d", q.Name, got, q.BatchSize)
			}
		}
	})

	t.Run("schedules", func(t *testing.T) {
		check(t, func() {
			tmpl.ResourceCountIs(jsii.String("AWS::Events::Rule"), jsii.Number(len(routes.Schedules)))
		})
		for _, s := range routes.Schedules {
			check(t, func() {
				tmpl.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
					"ScheduleExpression": rateExpression(s.RateMinutes),
					"Targets": []any{map[string]any{
						"Arn":   map[string]any{"Fn::GetAtt": []any{cfn.function(t, fnName, sweeper), "Arn"}},
						"Input": fmt.Sprintf(`{"job":%q}`, s.Job),
					}},
				})
			})
		}
		if got := rateExpression(60); got != "rate(60 minutes)" {
			t.Errorf("rateExpression(60) = %q", got)
		}
	})

	t.Run("http routes", func(t *testing.T) {
		want := map[string]string{}
		for _, g := range routes.Groups {
			for _, p := range g.Prefixes {
				want["ANY "+p] = g.Function
				want["ANY "+p+"/{proxy+}"] = g.Function
			}
			for _, p := range g.Exact {
				want["ANY "+p] = g.Function
			}
		}
		// The agent channel's three routes are its own API's (checkChannel).
		check(t, func() {
			tmpl.ResourceCountIs(jsii.String("AWS::ApiGatewayV2::Route"), jsii.Number(len(want)+3))
		})
		channelAPI := cfn.only(t, "AWS::ApiGatewayV2::Api", "AgentChannelApi")
		for id, in := range cfn.of("AWS::ApiGatewayV2::Integration") {
			if ref(in.Properties["ApiId"]) == channelAPI {
				continue
			}
			if in.Properties["IntegrationType"] != "AWS_PROXY" || in.Properties["PayloadFormatVersion"] != "2.0" {
				t.Errorf("integration %s: %v", id, in.Properties)
			}
		}
		got := map[string]string{}
		for _, r := range cfn.of("AWS::ApiGatewayV2::Route") {
			if ref(r.Properties["ApiId"]) == channelAPI {
				continue
			}
			key, _ := r.Properties["RouteKey"].(string)
			// Target: {"Fn::Join": ["", ["integrations/", {"Ref": <integration>}]]}
			parts, _ := dig(r.Properties, "Target", "Fn::Join").([]any)
			if len(parts) != 2 {
				t.Errorf("%s: target %v", key, r.Properties["Target"])
				continue
			}
			elems, _ := parts[1].([]any)
			integration := cfn.Resources[ref(elems[len(elems)-1])]
			got[key] = fnName[getAtt(dig(integration.Properties, "IntegrationUri"))]
		}
		for key, fn := range want {
			if got[key] != fn {
				t.Errorf("route %q -> %q, want %q", key, got[key], fn)
			}
		}
		for key := range got {
			if _, ok := want[key]; !ok {
				t.Errorf("unexpected route %q", key)
			}
		}
	})

	t.Run("least privilege", func(t *testing.T) { leastPrivilege(t, cfn, fnName) })
	t.Run("secrets", func(t *testing.T) { checkSecrets(t, cfn) })
	t.Run("alarms", func(t *testing.T) { checkAlarms(t, cfn, fnName) })
	t.Run("dashboard", func(t *testing.T) { checkDashboard(t, cfn) })
	t.Run("stage and domain", func(t *testing.T) { checkStage(t, tmpl, cfn) })

	t.Run("outputs", func(t *testing.T) {
		want := []string{"ApiUrl", "TableName", "AlarmTopicArn", "DomainTarget"}
		for _, sec := range routes.AllSecrets {
			want = append(want, pascal(string(sec))+"SecretArn")
		}
		for _, q := range routes.Queues {
			want = append(want, pascal(q.Name)+"QueueUrl", pascal(q.Name)+"DlqUrl")
		}
		for _, o := range want {
			check(t, func() { tmpl.HasOutput(jsii.String(o), map[string]any{}) })
		}
	})

	t.Run("agent channel", func(t *testing.T) { checkChannel(t, tmpl, cfn, fnName) })
}

func TestCheckRoutes(t *testing.T) {
	if err := checkRoutes(); err != nil {
		t.Fatal(err)
	}
}

func TestCheckAssets(t *testing.T) {
	dist := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dist, "health"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dist, "health", "bootstrap"), nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := checkAssets(dist, []string{"health"}); err != nil {
		t.Errorf("present: %v", err)
	}
	err := checkAssets(dist, []string{"health", "sweeper"})
	if err == nil || !strings.Contains(err.Error(), "sweeper") || !strings.Contains(err.Error(), "make build") {
		t.Errorf("missing sweeper: %v", err)
	}
}

func TestPascal(t *testing.T) {
	for in, want := range map[string]string{
		"webhook-deliveries":    "WebhookDeliveries",
		"events":                "Events",
		"enrollment-key-expiry": "EnrollmentKeyExpiry",
	} {
		if got := pascal(in); got != want {
			t.Errorf("pascal(%q) = %q, want %q", in, got, want)
		}
	}
}

// cfnTemplate is the synthesized template, for checks that walk references.
type cfnTemplate struct {
	Resources map[string]cfnResource `json:"Resources"`
}

type cfnResource struct {
	Type           string         `json:"Type"`
	Properties     map[string]any `json:"Properties"`
	DeletionPolicy string         `json:"DeletionPolicy"`
}

func (c cfnTemplate) of(typ string) map[string]cfnResource {
	out := map[string]cfnResource{}
	for id, r := range c.Resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

// only returns the logical id of the one resource of typ made by construct id.
func (c cfnTemplate) only(t *testing.T, typ, construct string) string {
	t.Helper()
	var ids []string
	for id := range c.of(typ) {
		if constructID(id) == construct {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("%s %s: found %v", typ, construct, ids)
	}
	return ids[0]
}

// functionNames maps each function's logical id to its routes name, read
// from the description "Gale <name>".
func (c cfnTemplate) functionNames(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, fn := range c.of("AWS::Lambda::Function") {
		desc, _ := fn.Properties["Description"].(string)
		name, ok := strings.CutPrefix(desc, "Gale ")
		if !ok {
			t.Fatalf("function %s: description %q", id, desc)
		}
		out[id] = name
	}
	return out
}

func (c cfnTemplate) function(t *testing.T, names map[string]string, name string) string {
	t.Helper()
	for id, n := range names {
		if n == name {
			return id
		}
	}
	t.Fatalf("no function %q", name)
	return ""
}

type statement struct {
	Actions   []string
	Resources []any
	Condition map[string]any
}

// statements returns the Allow statements of the policies on fnID's role.
func (c cfnTemplate) statements(t *testing.T, fnID string) []statement {
	t.Helper()
	role := getAtt(c.Resources[fnID].Properties["Role"])
	var out []statement
	for _, p := range c.of("AWS::IAM::Policy") {
		roles, _ := p.Properties["Roles"].([]any)
		if !slices.ContainsFunc(roles, func(r any) bool { return ref(r) == role }) {
			continue
		}
		stmts, _ := dig(p.Properties, "PolicyDocument", "Statement").([]any)
		for _, s := range stmts {
			m, _ := s.(map[string]any)
			if m["Effect"] != "Allow" {
				continue
			}
			cond, _ := m["Condition"].(map[string]any)
			out = append(out, statement{Actions: strs(m["Action"]), Resources: list(m["Resource"]), Condition: cond})
		}
	}
	return out
}

// allows reports whether any statement allows action on any resource.
func allows(stmts []statement, action string) bool {
	return slices.ContainsFunc(stmts, func(s statement) bool { return slices.Contains(s.Actions, action) })
}

// granted lists, sorted, the construct ids of the resources on which the
// statements allow action ("*" stands for itself).
func granted(stmts []statement, action string) []string {
	var out []string
	for _, s := range stmts {
		if !slices.Contains(s.Actions, action) {
			continue
		}
		for _, r := range s.Resources {
			if r == "*" {
				out = append(out, "*")
				continue
			}
			id := getAtt(r)
			if id == "" {
				id = ref(r)
			}
			if id == "" { // an ARN built with Fn::Join, e.g. a table index or SES identity
				continue
			}
			if !slices.Contains(out, constructID(id)) {
				out = append(out, constructID(id))
			}
		}
	}
	sort.Strings(out)
	return out
}

// constructID strips the 8-character hash CDK appends to a logical id.
func constructID(logicalID string) string {
	if len(logicalID) <= 8 {
		return logicalID
	}
	return logicalID[:len(logicalID)-8]
}

func dig(v any, path ...string) any {
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func ref(v any) string {
	s, _ := dig(v, "Ref").(string)
	return s
}

func getAtt(v any) string {
	parts, _ := dig(v, "Fn::GetAtt").([]any)
	if len(parts) == 0 {
		return ""
	}
	s, _ := parts[0].(string)
	return s
}

func list(v any) []any {
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

func strs(v any) []string {
	var out []string
	for _, x := range list(v) {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
