package role

import (
	"context"
	"errors"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// Bounds of a role's fields (name up to 100 characters).
const (
	MaxName        = 100
	MaxDescription = 2000
)

// Holders is what the service reads of memberships; user.Store satisfies it.
type Holders interface {
	// RoleHolders lists the memberships holding a role.
	RoleHolders(ctx context.Context, roleID string) ([]user.Membership, error)
	// Members lists the memberships of a tenant.
	Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]user.Membership, error)
}

// Orgs is the one organization check (tenant.Store): partner and system
// callers naming orgId, and organization callers whose principal lacks their
// partner, read the organization through it.
type Orgs interface {
	Reach(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error)
}

// Service manages roles. Every method authorizes first; a change is written with
// its audit record in one transaction.
type Service struct {
	St    *store.Store
	Roles Store
	Users Holders
	Orgs  Orgs
}

// View is a role as the API shows it: the record, its direct permissions and the
// number of users holding it in the scope it was read from.
type View struct {
	*Role
	Permissions []authz.Permission `json:"permissions"`
	UserCount   int                `json:"userCount"`
}

func (s *Service) record(p *authz.Principal, o owner, action string, r *Role, details map[string]any) *store.Write {
	return audit.Put(s.St.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.orgID, PartnerID: o.partnerID, Action: action,
		ResourceType: "role", ResourceID: r.ID, ResourceName: r.Name, Details: details})
}

// commit runs tx; a failed condition on the name guard at index guard (-1: none)
// is a taken name, any other a lost race.
func (s *Service) commit(ctx context.Context, tx *store.Tx, guard int) error {
	err := s.St.Commit(ctx, tx)
	var te *store.TxError
	if errors.As(err, &te) {
		if guard >= 0 && te.FailedAt(guard) {
			return ErrNameTaken
		}
		return ErrChanged
	}
	return err
}
