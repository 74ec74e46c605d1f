// Package removal is the wiring that ends a membership for the access-review
// and account-deletion services (their MemberRemover interfaces), with what
// shared/user offers: the membership's keys and rows. It is idempotent: a
// membership already gone (or replaced since it was reviewed) is left alone.
//
// One transaction deletes the membership (if it is still the one named), its
// pending invitation and the organization's member count, ends every session
// and token of the account (tokensValidAfter, as sign-out everywhere does) and
// writes the user.remove audit record. The API keys the user created in the
// organization stop at once, because key authentication checks in every
// request that the creator is still a member (shared/apikey); marking them
// revoked is shared/user's removal primitive's job once it exists.
package removal

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// Member names one membership to end.
type Member struct {
	UserID string
	// MembershipID, when set, must still be the membership's id.
	MembershipID string
	Scope        authz.Scope
	PartnerID    string
	OrgID        string
	Actor        audit.Actor
	Reason       string
}

// Remover ends memberships.
type Remover struct {
	St    *store.Store
	Clock clock.Clock
}

// Remove ends membership m (idempotent).
func (r Remover) Remove(ctx context.Context, m Member) error {
	k := user.MembershipKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	var cur user.Membership
	switch err := r.St.Get(ctx, k.PK, k.SK, &cur); {
	case errors.Is(err, store.ErrNotFound):
		return nil
	case err != nil:
		return fmt.Errorf("remove %s: %w", m.UserID, err)
	}
	if m.MembershipID != "" && cur.ID != m.MembershipID {
		return nil // removed and invited again since: a new membership
	}
	now := r.Clock.Now()
	pk := user.ProfileKey(m.UserID)
	ik := user.InviteKey(m.UserID, cur.Scope, cur.PartnerID, cur.OrgID)
	tx := (&store.Tx{}).Add(
		store.Delete(k.PK, k.SK).When(store.Is("id", cur.ID)),
		store.Delete(ik.PK, ik.SK),
		store.Change(pk.PK, pk.SK, expression.Set(expression.Name("tokensValidAfter"), expression.Value(clock.Stamp(now)))).Exists(),
		audit.Put(r.Clock, audit.Entry{Actor: m.Actor, OrgID: m.OrgID, PartnerID: partnerOf(m), Action: "user.remove",
			ResourceType: "user", ResourceID: m.UserID, Details: map[string]any{"roleId": cur.RoleID, "reason": m.Reason,
				"sessionsRevoked": true}}))
	if m.OrgID != "" {
		tx.Add(tenant.CountOrg(m.OrgID, "", tenant.CountMembers, -1))
	}
	if err := r.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			// Removed (or its account deleted) by a concurrent run: read again.
			var again user.Membership
			if gerr := r.St.Get(ctx, k.PK, k.SK, &again); errors.Is(gerr, store.ErrNotFound) || (gerr == nil && again.ID != cur.ID) {
				return nil
			}
		}
		return fmt.Errorf("remove %s from %s: %w", m.UserID, user.TenantKey(m.Scope, m.PartnerID, m.OrgID), err)
	}
	return nil
}

func partnerOf(m Member) string {
	if m.OrgID != "" {
		return ""
	}
	return m.PartnerID
}
