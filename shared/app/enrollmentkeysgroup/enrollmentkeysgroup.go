// Package enrollmentkeysgroup wires the enrollment-keys function.
package enrollmentkeysgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/tenant"
)

// EnrollmentKeys builds the enrollment-keys group (/enrollment-keys).
func EnrollmentKeys(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&enrollment.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the enrollment-key service (also used by the sweeper).
func Service(d *app.Deps) *enrollment.Service {
	return &enrollment.Service{St: enrollment.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Clock: d.Clock,
		Pepper: d.Cfg.EnrollPepper, DefaultTTL: d.Cfg.EnrollmentKeyTTL}
}
