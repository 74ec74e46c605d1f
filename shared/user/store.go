package user

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes users and memberships.
type Store struct{ St *store.Store }

// ErrNotFound is an unknown user.
var ErrNotFound = store.ErrNotFound

// Get reads a user by id.
func (s Store) Get(ctx context.Context, id string) (*User, error) {
	var u User
	k := ProfileKey(id)
	if err := s.St.Get(ctx, k.PK, k.SK, &u); err != nil {
		return nil, fmt.Errorf("get user %s: %w", id, err)
	}
	return &u, nil
}

// ByEmail reads a user by e-mail (two reads: the guard, then the profile).
func (s Store) ByEmail(ctx context.Context, email string) (*User, error) {
	var g EmailGuard
	k := EmailKey(email)
	if err := s.St.Get(ctx, k.PK, k.SK, &g); err != nil {
		return nil, fmt.Errorf("user by e-mail: %w", err)
	}
	return s.Get(ctx, g.UserID)
}

// CreateWrites are the writes that create u with its e-mail guard; a taken e-mail
// fails the guard's condition (index 1 of the returned writes).
func CreateWrites(u *User) []*store.Write {
	u.SetKeys()
	k := EmailKey(u.Email)
	return []*store.Write{
		store.PutNew(u),
		store.PutNew(EmailGuard{Keys: store.Keys{PK: k.PK, SK: k.SK}, UserID: u.ID}),
	}
}

// AddMembershipWrite adds m unless the user already has a membership in that tenant.
func AddMembershipWrite(m *Membership) *store.Write {
	m.SetKeys()
	return store.PutNew(m)
}

// EndSessions ends every session and token of account userID issued before
// now (RevokeSessionsWrite); an account gone is no error.
func (s Store) EndSessions(ctx context.Context, userID string, now time.Time) error {
	if err := s.St.Do(ctx, RevokeSessionsWrite(userID, now)); err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return fmt.Errorf("end sessions of %s: %w", userID, err)
	}
	return nil
}

// Membership reads account userID's membership in a tenant (store.ErrNotFound
// when it has none).
func (s Store) Membership(ctx context.Context, userID string, scope authz.Scope, partnerID, orgID string) (*Membership, error) {
	var m Membership
	k := MembershipKey(userID, scope, partnerID, orgID)
	if err := s.St.Get(ctx, k.PK, k.SK, &m); err != nil {
		return nil, fmt.Errorf("membership of %s: %w", userID, err)
	}
	return &m, nil
}

// Memberships lists a user's memberships.
func (s Store) Memberships(ctx context.Context, userID string) ([]Membership, error) {
	var out []Membership
	if err := s.St.AllInto(ctx, store.Query{PK: PK(userID), SKPrefix: "MEMBER#"}, &out); err != nil {
		return nil, fmt.Errorf("memberships of %s: %w", userID, err)
	}
	return out, nil
}

// Members lists the memberships of a tenant (GSI1).
func (s Store) Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]Membership, error) {
	var out []Membership
	q := store.Query{Index: store.GSI1, PK: "MEMBERS#" + TenantKey(scope, partnerID, orgID), SKPrefix: "USER#"}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("members of %s: %w", TenantKey(scope, partnerID, orgID), err)
	}
	return out, nil
}

// RoleHolders lists the memberships holding a role (GSI2).
func (s Store) RoleHolders(ctx context.Context, roleID string) ([]Membership, error) {
	var out []Membership
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI2, PK: "ROLEUSERS#" + roleID}, &out); err != nil {
		return nil, fmt.Errorf("holders of role %s: %w", roleID, err)
	}
	return out, nil
}

// IsNotFound reports whether err is an unknown user.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// Writes of the user service. Each names its condition: the compare-and-swap
// that makes concurrent changes of one record have one winner.

// replaceMembershipWrite overwrites membership prev with next (at the next
// version) if the stored one is still prev: same id, role, state and version
// (so a stale copy never writes back a state, role or restriction another
// request moved it from).
func replaceMembershipWrite(next, prev *Membership) *store.Write {
	next.Version = prev.Version + 1
	return store.Put(next).When(store.Is("id", prev.ID).And(store.Is("roleId", prev.RoleID)).And(statusIs(prev)).And(versionIs(prev)))
}

