// Package searchgroup wires the search function (/api/v1/search).
package searchgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/alertsgroup"
	"github.com/gale-rmm/gale/shared/app/devicesgroup"
	"github.com/gale-rmm/gale/shared/app/scriptsgroup"
	"github.com/gale-rmm/gale/shared/search"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Search builds the search group.
func Search(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	svc := &search.Service{Orgs: tenant.Store{St: d.Store}, Devices: devicesgroup.Service(d),
		Scripts: scriptsgroup.Service(d), Alerts: alertsgroup.Service(d)}
	(&search.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}
