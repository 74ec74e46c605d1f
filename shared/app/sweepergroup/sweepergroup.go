// Package sweepergroup wires the sweeper function with every built job: the
// outbox drain (shared/app), enrollment-key expiry, device-offline detection,
// deletion grace (shared/deletion), elevation expiry (shared/pam), access-review
// completion resumption and the bootstrap of the configured system administrator
// (idempotent).
package sweepergroup

import (
	"context"

	"github.com/gale-rmm/gale/shared/app/signingroup"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/accessreviewsgroup"
	"github.com/gale-rmm/gale/shared/app/deletiongroup"
	"github.com/gale-rmm/gale/shared/app/devicesgroup"
	"github.com/gale-rmm/gale/shared/app/enrollmentkeysgroup"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/sweep"
)

// Sweeper builds the scheduled-jobs dispatcher.
func Sweeper(d *app.Deps) *sweep.Sweeper {
	sw := app.Sweeper(d)
	sw.Jobs["enrollment-key-expiry"] = enrollmentkeysgroup.Service(d).Purge
	sw.Jobs["device-offline"] = devicesgroup.Service(d).SweepOffline
	sw.Jobs["deletion-grace"] = deletiongroup.Service(d).SweepGrace
	sw.Jobs["elevation-expiry"] = pamgroup.Service(d).Expire
	sw.Jobs["access-review-completion"] = accessreviewsgroup.Service(d).ResumeStalled
	sw.Jobs["bootstrap"] = func(ctx context.Context) (int, error) { return signingroup.BootstrapCount(ctx, d) }
	return sw
}

// Run starts the sweeper Lambda.
func Run() { lambda.Start(Sweeper(app.Start()).Handle) }
