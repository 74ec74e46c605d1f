package emulator_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/emulator"
)

func TestStartProvisionStop(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m, err := emulator.Start(ctx)
	if err != nil {
		t.Skipf("moto_server unavailable: %v", err)
	}
	defer m.Stop()
	if !m.Atomic {
		t.Error("moto_server runs without the atomic launcher: conditional-write races are not meaningful")
	}
	cfg, err := config.Load(ctx, func(k string) string {
		return map[string]string{"AWS_ENDPOINT_URL": m.URL, "AWS_REGION": "us-east-1", "APP_ENV": "test"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 { // idempotent
		res, err := emulator.Provision(ctx, awsCfg, "tprovision")
		if err != nil {
			t.Fatalf("provision: %v", err)
		}
		for _, name := range []string{"events", "webhook-deliveries"} {
			q := res.Queues[name]
			if q.URL == "" || q.ARN == "" || q.DLQURL == "" || q.DLQARN == "" {
				t.Errorf("queue %s = %+v, want queue and DLQ", name, q)
			}
		}
		var c config.Config
		res.Apply(&c)
		ev, dl := res.Queues["events"], res.Queues["webhook-deliveries"]
		if c.Table != "tprovision" || c.EventsQueueURL != ev.URL || c.EventsDLQURL != ev.DLQURL ||
			c.DeliveryQueueURL != dl.URL || c.DeliveryDLQURL != dl.DLQURL {
			t.Errorf("Apply: %+v, want the table and queues of %+v", c, res)
		}
	}
	t.Run("transaction retried by its token applies once", func(t *testing.T) {
		db := dynamodb.NewFromConfig(awsCfg)
		tx := func(token, pk string) error {
			_, err := db.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
				ClientRequestToken: aws.String(token),
				TransactItems: []types.TransactWriteItem{{Put: &types.Put{
					TableName:           aws.String("tprovision"),
					Item:                map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: "x"}},
					ConditionExpression: aws.String("attribute_not_exists(PK)"),
				}}},
			})
			return err
		}
		if err := tx("token-1", "ONCE"); err != nil {
			t.Fatalf("first call: %v", err)
		}
		if err := tx("token-1", "ONCE"); err != nil {
			t.Fatalf("a retry with the same token failed (DynamoDB answers success): %v", err)
		}
		var tce *types.TransactionCanceledException
		if err := tx("token-2", "ONCE"); !errors.As(err, &tce) {
			t.Fatalf("a new token re-applying the write: %v, want the condition to fail", err)
		}
		if err := tx("token-1", "OTHER"); err == nil {
			t.Fatal("the token reused for another request was accepted")
		}
	})
	t.Run("a retried attempt gets the first answer", func(t *testing.T) {
		put := func(invocation string) int {
			body := `{"TableName":"tprovision","Item":{"PK":{"S":"RETRY"},"SK":{"S":"x"}},"ConditionExpression":"attribute_not_exists(PK)"}`
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, m.URL+"/", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/x-amz-json-1.0")
			req.Header.Set("X-Amz-Target", "DynamoDB_20120810.PutItem")
			req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=testing/20261124/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=0")
			req.Header.Set("amz-sdk-invocation-id", invocation)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			return res.StatusCode
		}
		if got := put("invocation-1"); got != http.StatusOK {
			t.Fatalf("first attempt: %d", got)
		}
		if got := put("invocation-1"); got != http.StatusOK {
			t.Fatalf("a retry of the same operation answered %d, want the first answer (200)", got)
		}
		if got := put("invocation-2"); got != http.StatusBadRequest {
			t.Fatalf("another operation answered %d, want its condition to fail (400)", got)
		}
	})
	pid := m.PID()
	m.Stop()
	if err := syscall.Kill(pid, 0); err == nil {
		t.Errorf("moto_server (pid %d) still runs after Stop", pid)
	}
}

func TestEnsureKeepsANamedEmulator(t *testing.T) {
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	m, err := emulator.Ensure(t.Context())
	if m != nil || err != nil {
		t.Fatalf("Ensure = %v, %v; want nothing started", m, err)
	}
	m.Stop() // a nil Moto stops nothing
}
