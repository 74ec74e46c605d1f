// Package rolesgroup wires the roles function (/roles and /permissions).
package rolesgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Roles builds the roles group.
func Roles(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	svc := &role.Service{St: d.Store, Roles: d.Roles, Users: d.Users, Orgs: tenant.Store{St: d.Store}}
	role.NewHandler(svc).Routes(rt)
	return d.Edge(rt), nil
}