// memberChangeWrite moves membership m to state to ("" leaves the state) if
// it is still m in the state it was read in and, with rs, to restriction rs
// at the next version if it is still at m's: of two concurrent edits of a
// restriction one wins and the other is a lost race (never a lost update). A
// state change alone leaves the version (it writes no restriction).
func memberChangeWrite(m *Membership, to MemberStatus, rs *Restriction) *store.Write {
	cond := store.Is("id", m.ID)
	var upd expression.UpdateBuilder
	if to != "" {
		upd = upd.Set(expression.Name("status"), expression.Value(to))
		cond = cond.And(statusIs(m))
	}
	if rs != nil {
		for attr, v := range map[string][]string{"siteIds": rs.SiteIDs, "deviceGroupIds": rs.GroupIDs, "orgIds": rs.OrgIDs} {
			if len(v) == 0 {
				upd = upd.Remove(expression.Name(attr))
			} else {
				upd = upd.Set(expression.Name(attr), expression.Value(v))
			}
		}
		if rs.OrgAccess == "" {
			upd = upd.Remove(expression.Name("orgAccess"))
		} else {
			upd = upd.Set(expression.Name("orgAccess"), expression.Value(rs.OrgAccess))
		}
		upd = upd.Add(expression.Name("version"), expression.Value(1))
		cond = cond.And(versionIs(m))
	}
	return store.Change(m.PK, m.SK, upd).When(cond)
}

// deleteMembershipWrite deletes membership m if it is still m.
func deleteMembershipWrite(m *Membership) *store.Write {
	return store.Delete(m.PK, m.SK).When(store.Is("id", m.ID))
}

// RevokeSessionsWrite ends every session and token of account userID issued
// before now (tokensValidAfter: sign-out everywhere, an access review's or a
// deletion's removal).
func RevokeSessionsWrite(userID string, now time.Time) *store.Write {
	pk := ProfileKey(userID)
	return store.Change(pk.PK, pk.SK, expression.Set(expression.Name("tokensValidAfter"), expression.Value(clock.Stamp(now)))).Exists()
}

// accountWrite stores u's name and status (and, with revokeAt, ends every
// session issued before it) if u is still at its version.
func accountWrite(u *User, revokeAt string) *store.Write {
	pk := ProfileKey(u.ID)
	upd := expression.Set(expression.Name("name"), expression.Value(u.Name)).
		Set(expression.Name("status"), expression.Value(u.Status)).
		Set(expression.Name("updatedAt"), expression.Value(u.UpdatedAt)).
		Add(expression.Name("version"), expression.Value(1))
	if revokeAt != "" {
		upd = upd.Set(expression.Name("tokensValidAfter"), expression.Value(revokeAt))
	}
	return store.Change(pk.PK, pk.SK, upd).When(store.Is("version", u.Version)).Exists()
}

// disableAccountWrite disables u and ends every session issued before
// revokeAt, whatever version the profile is at now.
func disableAccountWrite(u *User, revokeAt string) *store.Write {
	pk := ProfileKey(u.ID)
	upd := expression.Set(expression.Name("status"), expression.Value(StatusDisabled)).
		Set(expression.Name("updatedAt"), expression.Value(u.UpdatedAt)).
		Set(expression.Name("tokensValidAfter"), expression.Value(revokeAt)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(pk.PK, pk.SK, upd).Exists()
}

// profileWrite stores u's own profile fields if u is still at its version.
func profileWrite(u *User) *store.Write {
	pk := ProfileKey(u.ID)
	upd := expression.Set(expression.Name("name"), expression.Value(u.Name)).
		Set(expression.Name("avatarUrl"), expression.Value(u.AvatarURL)).
		Set(expression.Name("updatedAt"), expression.Value(u.UpdatedAt)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(pk.PK, pk.SK, upd).When(store.Is("version", u.Version)).Exists()
}

// firstEpochWrite creates a tenant's administrators epoch row.
func firstEpochWrite(k store.KeyRef) *store.Write {
	return store.PutNew(adminEpoch{Keys: store.Keys{PK: k.PK, SK: k.SK}, Epoch: 1})
}

// nextEpochWrite moves the epoch row on from e.
func nextEpochWrite(k store.KeyRef, e int) *store.Write {
	return store.Change(k.PK, k.SK, expression.Set(expression.Name("epoch"), expression.Value(e+1))).When(store.Is("epoch", e))
}

// spendInviteWrite deletes the invitation at k if it still has tokenHash.
func spendInviteWrite(k store.KeyRef, tokenHash string) *store.Write {
	return store.Delete(k.PK, k.SK).When(store.Is("tokenHash", tokenHash))
}

// membershipUnchanged checks, in a transaction, that membership m is still m.
func membershipUnchanged(m *Membership) *store.Write {
	return store.Assert(m.PK, m.SK, store.Is("id", m.ID))
}
