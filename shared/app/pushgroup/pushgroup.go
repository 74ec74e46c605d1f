// Package pushgroup wires the mobile approval fan-out (shared/push) apart from
// the pam group, so the webhook-worker, which runs the fan-out from the events
// queue, does not link the agent channel's Management API client that the pam
// group wires for its pushes (tests/coldstart).
package pushgroup

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/push"
)

// Mobile builds the mobile approval fan-out.
func Mobile(d *app.Deps) *push.Fanout {
	return &push.Fanout{St: push.Store{St: d.Store}, Members: d.Users, Roles: d.Roles, Queue: d.Notify, Clock: d.Clock,
		Requests: pam.Store{St: d.Store}}
}
