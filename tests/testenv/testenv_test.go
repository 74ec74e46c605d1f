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
