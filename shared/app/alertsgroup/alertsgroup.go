// Package alertsgroup wires the alerts function (/api/v1/alerts).
package alertsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/alert"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Alerts builds the alerts group.
func Alerts(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&alert.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the alert service (also used by search).
func Service(d *app.Deps) *alert.Service {
	return &alert.Service{St: alert.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Devices: device.Store{St: d.Store},
		Clock: d.Clock, Events: d.Events}
}
