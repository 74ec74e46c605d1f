// Package deletiongroup wires account deletion (shared/deletion) for the
// functions that serve it: the auth function (the requester's routes, with
// the password check), the admin function (administration) and the sweeper
// (the deletion-grace job).
package deletiongroup

import (
	"context"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/removal"
	"github.com/gale-rmm/gale/shared/app/usersgroup"
	"github.com/gale-rmm/gale/shared/deletion"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Service builds the deletion service without a password verifier (the auth
// function adds passhash.Verify; the others never check passwords, so they do
// not link Argon2id).
func Service(d *app.Deps) *deletion.Service {
	return &deletion.Service{St: deletion.Store{St: d.Store}, Users: d.Users, Roles: d.Roles, Orgs: tenant.Store{St: d.Store},
		Remover: Remover{removal.Remover{Users: usersgroup.Service(d), Clock: d.Clock}}, Mail: d.Notify,
		Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock}, Clock: d.Clock, AppURL: d.Cfg.AppURL}
}

// Remover adapts the membership removal to deletion.MemberRemover.
type Remover struct{ R removal.Remover }

// RemoveMember implements deletion.MemberRemover.
func (r Remover) RemoveMember(ctx context.Context, m deletion.Removal) error {
	return r.R.Remove(ctx, removal.Member{UserID: m.UserID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID,
		Actor: m.Actor, Reason: m.Reason})
}
