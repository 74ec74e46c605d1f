// Package sitesgroup wires the sites function (/api/v1/sites and /api/v1/device-groups).
package sitesgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Sites builds the sites group (/sites and /device-groups).
func Sites(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	tenant.NewHandler(tenant.NewService(tenant.Store{St: d.Store}, d.Clock)).SiteRoutes(rt)
	return d.Edge(rt), nil
}
