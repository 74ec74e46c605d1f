// Package organizationsgroup wires the organizations function (/api/v1/organizations).
package organizationsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Organizations builds the organizations group (/organizations).
func Organizations(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	tenant.NewHandler(tenant.NewService(tenant.Store{St: d.Store}, d.Clock)).OrgRoutes(rt)
	return d.Edge(rt), nil
}
