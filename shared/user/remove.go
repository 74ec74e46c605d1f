package user

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// KeyRevoker revokes the API keys a removed member created. shared/apikey's
// Service satisfies it; shared/app/usersgroup wires it.
type KeyRevoker interface {
	// RevokeCreatedBy revokes every active user-created API key that userID
	// created in the organizations of partner partnerID, or with orgID in
	// that organization only (keys since moved to a service
	// principal are not theirs any more): status revoked, one api_key.revoke
	// audit record each (details.reason "creator_removed"). Keys already
	// revoked or expired are left alone, so a re-run revokes nothing twice.
	// before, when not "", limits it to keys created before that time (RFC
	// 3339, as stored). It returns how many keys this call revoked.
	RevokeCreatedBy(ctx context.Context, actor audit.Actor, userID, partnerID, orgID, before string) (int, error)
}

// Removal names the membership RemoveMembership removes: UserID's membership
// of an organization (Scope authz.ScopeOrg, OrgID) or of a partner (Scope
// authz.ScopePartner, PartnerID).
type Removal struct {
	UserID    string
	Scope     authz.Scope
	PartnerID string
	OrgID     string
	// MembershipID, when set, must still be the membership's id: a membership
	// removed and re-invited since (a new id) is left alone, as one already
	// gone is (the key revocation still runs, for keys created before).
	MembershipID string
	// RoleID, when set, must still be the membership's role: a decision taken
	// about one role (an access review's revocation) does not remove a member
	// re-roled since (ErrRoleChanged, nothing done).
	RoleID string
	// Details are added to the user.remove audit record (for example the
	// access review that decided the removal).
	Details map[string]any
}

// Removed is what one RemoveMembership call did.
type Removed struct {
	// Membership is true when this call deleted the membership row (false: it
	// was already gone).
	Membership bool
	// RevokedKeys counts the API keys this call revoked.
	RevokedKeys int
}

// ErrRoleChanged is a Removal whose membership holds another role than the
// one it names.
var ErrRoleChanged = errors.New("user: the membership's role changed since the removal was decided")

// ErrRemoval is a Removal that names no membership.
var ErrRemoval = errors.New("user: a removal names a user and an organization or partner")

// RemoveMembership is the one removal primitive: DELETE /users/:id calls it
// after its own checks, and bulk callers (access reviews, account deletion)
// call it once per user after authorizing the whole operation themselves; it
// authorizes nothing (actor is recorded as the one who removed).
//
// It deletes the membership (with its pending invitation of that scope, the
// organization's member count and a user.remove audit record, in one
// transaction refused with ErrLastAdmin when it would leave the tenant without
// an administrator) and revokes every API key the user created in the
// organization, or, for a partner membership, in every organization of the
// partner (Keys.RevokeCreatedBy). Keys are revoked before the membership goes
// and once more after, so a key created in between is caught too.
//
// It is idempotent and safe to re-run after a crash at any point: a
// membership already gone is not an error (Removed.Membership false) and the
// key revocation still runs, revoking whatever an interrupted run left. A
// later invitation of the same account creates a new membership and brings
// none of the revoked keys back.
func (s *Service) RemoveMembership(ctx context.Context, actor audit.Actor, r Removal) (Removed, error) {
	// Authorization is the caller's (see above).
	if !valid.IsUUID(r.UserID) {
		return Removed{}, ErrRemoval
	}
	var t Target
	switch {
	case r.Scope == authz.ScopeOrg && valid.IsUUID(r.OrgID):
		o, err := s.Orgs.Org(ctx, r.OrgID)
		if err != nil {
			return Removed{}, fmt.Errorf("remove %s: %w", r.UserID, err)
		}
		t = Target{Scope: authz.ScopeOrg, PartnerID: o.PartnerID, OrgID: o.ID}
	case r.Scope == authz.ScopePartner && valid.IsUUID(r.PartnerID):
		t = Target{Scope: authz.ScopePartner, PartnerID: r.PartnerID}
	default:
		return Removed{}, ErrRemoval
	}
	var m *Membership
	var got Membership
	before := "" // a newer membership's keys are not this removal's
	k := t.membershipKey(r.UserID)
	switch err := s.St.Get(ctx, k.PK, k.SK, &got); {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		return Removed{}, err
	case r.MembershipID == "" || got.ID == r.MembershipID:
		if r.RoleID != "" && got.RoleID != r.RoleID {
			return Removed{}, ErrRoleChanged
		}
		m = &got
	default:
		before = got.CreatedAt
	}
	email := ""
	if u, err := s.Users.Get(ctx, r.UserID); err == nil {
		email = u.Email
	} else if !errors.Is(err, store.ErrNotFound) {
		return Removed{}, err
	}
	return s.remove(ctx, actor, t, &User{ID: r.UserID, Email: email}, m, before, r.Details)
}

// remove deletes membership m (nil: already gone) of u in t and revokes the
// keys u created there (RemoveMembership's steps).
func (s *Service) remove(ctx context.Context, actor audit.Actor, t Target, u *User, m *Membership, before string, details map[string]any) (Removed, error) {
	var out Removed
	if m != nil {
		tx := &store.Tx{}
		if err := s.keepAnAdmin(ctx, t, m, tx); err != nil {
			return out, err
		}
		n, err := s.revokeKeys(ctx, actor, u.ID, t, before)
		out.RevokedKeys += n
		if err != nil {
			return out, err
		}
		tx.Add(deleteMembershipWrite(m))
		if t.OrgID != "" {
			tx.Add(tenant.CountOrg(t.OrgID, "", tenant.CountMembers, -1))
		}
		ik := InviteKey(u.ID, m.Scope, m.PartnerID, m.OrgID)
		tx.Add(store.Delete(ik.PK, ik.SK))
		d := map[string]any{"roleId": m.RoleID, "revokedKeys": out.RevokedKeys}
		for k, v := range details {
			d[k] = v
		}
		tx.Add(audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: t.OrgID, PartnerID: t.PartnerID, Action: "user.remove",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email, Details: d}))
		if err := s.St.Commit(ctx, tx); err != nil {
			var te *store.TxError
			if !errors.As(err, &te) {
				return out, fmt.Errorf("remove user %s from %s: %w", u.ID, t.Tenant(), err)
			}
			// Lost a race: gone already is a removal done; anything else is retried by the caller.
			var cur Membership
			k := t.membershipKey(u.ID)
			if gerr := s.St.Get(ctx, k.PK, k.SK, &cur); !errors.Is(gerr, store.ErrNotFound) {
				return out, ErrChanged
			}
		} else {
			out.Membership = true
		}
	}
	n, err := s.revokeKeys(ctx, actor, u.ID, t, before)
	out.RevokedKeys += n
	return out, err
}

// revokeKeys revokes the keys userID created in t: in every organization of
// the partner for a partner membership.
func (s *Service) revokeKeys(ctx context.Context, actor audit.Actor, userID string, t Target, before string) (int, error) {
	if s.Keys == nil {
		return 0, nil
	}
	return s.Keys.RevokeCreatedBy(ctx, actor, userID, t.PartnerID, t.OrgID, before)
}
