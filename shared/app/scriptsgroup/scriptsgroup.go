// Package scriptsgroup wires the scripts function (/api/v1/scripts).
package scriptsgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/script"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Scripts builds the scripts group.
func Scripts(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&script.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the script service (also used by search).
func Service(d *app.Deps) *script.Service {
	return &script.Service{St: script.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock}
}
