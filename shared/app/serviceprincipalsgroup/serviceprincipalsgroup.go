// Package serviceprincipalsgroup wires the service-principals function
// (/api/v1/service-principals); its service is the api-keys function's.
package serviceprincipalsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/apikeysgroup"
)

// ServicePrincipals builds the service-principals group (/service-principals).
func ServicePrincipals(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&apikey.Handler{Svc: apikeysgroup.Service(d)}).PrincipalRoutes(rt)
	return d.Edge(rt), nil
}
