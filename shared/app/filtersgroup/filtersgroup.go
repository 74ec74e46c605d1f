// Package filtersgroup wires the filters function (/api/v1/filters).
package filtersgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/devicesgroup"
	"github.com/gale-rmm/gale/shared/savedfilter"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Filters builds the filters group.
func Filters(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	svc := &savedfilter.Service{St: savedfilter.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store},
		Devices: devicesgroup.Service(d), Clock: d.Clock}
	(&savedfilter.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}
