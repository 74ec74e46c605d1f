// Package accessreviewsgroup wires the access-reviews function (/api/v1/access-reviews)
// and the sweeper's access-review-completion job.
package accessreviewsgroup

import (
	"context"
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/removal"
	"github.com/gale-rmm/gale/shared/app/usersgroup"
	"github.com/gale-rmm/gale/shared/review"
)

// AccessReviews builds the access-reviews group.
func AccessReviews(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&review.Handler{Svc: Service(d)}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the access review service.
func Service(d *app.Deps) *review.Service {
	return &review.Service{St: review.Store{St: d.Store}, Members: d.Users, Roles: d.Roles,
		Remover: Remover{removal.Remover{Users: usersgroup.Service(d), Clock: d.Clock}}, Clock: d.Clock}
}

// Remover adapts the membership removal to review.MemberRemover.
type Remover struct{ R removal.Remover }

// RemoveMember implements review.MemberRemover.
func (r Remover) RemoveMember(ctx context.Context, m review.Removal) error {
	return r.R.Remove(ctx, removal.Member{UserID: m.UserID, MembershipID: m.MembershipID, RoleID: m.RoleID, Scope: m.Scope,
		PartnerID: m.PartnerID, OrgID: m.OrgID, Actor: m.Actor, Reason: m.Reason})
}
