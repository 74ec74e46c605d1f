// Package removal is the wiring that ends a membership for the access-review
// and account-deletion services (their MemberRemover interfaces), on
// shared/user's one removal primitive (user.Service.RemoveMembership: the
// membership, its invitation and member count, the user.remove audit record,
// the last-administrator rule, and the revocation of every API key the user
// created in the tenant). It adds what a review or a deletion also promises:
// every session and token of the account ends (tokensValidAfter, as sign-out
// everywhere does), written before the membership goes, so a run interrupted
// in between repeats it rather than skipping it. It is idempotent: a
// membership already gone (or replaced since it was reviewed) is left alone,
// and the key revocation re-runs. It writes no row itself: every write is
// shared/user's (Store.EndSessions, Service.RemoveMembership).
package removal

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Member names one membership to end.
type Member struct {
	UserID string
	// MembershipID, when set, must still be the membership's id.
	MembershipID string
	// RoleID, when set, must still be the membership's role (user.Removal).
	RoleID    string
	Scope     authz.Scope
	PartnerID string
	OrgID     string
	Actor     audit.Actor
	Reason    string
}

// Remover ends memberships.
type Remover struct {
	Users *user.Service
	Clock clock.Clock
}

// Remove ends membership m (idempotent). Removing a tenant's last
// administrator is user.ErrLastAdmin.
func (r Remover) Remove(ctx context.Context, m Member) error {
	cur, err := r.Users.Users.Membership(ctx, m.UserID, m.Scope, m.PartnerID, m.OrgID)
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return fmt.Errorf("remove %s: %w", m.UserID, err)
	case m.MembershipID != "" && cur.ID != m.MembershipID:
		return nil // removed and invited again since: a new membership
	case m.RoleID != "" && cur.RoleID != m.RoleID:
		return user.ErrRoleChanged // re-roled since the decision: nothing ends
	default:
		if err := r.Users.Users.EndSessions(ctx, m.UserID, r.Clock.Now()); err != nil {
			return err
		}
	}
	_, err = r.Users.RemoveMembership(ctx, m.Actor, user.Removal{UserID: m.UserID, Scope: m.Scope, PartnerID: m.PartnerID,
		OrgID: m.OrgID, MembershipID: m.MembershipID, RoleID: m.RoleID, Details: map[string]any{"reason": m.Reason, "sessionsRevoked": true}})
	return err
}
