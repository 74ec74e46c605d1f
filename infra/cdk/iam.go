package main

import (
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/jsii-runtime-go"

	"github.com/gale-rmm/gale/shared/routes"
)

// IAM actions per level of access. Transactions have no action of their own:
// each item of a TransactWriteItems is authorised as its Put/Update/Delete/
// ConditionCheck, and SendMessageBatch, DeleteMessageBatch and
// ChangeMessageVisibilityBatch as their single-message actions.
var (
	tableDescribeActions = []string{"dynamodb:DescribeTable"}
	tableReadActions     = []string{"dynamodb:BatchGetItem", "dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:Query"}
	tableWriteActions    = []string{"dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}
	sendActions          = []string{"sqs:SendMessage"}
	receiveActions       = []string{"sqs:ChangeMessageVisibility", "sqs:DeleteMessage", "sqs:GetQueueAttributes", "sqs:GetQueueUrl", "sqs:ReceiveMessage"}
	inspectActions       = []string{"sqs:GetQueueAttributes"}
	secretReadActions    = []string{"secretsmanager:GetSecretValue"}
	secretPublishActions = []string{"secretsmanager:PutSecretValue"}
)

// grant gives fn's role exactly what needs lists (routes.NeedsOf), as
// statements of its own rather than CDK's grant helpers, whose action sets are
// wider (a table grant includes Scan and DescribeTable, a secret grant
// DescribeSecret).
func grant(stack awscdk.Stack, fn awslambda.Function, name string, needs routes.Needs, table awsdynamodb.Table,
	queues map[string]queuePair, secrets map[routes.Secret]awssecretsmanager.Secret) {
	allow := func(actions []string, resources []*string, cond map[string]any) {
		props := &awsiam.PolicyStatementProps{Actions: jsii.Strings(actions...), Resources: &resources}
		if cond != nil {
			props.Conditions = &cond
		}
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(props))
	}
	tableAndIndexes := []*string{table.TableArn(), jsii.String(*table.TableArn() + "/index/*")}
	switch needs.Table {
	case routes.TableDescribe:
		allow(tableDescribeActions, []*string{table.TableArn()}, nil)
	case routes.TableRead, routes.TableReadWrite:
		allow(tableReadActions, tableAndIndexes, nil)
	}
	if needs.Table == routes.TableReadWrite {
		var cond map[string]any
		if len(needs.WriteKeys) > 0 {
			var prefixes []string
			for _, p := range needs.WriteKeys {
				prefixes = append(prefixes, p+"*")
			}
			cond = map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": prefixes}}
		}
		allow(tableWriteActions, []*string{table.TableArn()}, cond)
	}

	queueArns := func(names []string) []*string {
		var out []*string
		for _, n := range names {
			out = append(out, queueByName(queues, n).QueueArn())
		}
		return out
	}
	if len(needs.Send) > 0 {
		allow(sendActions, queueArns(needs.Send), nil)
	}
	if len(needs.Receive) > 0 {
		allow(receiveActions, queueArns(needs.Receive), nil)
	}
	if len(needs.Inspect) > 0 {
		allow(inspectActions, queueArns(needs.Inspect), nil)
	}

	var readable []*string
	for _, s := range routes.AllSecrets {
		if needs.Holds(s) {
			readable = append(readable, secrets[s].SecretArn())
		}
	}
	if len(readable) > 0 {
		allow(secretReadActions, readable, nil)
	}
	// The token issuers publish their public keys.
	if needs.Holds(routes.SecretTokenSigning) && needs.Holds(routes.SecretTokenPublicKeys) {
		allow(secretPublishActions, []*string{secrets[routes.SecretTokenPublicKeys].SecretArn()}, nil)
	}
	if needs.Notify {
		grantNotify(stack, fn)
	}
	_ = name
}

// queueByName resolves a needs queue name: a routes.Queues name or routes.DLQ(name).
func queueByName(queues map[string]queuePair, name string) interface{ QueueArn() *string } {
	for q, pair := range queues {
		switch name {
		case q:
			return pair.queue
		case routes.DLQ(q):
			return pair.dlq
		}
	}
	panic(fmt.Sprintf("no queue %q", name))
}

// retention maps a number of days to the nearest CloudWatch Logs retention
// at or above it.
func retention(days float64) awslogs.RetentionDays {
	steps := []struct {
		days float64
		r    awslogs.RetentionDays
	}{
		{1, awslogs.RetentionDays_ONE_DAY}, {3, awslogs.RetentionDays_THREE_DAYS}, {5, awslogs.RetentionDays_FIVE_DAYS},
		{7, awslogs.RetentionDays_ONE_WEEK}, {14, awslogs.RetentionDays_TWO_WEEKS}, {30, awslogs.RetentionDays_ONE_MONTH},
		{60, awslogs.RetentionDays_TWO_MONTHS}, {90, awslogs.RetentionDays_THREE_MONTHS}, {180, awslogs.RetentionDays_SIX_MONTHS},
		{365, awslogs.RetentionDays_ONE_YEAR}, {731, awslogs.RetentionDays_TWO_YEARS}, {1827, awslogs.RetentionDays_FIVE_YEARS},
		{3653, awslogs.RetentionDays_TEN_YEARS},
	}
	i := slices.IndexFunc(steps, func(s struct {
		days float64
		r    awslogs.RetentionDays
	}) bool {
		return days <= s.days
	})
	if i < 0 {
		return awslogs.RetentionDays_TEN_YEARS
	}
	return steps[i].r
}
