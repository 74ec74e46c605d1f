package testenv_test

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// A test's table and queues are gone once it ends.
func TestEnvRemovesWhatItMade(t *testing.T) {
	var env *testenv.Env
	t.Run("user", func(t *testing.T) { env = testenv.New(t) })
	ctx := context.Background()
	_, err := dynamodb.NewFromConfig(env.AWS).DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(env.Resources.Table)})
	var missing *dbtypes.ResourceNotFoundException
	if !errors.As(err, &missing) {
		t.Fatalf("table %s still there: %v", env.Resources.Table, err)
	}
	q := sqs.NewFromConfig(env.AWS)
	for name, qs := range env.Resources.Queues {
		if _, err := q.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(qs.URL)}); err == nil {
			t.Fatalf("queue %s still there", name)
		}
	}
}

// A receive whose answer was lost took the message and hides it for its
// hold: Receive waits the hold out and answers the message instead of an
// empty queue.
func TestReceiveOutlastsALostReceive(t *testing.T) {
	env := testenv.New(t)
	ctx := context.Background()
	url := env.Resources.Queues["events"].URL
	if _, err := env.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	// The lost receive: it took the message for a second, as Receive does.
	lost, err := env.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url), MaxNumberOfMessages: 10, VisibilityTimeout: 1})
	if err != nil || len(lost.Messages) != 1 {
		t.Fatalf("first receive: %v %v", lost, err)
	}
	msgs := testenv.Receive(t, env.SQS, url, 0)
	if len(msgs) != 1 || aws.ToString(msgs[0].Body) != "kept" {
		t.Fatalf("after a lost receive: %+v, want the message", msgs)
	}
	if _, err := env.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: msgs[0].ReceiptHandle}); err != nil {
		t.Fatal(err)
	}
	if msgs := testenv.Receive(t, env.SQS, url, 0); len(msgs) != 0 {
		t.Fatalf("drained queue answered %+v", msgs)
	}
}
