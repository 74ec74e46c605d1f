package app

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/tenant"
)

// Organizations builds the organizations group (/organizations).
func Organizations(d *Deps) (http.Handler, error) {
	rt := d.Router()
	tenantHandler(d).OrgRoutes(rt)
	return d.edge(rt), nil
}

// Sites builds the sites group (/sites and /device-groups).
func Sites(d *Deps) (http.Handler, error) {
	rt := d.Router()
	tenantHandler(d).SiteRoutes(rt)
	return d.edge(rt), nil
}

func tenantHandler(d *Deps) *tenant.Handler {
	return tenant.NewHandler(tenant.NewService(tenant.Store{St: d.Store}, d.Clock))
}
