package emulator_test

import (
	"context"
	"syscall"
	"testing"
	"time"

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
