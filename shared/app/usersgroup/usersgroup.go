// Package usersgroup wires the users function (/api/v1/users). The invitation
// routes of /auth (accept-invite, invite/preview) are wired by authgroup.
package usersgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/push"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// Users builds the users group (with the caller's push targets,
// /users/me/push-targets, of shared/push). System roles are resolved from code, so it
// needs no seeding of its own (the auth function seeds the table).
func Users(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&user.Handler{Svc: Service(d)}).Routes(rt)
	(&push.Handler{Svc: &push.Service{St: push.Store{St: d.Store}, Clock: d.Clock}}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the users service; its invitation e-mails go through the mail
// queue, and removals revoke the removed user's API keys through shared/apikey
// (user.Service.RemoveMembership, the one removal primitive bulk callers use).
func Service(d *app.Deps) *user.Service {
	keys := &apikey.Service{St: apikey.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Roles: d.Roles, Clock: d.Clock}
	return &user.Service{St: d.Store, Users: d.Users, Roles: d.Roles, Orgs: tenant.Store{St: d.Store}, OrgAdmin: role.OrgAdminSet(),
		Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock:  d.Clock, Mail: d.Notify, AppURL: d.Cfg.AppURL, Keys: keys}
}
