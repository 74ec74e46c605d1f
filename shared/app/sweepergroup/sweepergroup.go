// Package sweepergroup wires the sweeper function with every built job: the
// outbox drain (shared/app), enrollment-key expiry, device-offline detection,
// deletion grace (shared/deletion), elevation expiry (shared/pam), access-review
// completion resumption, the bootstrap of the configured system administrator
// (idempotent) and, invoked by hand only, the list-index backfill
// (shared/backfill).
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
	"github.com/gale-rmm/gale/shared/backfill"
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
	// Not scheduled (routes.Schedules): invoked once after the deployment that
	// adds the list indexes, again until it logs "complete" (infra/cdk/README.md).
	sw.Jobs["list-index-backfill"] = backfill.Job{St: d.Store, Clock: d.Clock, Log: d.Log}.Run
	return sw
}

// Run starts the sweeper Lambda.
func Run() { lambda.Start(Sweeper(app.Start()).Handle) }
