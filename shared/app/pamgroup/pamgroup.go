// Package pamgroup wires the pam function (/api/v1/pam) and the PAM service
// that agent ingest, device actuation and the sweeper share.
package pamgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/tenant"
)

// PAM builds the pam group.
func PAM(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&pam.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the PAM service.
func Service(d *app.Deps) *pam.Service {
	return &pam.Service{St: pam.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock, Events: d.Events,
		PendingTTL: d.Cfg.PAMPendingTTL, ActuatorEnabled: d.Cfg.PAMActuatorEnabled}
}
