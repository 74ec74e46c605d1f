package emulator_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/emulator"
)

// start starts a moto_server of the test's own (the test is skipped when none
// can start; it stops when the test ends) and returns it with the AWS
// configuration of an app in environment appEnv pointed at it.
func start(ctx context.Context, t *testing.T, appEnv string) (*emulator.Moto, aws.Config) {
	t.Helper()
	m, err := emulator.Start(ctx)
	if err != nil {
		t.Skipf("moto_server unavailable: %v", err)
	}
	t.Cleanup(m.Stop)
	cfg, err := config.Load(ctx, func(k string) string {
		return map[string]string{"AWS_ENDPOINT_URL": m.URL, "AWS_REGION": "us-east-1", "APP_ENV": appEnv}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m, awsCfg
}

// querySKs runs in page after page (at most pages calls) and joins the sort
// keys it answers with commas.
func querySKs(ctx context.Context, t *testing.T, db *dynamodb.Client, in *dynamodb.QueryInput, pages int) string {
	t.Helper()
	var got []string
	for range pages {
		out, err := db.Query(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			got = append(got, it["SK"].(*types.AttributeValueMemberS).Value)
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	return strings.Join(got, ",")
}
