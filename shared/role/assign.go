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
	if ri, ok := s.Builtin(id); ok {
		return ri, nil
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

// Builtin implements user.Roles: a built-in role costs no read.
func (Store) Builtin(id string) (user.RoleInfo, bool) {
	r, ok := systemRole(id)
	if !ok {
		return user.RoleInfo{}, false
	}
	return info(r, authz.NewSet(r.PermissionList()...)), true
}

// Owned implements user.Roles: the custom roles of owner with their
// effective permissions, in one Query (a parent is a role of the same owner
// or a system role; the package doc).
func (s Store) Owned(ctx context.Context, owner string) (map[string]user.RoleInfo, error) {
	rs, err := s.ByOwner(ctx, owner)
	if err != nil {
		return nil, err
	}
	mine := make(map[string]*Role, len(rs))
	for i := range rs {
		mine[rs[i].ID] = &rs[i]
	}
	get := func(o, id string) (*Role, error) {
		if r, ok := mine[id]; ok && o == owner {
			return r, nil
		}
		return s.Get(ctx, o, id)
	}
	out := make(map[string]user.RoleInfo, len(rs))
	for _, r := range mine {
		set, force, _, err := effective(owner, r.ID, get)
		if err != nil {
			return nil, err
		}
		ri := info(r, set)
		ri.ForceMFA = ri.ForceMFA || force
		out[r.ID] = ri
	}
	return out, nil
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
