// Package rolesgroup wires the roles function (/roles and /permissions).
package rolesgroup

import (
	"context"
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Roles builds the roles group.
func Roles(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	orgs := tenant.Store{St: d.Store}
	svc := &role.Service{St: d.Store, Roles: d.Roles, Users: d.Users,
		Orgs: role.OrgFunc(func(ctx context.Context, id string) (authz.Org, error) {
			o, err := orgs.Org(ctx, id)
			if err != nil {
				return authz.Org{}, err
			}
			return o.Ref(), nil
		})}
	role.NewHandler(svc).Routes(rt)
	return d.Edge(rt), nil
}
