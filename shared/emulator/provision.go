package emulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/store"
)

// Resources are what Provision made: the table and, per routes.Queues entry, the
// queue and its dead-letter queue.
type Resources struct {
	Table  string
	Queues map[string]Queue
}

// Queue is a provisioned queue and its DLQ.
type Queue struct {
	URL, ARN       string
	DLQURL, DLQARN string
}

// Provision creates the table and queues (named with prefix) idempotently, the
// way the CDK app declares them for AWS.
func Provision(ctx context.Context, cfg aws.Config, prefix string) (Resources, error) {
	res := Resources{Table: prefix, Queues: map[string]Queue{}}
	if err := store.CreateTable(ctx, dynamodb.NewFromConfig(cfg), prefix); err != nil {
		return res, err
	}
	q := sqs.NewFromConfig(cfg)
	for _, rq := range routes.Queues {
		dlqURL, dlqARN, err := createQueue(ctx, q, prefix+"-"+rq.Name+"-dlq", map[string]string{
			"MessageRetentionPeriod": strconv.Itoa(14 * 24 * 3600),
		})
		if err != nil {
			return res, err
		}
		redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": dlqARN, "maxReceiveCount": strconv.Itoa(rq.MaxReceiveCount)})
		url, arn, err := createQueue(ctx, q, prefix+"-"+rq.Name, map[string]string{
			"VisibilityTimeout": strconv.Itoa(rq.VisibilityTimeoutSeconds),
			"RedrivePolicy":     string(redrive),
		})
		if err != nil {
			return res, err
		}
		res.Queues[rq.Name] = Queue{URL: url, ARN: arn, DLQURL: dlqURL, DLQARN: dlqARN}
	}
	return res, nil
}

// Remove deletes what Provision made (tests clean up after themselves, so one
// emulator serves a whole run without growing).
func (r Resources) Remove(ctx context.Context, cfg aws.Config) error {
	var errs []error
	if _, err := dynamodb.NewFromConfig(cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(r.Table)}); err != nil {
		errs = append(errs, fmt.Errorf("delete table %s: %w", r.Table, err))
	}
	q := sqs.NewFromConfig(cfg)
	for name, qs := range r.Queues {
		for _, url := range []string{qs.URL, qs.DLQURL} {
			if _, err := q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)}); err != nil {
				errs = append(errs, fmt.Errorf("delete queue %s: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Apply points cfg at the provisioned table and at the queues the functions
// publish to, with their dead-letter queues.
func (r Resources) Apply(cfg *config.Config) {
	cfg.Table = r.Table
	cfg.EventsQueueURL, cfg.EventsDLQURL = r.Queues["events"].URL, r.Queues["events"].DLQURL
	cfg.DeliveryQueueURL, cfg.DeliveryDLQURL = r.Queues["webhook-deliveries"].URL, r.Queues["webhook-deliveries"].DLQURL
	cfg.MailQueueURL, cfg.MailDLQURL = r.Queues["mail"].URL, r.Queues["mail"].DLQURL
}

// Configure loads the configuration from the environment, provisions its table
// and queues (TABLE_NAME is the prefix) on the endpoint it names, and returns it
// pointed at them, with what was provisioned.
func Configure(ctx context.Context) (config.Config, Resources, error) {
	cfg, err := config.FromEnv(ctx)
	if err != nil {
		return cfg, Resources{}, err
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		return cfg, Resources{}, err
	}
	res, err := Provision(ctx, awsCfg, cfg.Table)
	if err != nil {
		return cfg, res, err
	}
	res.Apply(&cfg)
	return cfg, res, nil
}

func createQueue(ctx context.Context, q *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := q.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		// An existing queue with other attributes: reuse it and set ours.
		got, gerr := q.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
		if gerr != nil {
			return "", "", fmt.Errorf("emulator: create queue %s: %w", name, err)
		}
		out = &sqs.CreateQueueOutput{QueueUrl: got.QueueUrl}
		if _, err := q.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: got.QueueUrl, Attributes: attrs}); err != nil {
			return "", "", fmt.Errorf("emulator: set attributes of %s: %w", name, err)
		}
	}
	a, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("emulator: arn of %s: %w", name, err)
	}
	return aws.ToString(out.QueueUrl), a.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}
