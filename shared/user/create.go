package user

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
)

// NewActive describes an active user created outside the invitation flow
// (bootstrap, demo data), with one membership of role RoleID (owned by
// RoleOwner, role.SystemOwner for a built-in role). The caller hashes the
// password (shared/passhash), so that this package, which every function
// links, does not link argon2.
type NewActive struct {
	Email, Name, PasswordHash string
	Scope                     authz.Scope
	PartnerID, OrgID          string
	RoleID, RoleOwner         string
	OrgAccess                 authz.OrgAccess
}

// ErrEmailTaken is CreateActive's answer for an address already registered.
var ErrEmailTaken = errors.New("e-mail already registered")

// CreateActive creates an active user with one membership, the organization's
// member count and its audit record in one transaction.
func CreateActive(ctx context.Context, st *store.Store, clk clock.Clock, n NewActive) (*User, error) {
	now := clock.Format(clk.Now())
	u := &User{ID: uuid.NewString(), Email: NormalizeEmail(n.Email), Name: n.Name, PasswordHash: n.PasswordHash,
		Status: StatusActive, PasswordChangedAt: now, CreatedAt: now, UpdatedAt: now}
	m := &Membership{ID: uuid.NewString(), UserID: u.ID, Scope: n.Scope, PartnerID: n.PartnerID, OrgID: n.OrgID,
		RoleID: n.RoleID, RoleOwner: n.RoleOwner, OrgAccess: n.OrgAccess, CreatedAt: now}
	tx := (&store.Tx{}).Add(CreateWrites(u)...).Add(AddMembershipWrite(m))
	if n.OrgID != "" {
		tx.Add(tenant.CountOrg(n.OrgID, "", tenant.CountMembers, 1))
	}
	tx.Add(
		audit.Put(clk, audit.Entry{Actor: audit.SystemActor, OrgID: n.OrgID, PartnerID: n.PartnerID,
			Action: "user.create", ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"scope": n.Scope, "roleId": n.RoleID}}))
	if err := st.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) && te.FailedAt(1) {
			return nil, ErrEmailTaken
		}
		return nil, fmt.Errorf("create user %s: %w", u.Email, err)
	}
	return u, nil
}
