package main

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/emulator"
)

// localRun is one start of the local runtime's data path, as run() does it:
// a saving emulator on the state file, the table and queues provisioned,
// the demo data seeded.
func localRun(ctx context.Context, t *testing.T, state string) (*emulator.Moto, *app.Deps, emulator.Resources) {
	t.Helper()
	t.Setenv("AWS_ENDPOINT_URL", "") // an emulator of this test's own, not the package's
	t.Setenv(emulator.PoolEnv, "")
	m, err := emulator.EnsureSaving(ctx, state)
	if err != nil {
		t.Skipf("moto_server unavailable: %v", err)
	}
	t.Cleanup(m.Stop)
	cfg, res, err := emulator.Configure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	d, err := app.NewDeps(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := groups.Seed(ctx, d); err != nil {
		t.Fatal(err)
	}
	return m, d, res
}

// Issue 35 item 2: every `make run` restart wiped users, keys and TOTP
// secrets. A user created in one run, and a message left on a queue, are
// there after the emulator is stopped the way run() stops it and started
// again on the same state; seeding again changes no id.
func TestLocalDataSurvivesARestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	t.Setenv("APP_ENV", "development")
	t.Setenv("TABLE_NAME", "gale")
	t.Setenv("SYSTEM_ADMIN_EMAIL", "admin@gale.local")
	t.Setenv("SYSTEM_ADMIN_PASSWORD", "Gale-Demo-Admin-2026!")
	state := filepath.Join(t.TempDir(), stateFile)

	m, d, res := localRun(ctx, t, state)
	admin, err := d.Users.ByEmail(ctx, "admin@gale.local")
	if err != nil {
		t.Fatal(err)
	}
	partner, err := d.Users.ByEmail(ctx, "partner-admin@gale.local")
	if err != nil {
		t.Fatal(err)
	}
	mail := res.Queues["mail"].URL
	if _, err := d.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(mail), MessageBody: aws.String("kept")}); err != nil {
		t.Fatal(err)
	}
	if err := m.Shutdown(); err != nil {
		t.Fatalf("shutdown: %v", err)
	}

	_, d, res = localRun(ctx, t, state)
	for _, want := range [][2]string{{"admin@gale.local", admin.ID}, {"partner-admin@gale.local", partner.ID}} {
		got, err := d.Users.ByEmail(ctx, want[0])
		if err != nil {
			t.Fatalf("%s after the restart: %v", want[0], err)
		}
		if got.ID != want[1] {
			t.Errorf("%s has id %s after the restart, was %s", want[0], got.ID, want[1])
		}
	}
	out, err := d.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(res.Queues["mail"].URL), WaitTimeSeconds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "kept" {
		t.Errorf("mail queue after the restart: %+v, want the message sent before it", out.Messages)
	}
}

// The local settings file: read once at start, the environment winning; a
// missing file is written from the template (which names the allow-list
// settings); the allow-list reaches the configuration.
func TestLocalSettingsFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, settingsFile)
	t.Setenv("WEBHOOK_ALLOW_CIDRS", "")
	os.Unsetenv("WEBHOOK_ALLOW_CIDRS")
	t.Setenv("WEBHOOK_CA_FILE", "/from/the/environment.pem")

	set, err := loadSettings(path)
	if err != nil || len(set) != 0 {
		t.Fatalf("first start: %v, %v", set, err)
	}
	template, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("template not written: %v", err)
	}
	for _, want := range []string{"WEBHOOK_ALLOW_CIDRS", "WEBHOOK_CA_FILE", "make reset"} {
		if !strings.Contains(string(template), want) {
			t.Errorf("template does not mention %s", want)
		}
	}
	if _, err := loadSettings(path); err != nil {
		t.Fatalf("the template does not load: %v", err)
	}
	if _, ok := os.LookupEnv("WEBHOOK_ALLOW_CIDRS"); ok {
		t.Error("the template's commented example was set")
	}

	body := "# local receiver\nexport WEBHOOK_ALLOW_CIDRS=\"127.0.0.1/32,10.0.0.0/8\"\nWEBHOOK_CA_FILE=/from/the/file.pem\n\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	set, err = loadSettings(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(set, []string{"WEBHOOK_ALLOW_CIDRS"}) {
		t.Errorf("set %v, want only WEBHOOK_ALLOW_CIDRS (the environment names the CA file)", set)
	}
	cfg, err := config.FromEnv(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(cfg.OutboundAllowCIDRs, []string{"127.0.0.1/32", "10.0.0.0/8"}) || cfg.OutboundCAFile != "/from/the/environment.pem" {
		t.Errorf("config: allow %v, CA %q", cfg.OutboundAllowCIDRs, cfg.OutboundCAFile)
	}

	if err := os.WriteFile(path, []byte("WEBHOOK_ALLOW_CIDRS\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := loadSettings(path); err == nil || !strings.Contains(err.Error(), "gale.env:1") {
		t.Errorf("a line without = : %v, want an error naming gale.env:1", err)
	}
}

// Issue 35 item 6: Ctrl-C on `make run` ended with "make: *** Error 1". The
// runtime answers SIGINT by stopping cleanly (run returns nil: exit status 0)
// after the emulator saved the data in the local directory.
func TestInterruptStopsCleanlyAndSaves(t *testing.T) {
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	// run sets these (setDefault, Ensure): restored when the test ends.
	for _, k := range []string{"APP_ENV", "PAM_ACTUATOR_ENABLED", "SYSTEM_ADMIN_EMAIL", "SYSTEM_ADMIN_PASSWORD",
		"TABLE_NAME", "APP_URL", "CHANNEL_URL", "CHANNEL_ENDPOINT", "AWS_ENDPOINT_URL", emulator.PoolEnv} {
		t.Setenv(k, "")
	}
	t.Setenv("PORT", port)
	t.Setenv(localDirEnv, dir)
	done := make(chan error, 1)
	go func() { done <- run() }()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for { // serving: run's signal handler is installed
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://127.0.0.1:"+port+"/api/v1/health", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			break
		}
		select {
		case err := <-done:
			t.Skipf("the local runtime did not start: %v", err)
		case <-ctx.Done():
			t.Fatal("the local runtime did not serve")
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run after SIGINT: %v, want nil (exit status 0)", err)
		}
	case <-ctx.Done():
		t.Fatal("run did not return after SIGINT")
	}
	if _, err := os.Stat(filepath.Join(dir, stateFile)); err != nil {
		t.Errorf("no saved state after SIGINT: %v", err)
	}
	if log, _ := os.ReadFile(filepath.Join(dir, stateFile+".log")); !strings.Contains(string(log), "saved the emulator's state") {
		t.Errorf("the emulator did not report a save:\n%s", log)
	}
}

// A second runtime on the same data directory is refused: each would save
// the state it loaded over the other's.
func TestOneRuntimePerDataDirectory(t *testing.T) {
	dir := t.TempDir()
	first, err := holdDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := holdDir(dir); err == nil || !strings.Contains(err.Error(), "another local runtime uses") {
		t.Errorf("second holder: %v, want refused", err)
	}
	first.Close()
	again, err := holdDir(dir)
	if err != nil {
		t.Errorf("after the first stopped: %v", err)
	} else {
		again.Close()
	}
}
