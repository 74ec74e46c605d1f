// Package tenancygroup wires the organizations and sites functions.
package tenancygroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Organizations builds the organizations group (/organizations).
func Organizations(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	handler(d).OrgRoutes(rt)
	return d.Edge(rt), nil
}

// Sites builds the sites group (/sites and /device-groups).
func Sites(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	handler(d).SiteRoutes(rt)
	return d.Edge(rt), nil
}

func handler(d *app.Deps) *tenant.Handler {
	return tenant.NewHandler(tenant.NewService(tenant.Store{St: d.Store}, d.Clock))
}
