package main

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// Alarm thresholds.
const (
	api5xxPercent    = 1    // 5xx answers per 100 requests, over 5 minutes
	apiP99LatencyMs  = 3000 // p99 of the API's latency, over 5 minutes
	metricsNamespace = "Gale"
)

// The operations on the table the alarms watch (every operation Gale makes).
var tableOperations = []awsdynamodb.Operation{
	awsdynamodb.Operation_GET_ITEM, awsdynamodb.Operation_BATCH_GET_ITEM, awsdynamodb.Operation_QUERY,
	awsdynamodb.Operation_PUT_ITEM, awsdynamodb.Operation_UPDATE_ITEM, awsdynamodb.Operation_DELETE_ITEM,
	awsdynamodb.Operation_TRANSACT_WRITE_ITEMS,
}

// newOperations adds the alarms (to one SNS topic, with the e-mail of context
// alarmEmail subscribed) and the dashboard. The metrics of Gale's own
// (namespace "Gale": requests, 4xx, 5xx, durationMs and dbCalls per function,
// batch item failures, deliveries by outcome) come from the functions' log
// lines in the Embedded Metric Format (shared/httpapi/metrics.go).
func newOperations(stack awscdk.Stack, api awsapigatewayv2.HttpApi, channel channelAPI, table awsdynamodb.Table,
	queues map[string]queuePair, fns map[string]awslambda.Function) {
	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("Gale alarms"),
		EnforceSSL:  jsii.Bool(true),
	})
	if email := contextString(stack, ctxAlarmEmail, ""); email != "" {
		topic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(email), nil))
	}
	output(stack, "AlarmTopicArn", topic.TopicArn())
	action := awscloudwatchactions.NewSnsAction(topic)
	fiveMin := awscdk.Duration_Minutes(jsii.Number(5))
	oneMin := awscdk.Duration_Minutes(jsii.Number(1))

	alarm := func(id, desc string, metric awscloudwatch.IMetric, threshold float64, op awscloudwatch.ComparisonOperator) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription:   jsii.String(desc),
			Metric:             metric,
			Threshold:          jsii.Number(threshold),
			ComparisonOperator: op,
			EvaluationPeriods:  jsii.Number(1),
			TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
	above := awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD

	// Every DLQ: a message there is a failure nobody has looked at.
	for _, q := range routes.Queues {
		alarm(pascal(q.Name)+"DlqAlarm", fmt.Sprintf("Gale: messages in the %s dead-letter queue", q.Name),
			queues[q.Name].dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: oneMin, Statistic: jsii.String("Maximum")}),
			0, above)
	}
	// Every function: errors and throttles.
	for _, name := range routes.Functions() {
		fn := fns[name]
		alarm(pascal(name)+"ErrorsAlarm", "Gale: "+name+" function errors",
			fn.MetricErrors(&awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}), 0, above)
		alarm(pascal(name)+"ThrottlesAlarm", "Gale: "+name+" function throttles",
			fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}), 0, above)
	}
	// The API: 5xx rate and p99 latency.
	alarm("Api5xxRateAlarm", fmt.Sprintf("Gale: more than %d%% of API answers are 5xx", api5xxPercent),
		awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String("IF(requests > 0, 100 * errors / requests, 0)"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{
				"errors":   api.MetricServerError(&awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}),
				"requests": api.MetricCount(&awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}),
			},
			Label:  jsii.String("5xx per 100 requests"),
			Period: fiveMin,
		}), api5xxPercent, above)
	alarm("ApiLatencyAlarm", fmt.Sprintf("Gale: API p99 latency above %d ms", apiP99LatencyMs),
		api.MetricLatency(&awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("p99")}), apiP99LatencyMs, above)
	// The agent channel: an integration or execution error means a frame
	// or a connect the function did not answer (agents fall back to polling,
	// so nothing else would show it).
	alarm("AgentChannelIntegrationErrorsAlarm", "Gale: agent channel integration errors",
		channel.stage.Metric(jsii.String("IntegrationError"), &awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}), 0, above)
	alarm("AgentChannelExecutionErrorsAlarm", "Gale: agent channel execution errors",
		channel.stage.Metric(jsii.String("ExecutionError"), &awscloudwatch.MetricOptions{Period: fiveMin, Statistic: jsii.String("Sum")}), 0, above)
	// The table: throttled requests and system errors.
	ops := &awsdynamodb.OperationsMetricOptions{Operations: &tableOperations, Period: fiveMin, Statistic: jsii.String("Sum")}
	alarm("TableThrottlesAlarm", "Gale: DynamoDB throttled requests", table.MetricThrottledRequestsForOperations(ops), 0, above)
	alarm("TableSystemErrorsAlarm", "Gale: DynamoDB system errors", table.MetricSystemErrorsForOperations(
		&awsdynamodb.SystemErrorsForOperationsMetricOptions{Operations: &tableOperations, Period: fiveMin, Statistic: jsii.String("Sum")}), 0, above)
	// The webhook worker: records it reported failed (retried, then DLQ).
	alarm("WebhookBatchFailuresAlarm", "Gale: webhook worker batch item failures",
		gale("batchItemFailures", webhookWorker, "Sum", fiveMin), 0, above)

	newDashboard(stack, queues)
}

