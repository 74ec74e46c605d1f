// Package apikeysgroup wires the api-keys function (/api/v1/api-keys) and the
// key service the service-principals function builds on.
package apikeysgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/tenant"
)

// APIKeys builds the api-keys group (/api-keys).
func APIKeys(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&apikey.Handler{Svc: Service(d)}).KeyRoutes(rt)
	return d.Edge(rt), nil
}

// Service builds the key service; a principal's key reaches its principal
// through shared/principal's store.
func Service(d *app.Deps) *apikey.Service {
	return &apikey.Service{St: apikey.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Owners: principal.Store{St: d.Store},
		Roles: d.Roles, Clock: d.Clock}
}
