package app

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/shared/sweep"
)

// Start loads config and deps once per cold start or exits with the reason
// (for the wiring packages that start their own Lambda).
func Start() *Deps { return start() }

// start loads config and deps once per cold start or exits with the reason.
func start() *Deps {
	ctx := context.Background()
	cfg, err := config.FromEnv(ctx)
	if err != nil {
		fail(err)
	}
	d, err := NewDeps(ctx, cfg, nil)
	if err != nil {
		fail(err)
	}
	return d
}

func fail(err error) {
	slog.Error("startup failed", "err", err)
	os.Exit(1)
}

// RunHTTP serves one route group as a Lambda behind API Gateway (payload v2).
func RunHTTP(b Builder) {
	h, err := b(start())
	if err != nil {
		fail(err)
	}
	lambda.Start(httpadapter.NewV2(h).ProxyWithContext)
}

// Sweeper builds the scheduled-jobs dispatcher with the platform's own job (the
// outbox drain); shared/app/sweepergroup adds the domain jobs.
func Sweeper(d *Deps) *sweep.Sweeper {
	return &sweep.Sweeper{Log: d.Log, Jobs: map[string]sweep.Job{
		"outbox-drain": func(ctx context.Context) (int, error) { return d.Events.Drain(ctx, outboxGrace) },
	}}
}

// QueueName is the name of the queue at url (its last path segment), which is
// also the last part of its ARN.
func QueueName(url string) string {
	if i := strings.LastIndex(url, "/"); i >= 0 {
		return url[i+1:]
	}
	return url
}

// outboxGrace leaves a request time to send its own events before the sweeper does.
const outboxGrace = 30 * time.Second
