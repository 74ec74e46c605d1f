package role

import (
	"context"
	"slices"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
)

// Get returns a visible role with its direct permissions and user count.
func (s *Service) Get(ctx context.Context, id string) (*View, error) {
	p, r, err := s.authorizeRole(ctx, authz.UsersRead, id)
	if err != nil {
		return nil, err
	}
	n, err := s.userCount(ctx, p, r)
	if err != nil {
		return nil, err
	}
	return &View{Role: r, Permissions: r.PermissionList(), UserCount: n}, nil
}

// userCount counts a role's holders where the caller reads it: a custom role's
// holders are all in its owner; a system role's are counted in the caller's own
// tenant, so a count never reveals another tenant.
func (s *Service) userCount(ctx context.Context, p *authz.Principal, r *Role) (int, error) {
	if !r.IsSystem {
		hs, err := s.Users.RoleHolders(ctx, r.ID)
		return len(hs), err
	}
	ms, err := s.Users.Members(ctx, p.Scope, p.PartnerID, p.OrgID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, m := range ms {
		if m.RoleID == r.ID {
			n++
		}
	}
	return n, nil
}

// List returns the system roles of the owner's scope, then the owner's custom
// roles by name, each with the number of the owner's users holding it. orgID is
// for partner and system callers (the OrgIdQuery parameter).
func (s *Service) List(ctx context.Context, orgID string) ([]View, error) {
	p, err := authz.RequireTenant(ctx, authz.UsersRead)
	if err != nil {
		return nil, err
	}
	o, err := s.ownerFor(ctx, p, orgID)
	if err != nil {
		return nil, err
	}
	sys, err := s.Roles.ByOwner(ctx, SystemOwner)
	if err != nil {
		return nil, err
	}
	custom, err := s.Roles.ByOwner(ctx, o.key)
	if err != nil {
		return nil, err
	}
	ms, err := s.Users.Members(ctx, o.scope, o.partnerID, o.orgID)
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, m := range ms {
		counts[m.RoleID]++
	}
	order := map[string]int{}
	for i, r := range SystemRoles() {
		order[r.ID] = i
	}
	sys = slices.DeleteFunc(sys, func(r Role) bool { return r.Scope != o.scope })
	slices.SortFunc(sys, func(a, b Role) int { return order[a.ID] - order[b.ID] })
	slices.SortFunc(custom, func(a, b Role) int {
		return strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
	})
	out := make([]View, 0, len(sys)+len(custom))
	for _, rs := range [][]Role{sys, custom} {
		for i := range rs {
			r := &rs[i]
			out = append(out, View{Role: r, Permissions: r.PermissionList(), UserCount: counts[r.ID]})
		}
	}
	return out, nil
}

// Effective returns a visible role's direct and inherited permissions, each with
// the role it comes from.
func (s *Service) Effective(ctx context.Context, id string) ([]Grant, error) {
	_, r, err := s.authorizeRole(ctx, authz.UsersRead, id)
	if err != nil {
		return nil, err
	}
	_, _, grants, err := s.Roles.Effective(ctx, r.Owner, r.ID)
	if err != nil {
		return nil, err
	}
	return grants, nil
}
