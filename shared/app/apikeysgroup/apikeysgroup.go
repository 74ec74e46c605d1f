// Package apikeysgroup wires the api-keys and service-principals functions.
package apikeysgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/tenant"
)

// APIKeys builds the api-keys group (/api-keys).
func APIKeys(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&apikey.Handler{Svc: Service(d)}).KeyRoutes(rt)
	return d.Edge(rt), nil
}

// ServicePrincipals builds the service-principals group (/service-principals).
func ServicePrincipals(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&apikey.Handler{Svc: Service(d)}).PrincipalRoutes(rt)
	return d.Edge(rt), nil
}

// Service builds the key and principal service.
func Service(d *app.Deps) *apikey.Service {
	return &apikey.Service{St: apikey.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Roles: d.Roles, Clock: d.Clock}
}
