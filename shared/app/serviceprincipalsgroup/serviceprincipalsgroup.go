// Package serviceprincipalsgroup wires the service-principals function
// (/api/v1/service-principals); its principals' keys are the api-keys
// function's key service.
package serviceprincipalsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/apikeysgroup"
	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/tenant"
)

// ServicePrincipals builds the service-principals group (/service-principals).
func ServicePrincipals(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	svc := &principal.Service{St: principal.Store{St: d.Store}, Keys: apikeysgroup.Service(d), Orgs: tenant.Store{St: d.Store}, Clock: d.Clock}
	(&principal.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}
