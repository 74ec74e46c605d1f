package role

import (
	"context"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/user"
)

// Assignee implements user.Roles: it resolves a role for a membership
// assignment with its effective permissions (system roles from code, no read;
// custom roles by id, then their chain).
func (s Store) Assignee(ctx context.Context, id string) (user.RoleInfo, error) {
	if r, ok := systemRole(id); ok {
		set := authz.NewSet(r.PermissionList()...)
		return info(r, set), nil
	}
	r, err := s.ByID(ctx, id)
	if err != nil {
		return user.RoleInfo{}, err
	}
	set, force, _, err := s.Effective(ctx, r.Owner, r.ID)
	if err != nil {
		return user.RoleInfo{}, err
	}
	ri := info(r, set)
	ri.ForceMFA = ri.ForceMFA || force
	return ri, nil
}

// InScope implements user.Roles: the system roles of scope (in seed order),
// then the custom roles of owner ("" for none), with their direct permissions.
func (s Store) InScope(ctx context.Context, scope authz.Scope, owner string) ([]user.RoleInfo, error) {
	var out []user.RoleInfo
	for _, r := range SystemRoles() {
		if r.Scope == scope {
			out = append(out, info(&r, nil))
		}
	}
	if owner == "" {
		return out, nil
	}
	custom, err := s.ByOwner(ctx, owner)
	if err != nil {
		return nil, err
	}
	for i := range custom {
		out = append(out, info(&custom[i], nil))
	}
	return out, nil
}

func info(r *Role, set authz.Set) user.RoleInfo {
	partnerID := r.OrgPartnerID
	if r.PartnerID != nil {
		partnerID = *r.PartnerID
	}
	return user.RoleInfo{ID: r.ID, Name: r.Name, Description: r.Description, Scope: r.Scope, IsSystem: r.IsSystem,
		ForceMFA: r.ForceMFA, Owner: r.Owner, PartnerID: partnerID, Permissions: r.PermissionList(), Effective: set}
}
