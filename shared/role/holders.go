package role

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Holder is a user holding a role, as GET /roles/:id/users shows them.
type Holder struct {
	ID         string      `json:"id"` // the user's id
	Email      string      `json:"email"`
	Name       string      `json:"name"`
	Status     user.Status `json:"status"`
	Scope      authz.Scope `json:"scope"`
	PartnerID  string      `json:"partnerId,omitempty"`
	OrgID      string      `json:"orgId,omitempty"`
	AssignedAt string      `json:"assignedAt"` // when the membership was created
}

// Holders returns page (from 1, of limit users) of the users holding a visible
// role where the caller reads it, and their total: a custom role's holders in
// its owner, a system role's in the caller's own tenant (as userCount counts
// them), so another tenant's users never appear. Profiles are read for the page
// only, in one batch (limit is at most 100). It pages in memory, not on
// tenant.List: it is one role's holders (GSI2 ROLEUSERS#<id>), never a list
// of organization-owned rows across the caller's reach.
func (s *Service) Holders(ctx context.Context, id string, page, limit int) ([]Holder, int, error) {
	p, r, err := s.authorizeRole(ctx, authz.UsersRead, id)
	if err != nil {
		return nil, 0, err
	}
	tenant := r.Owner
	if r.IsSystem {
		tenant = user.TenantKey(p.Scope, p.PartnerID, p.OrgID)
	}
	ms, err := s.Users.RoleHolders(ctx, r.ID)
	if err != nil {
		return nil, 0, err
	}
	ms = slices.DeleteFunc(ms, func(m user.Membership) bool {
		return user.TenantKey(m.Scope, m.PartnerID, m.OrgID) != tenant
	})
	slices.SortFunc(ms, func(a, b user.Membership) int { return strings.Compare(a.UserID, b.UserID) })
	total := len(ms)
	if limit < 1 || limit > 100 || page < 1 || page-1 >= (total+limit-1)/limit {
		return []Holder{}, total, nil
	}
	start := (page - 1) * limit
	ms = ms[start:min(start+limit, total)]
	refs := make([]store.KeyRef, len(ms))
	for i, m := range ms {
		refs[i] = user.ProfileKey(m.UserID)
	}
	items, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, 0, fmt.Errorf("holders of role %s: %w", r.ID, err)
	}
	out := make([]Holder, 0, len(ms))
	for _, m := range ms {
		h := Holder{ID: m.UserID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, AssignedAt: m.CreatedAt}
		k := user.ProfileKey(m.UserID)
		if it, ok := items[k.PK+"|"+k.SK]; ok {
			var u user.User
			if err := store.Unmarshal(it, &u); err != nil {
				return nil, 0, fmt.Errorf("holder %s of role %s: %w", m.UserID, r.ID, err)
			}
			h.Email, h.Name, h.Status = u.Email, u.Name, u.Status
		}
		out = append(out, h)
	}
	return out, total, nil
}
