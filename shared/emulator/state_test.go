package emulator_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// saving starts an emulator that keeps its state in the file state, with the
// AWS configuration pointed at it.
func saving(ctx context.Context, t *testing.T, state string) (*emulator.Moto, aws.Config, error) {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv(emulator.PoolEnv, "")
	m, err := emulator.EnsureSaving(ctx, state)
	if err != nil {
		return nil, aws.Config{}, err
	}
	t.Cleanup(m.Stop)
	cfg, err := config.Load(ctx, func(k string) string {
		return map[string]string{"AWS_ENDPOINT_URL": m.URL, "AWS_REGION": "us-east-1", "APP_ENV": "development"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return m, awsCfg, nil
}

func putRow(ctx context.Context, t *testing.T, db *dynamodb.Client, sk string) {
	t.Helper()
	_, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("tstate"), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "P"}, "SK": &types.AttributeValueMemberS{Value: sk},
	}})
	if err != nil {
		t.Fatal(err)
	}
}

func hasRow(ctx context.Context, t *testing.T, db *dynamodb.Client, sk string) bool {
	t.Helper()
	out, err := db.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("tstate"), ConsistentRead: aws.Bool(true), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "P"}, "SK": &types.AttributeValueMemberS{Value: sk},
	}})
	if err != nil {
		t.Fatalf("get %s: %v", sk, err)
	}
	return out.Item != nil
}

// A saving emulator writes its state when stopped (SIGTERM, as Shutdown
// sends it) and, while written to, every GALE_MOTO_SAVE_EVERY seconds: a row
// written before a kill that allows no save is there after a restart once a
// periodic save has run.
func TestSavedStateSurvivesStopAndKill(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	state := filepath.Join(t.TempDir(), "emulator.state")
	t.Setenv("GALE_MOTO_SAVE_EVERY", "0.1")
	m, awsCfg, err := saving(ctx, t, state)
	if err != nil {
		t.Skipf("moto_server unavailable: %v", err)
	}
	if _, err := emulator.Provision(ctx, awsCfg, "tstate"); err != nil {
		t.Fatal(err)
	}
	putRow(ctx, t, dynamodb.NewFromConfig(awsCfg), "stopped")
	if err := m.Shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	m, awsCfg, err = saving(ctx, t, state)
	if err != nil {
		t.Fatal(err)
	}
	db := dynamodb.NewFromConfig(awsCfg)
	if !hasRow(ctx, t, db, "stopped") {
		t.Fatal("the row written before Shutdown is gone after the restart")
	}
	saved, _ := os.ReadFile(state)
	putRow(ctx, t, db, "killed")
	for { // until the periodic save has written the new row
		if now, _ := os.ReadFile(state); !bytes.Equal(now, saved) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("no periodic save after a write")
		}
		time.Sleep(20 * time.Millisecond)
	}
	_ = syscall.Kill(-m.PID(), syscall.SIGKILL)
	m.Stop() // reaps it

	_, awsCfg, err = saving(ctx, t, state)
	if err != nil {
		t.Fatal(err)
	}
	if db := dynamodb.NewFromConfig(awsCfg); !hasRow(ctx, t, db, "killed") || !hasRow(ctx, t, db, "stopped") {
		t.Error("rows saved periodically are gone after a kill and a restart")
	}
}

// A state the launcher cannot load is refused, with the reason in its log,
// and left as it was: an emulator that came up empty would save over it.
func TestUnreadableStateIsRefusedAndKept(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	state := filepath.Join(t.TempDir(), "emulator.state")
	damaged := []byte("not a saved state")
	if err := os.WriteFile(state, damaged, 0o600); err != nil {
		t.Fatal(err)
	}
	_, _, err := saving(ctx, t, state)
	if err == nil {
		t.Fatal("the emulator started on a damaged state")
	}
	if !strings.Contains(err.Error(), state+".log") {
		t.Errorf("error %q does not point at the emulator's log", err)
	}
	if log, _ := os.ReadFile(state + ".log"); !bytes.Contains(log, []byte("make reset")) {
		t.Errorf("log does not say how to start clean:\n%s", log)
	}
	if now, _ := os.ReadFile(state); !bytes.Equal(now, damaged) {
		t.Error("the damaged state was overwritten")
	}
}

// Tests never load or overwrite the local runtime's data: Start ignores a
// GALE_MOTO_STATE left in the environment.
func TestStartIgnoresASavedState(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	state := filepath.Join(t.TempDir(), "emulator.state")
	m, awsCfg, err := saving(ctx, t, state)
	if err != nil {
		t.Skipf("moto_server unavailable: %v", err)
	}
	if _, err := emulator.Provision(ctx, awsCfg, "tstate"); err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(state)
	if err != nil {
		t.Fatal(err)
	}

	t.Setenv("GALE_MOTO_STATE", state)
	fresh, freshCfg := start(ctx, t, "test")
	if fresh.State != "" {
		t.Errorf("Start's emulator keeps state in %q", fresh.State)
	}
	tables, err := dynamodb.NewFromConfig(freshCfg).ListTables(ctx, &dynamodb.ListTablesInput{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tables.TableNames) != 0 {
		t.Errorf("Start's emulator loaded the saved tables %v", tables.TableNames)
	}
	if _, err := emulator.Provision(ctx, freshCfg, "tstate"); err != nil {
		t.Fatal(err)
	}
	putRow(ctx, t, dynamodb.NewFromConfig(freshCfg), "fresh")
	fresh.Stop()
	if after, _ := os.ReadFile(state); !bytes.Equal(after, before) {
		t.Error("Start's emulator wrote the saved state")
	}
}