// gale is one of Gale's own metrics (namespace "Gale") of one function.
func gale(metric, function, statistic string, period awscdk.Duration) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(metricsNamespace),
		MetricName:    jsii.String(metric),
		DimensionsMap: &map[string]*string{"function": jsii.String(function)},
		Statistic:     jsii.String(statistic),
		Period:        period,
		Label:         jsii.String(function),
	})
}

// newDashboard: per route group requests, 4xx, 5xx and p99 latency, DynamoDB
// calls per request; DLQ depths; webhook deliveries per minute by outcome.
func newDashboard(stack awscdk.Stack, queues map[string]queuePair) {
	oneMin := awscdk.Duration_Minutes(jsii.Number(1))
	perGroup := func(title, metric, statistic string) awscloudwatch.IWidget {
		var lines []awscloudwatch.IMetric
		for _, g := range routes.Groups {
			lines = append(lines, gale(metric, g.Function, statistic, oneMin))
		}
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &lines, Width: jsii.Number(12), Height: jsii.Number(6),
		})
	}
	var dlqs []awscloudwatch.IMetric
	for _, q := range routes.Queues {
		dlqs = append(dlqs, queues[q.Name].dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: oneMin, Statistic: jsii.String("Maximum"), Label: jsii.String(q.Name),
		}))
	}
	deliveries := []awscloudwatch.IMetric{awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		// One line per outcome the worker reported.
		Expression: jsii.String(`SEARCH('{` + metricsNamespace + `,function,outcome} MetricName="deliveries"', 'Sum', 60)`),
		Label:      jsii.String(""),
		Period:     oneMin,
	})}
	awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		Widgets: &[]*[]awscloudwatch.IWidget{
			{perGroup("Requests per minute by route group", "requests", "Sum"), perGroup("4xx per minute by route group", "status4xx", "Sum")},
			{perGroup("5xx per minute by route group", "status5xx", "Sum"), perGroup("p99 latency (ms) by route group", "durationMs", "p99")},
			{perGroup("DynamoDB calls per request by route group", "dbCalls", "Average"),
				awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
					Title: jsii.String("Dead-letter queue depth"), Left: &dlqs, Width: jsii.Number(12), Height: jsii.Number(6)})},
			// What DynamoDB bills: capacity units a minute, by route group
			// (shared/store, "Capacity").
			{perGroup("DynamoDB write units per minute by route group", "dbWCU", "Sum"),
				perGroup("DynamoDB read units per minute by route group", "dbRCU", "Sum")},
			{awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
				Title: jsii.String("Webhook deliveries per minute by outcome"), Left: &deliveries, Width: jsii.Number(24), Height: jsii.Number(6)})},
		},
	})
}
