// Package testenv gives tests real AWS APIs: moto_server (or the emulator named by
// AWS_ENDPOINT_URL), with a fresh table and queues per call so test packages and
// tests run in parallel without seeing each other's rows. No AWS service is faked.
package testenv

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/mailergroup"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/emulator"
)

// Main runs a test package, starting moto_server first when AWS_ENDPOINT_URL is
// not set and stopping it (by PID) afterwards. Use it from TestMain.
func Main(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	moto, err := emulator.Ensure(ctx)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		return 1
	}
	defer moto.Stop()
	return m.Run()
}

// Faults reports the fault pass (make test-faults): the emulator loses the
// answers of some applied writes and throttles some requests, so what a lost
// answer costs by design (a recovery read, a refused connect) is allowed.
func Faults() bool { return os.Getenv("GALE_FAULT_MODE") != "" }

// Start is the fixed instant fake clocks begin at.
var Start = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// Env is one isolated set of resources.
type Env struct {
	*app.Deps
	Clock     *clock.Fake
	Resources emulator.Resources
	mail      *mailer
}

// New provisions a table and queues with a unique prefix and returns deps wired
// to them with a fake clock. Extra settings (e.g. ENABLE_REGISTRATION) come from vars.
func New(t testing.TB, vars ...string) *Env {
	t.Helper()
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	if endpoint == "" {
		t.Fatal("testenv: AWS_ENDPOINT_URL is not set; call testenv.Main from TestMain or run `make test`")
	}
	env := map[string]string{
		"APP_ENV":          "test",
		"AWS_ENDPOINT_URL": endpoint,
		"AWS_REGION":       "us-east-1",
		"LOG_LEVEL":        "error",
		// One emulator serves every test of the machine: a generous budget keeps
		// a loaded machine from failing requests (tests of the budget set their own).
		"REQUEST_TIMEOUT_MS": "60000",
	}
	// The fault pass of `make test` (an emulator losing answers and throttling)
	// gives the SDK more attempts, so that no call runs out of them by chance,
	// and a shorter wait between them (its throttling is random, not load).
	for _, k := range []string{"AWS_MAX_ATTEMPTS", "AWS_MAX_BACKOFF_MS"} {
		if v := os.Getenv(k); v != "" {
			env[k] = v
		}
	}
	for i := 0; i+1 < len(vars); i += 2 {
		env[vars[i]] = vars[i+1]
	}
	ctx := context.Background()
	cfg, err := config.Load(ctx, func(k string) string { return env[k] })
	if err != nil {
		t.Fatalf("testenv: config: %v", err)
	}
	prefix := "t" + randHex(6)
	awsCfg, err := cfg.AWS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	res, err := emulator.Provision(ctx, awsCfg, prefix)
	t.Cleanup(func() {
		if err := res.Remove(context.Background(), awsCfg); err != nil {
			t.Logf("testenv: cleanup: %v", err)
		}
	})
	if err != nil {
		t.Fatalf("testenv: provision: %v", err)
	}
	res.Apply(&cfg)
	clk := clock.NewFake(Start)
	d, err := app.NewDeps(ctx, cfg, clk)
	if err != nil {
		t.Fatalf("testenv: deps: %v", err)
	}
	d.Strict = true
	n := mailergroup.Notifier(d)
	if err := n.VerifySender(ctx); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	m := registerMailer(t, d.SQS, cfg.MailQueueURL, mailergroup.Worker(d, n))
	return &Env{Deps: d, Clock: clk, Resources: res, mail: m}
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
