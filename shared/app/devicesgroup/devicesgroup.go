// Package devicesgroup wires the devices function.
package devicesgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Devices builds the devices group (/devices).
func Devices(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&device.Handler{Svc: Service(d)}).Routes(rt)
	(&pam.ActuationHandler{Svc: pamgroup.Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the device service (also used by the sweeper). A
// decommission closes the device's agent channel (CHANNEL_ENDPOINT).
func Service(d *app.Deps) *device.Service {
	s := &device.Service{St: device.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock, Events: d.Events}
	if p := pamgroup.Pusher(d); p != nil {
		s.Channel = p
	}
	return s
}
