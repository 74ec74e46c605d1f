package role

import (
	"context"

	"github.com/gale-rmm/gale/shared/authz"
)

// withinLevel refuses a change of custom role r unless p holds every
// permission r grants (its parent chain included) and every permission of the
// roles that inherit from it: taking a permission away is as much above your
// level as granting it. Restricted callers change no role (organization-wide).
func (s *Service) withinLevel(ctx context.Context, p *authz.Principal, r *Role) error {
	if err := p.RequireUnrestricted(); err != nil {
		return err
	}
	fam, err := s.family(ctx, ownerOf(r))
	if err != nil {
		return err
	}
	set := authz.NewSet(r.PermissionList()...)
	// Ancestors: the owner's own roles are in fam; a parent outside it (a
	// system role, or another owner's) is resolved with its own chain.
	for c, depth := r, 0; c.ParentRoleID != nil && depth < MaxDepth; depth++ {
		parent, ok := fam[*c.ParentRoleID]
		if !ok {
			inherited, _, _, err := s.Roles.Effective(ctx, c.ParentOwner, *c.ParentRoleID)
			if err != nil {
				return err
			}
			for perm := range inherited {
				set[perm] = true
			}
			break
		}
		for _, perm := range parent.PermissionList() {
			set[perm] = true
		}
		c = parent
	}
	for _, c := range fam {
		if inheritsFrom(fam, c, r.ID) {
			for _, perm := range c.PermissionList() {
				set[perm] = true
			}
		}
	}
	for perm := range set {
		if !p.Holds(perm) {
			return ErrAboveLevel
		}
	}
	return nil
}

// inheritsFrom reports whether c has ancestor id within fam.
func inheritsFrom(fam map[string]*Role, c *Role, id string) bool {
	for depth := 0; c != nil && c.ParentRoleID != nil && depth < MaxDepth; depth++ {
		if *c.ParentRoleID == id {
			return true
		}
		c = fam[*c.ParentRoleID]
	}
	return false
}

// mayGrant refuses a change whose role would grant more than its author holds:
// *:* (its own or from the new parent chain) without holding it, new direct
// permissions beyond the author's, or a new parent passing such down.
func (c *roleChange) mayGrant(p *authz.Principal, l lineage) error {
	if (c.wildcard || l.wildcard) && !p.Holds(authz.AdminAll) {
		return ErrWildcard
	}
	if c.perms {
		if err := ceiling(p, c.next.Permissions); err != nil {
			return err
		}
	}
	return ceiling(p, l.perms)
}

// ceiling refuses a role that would grant a permission its author does not hold,
// so that users:write cannot be turned into any other permission.
func ceiling(p *authz.Principal, perms []string) error {
	var missing []string
	for _, s := range perms {
		if perm, ok := authz.Parse(s); ok && !p.Holds(perm) {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return ErrCeiling.WithDetails(map[string]any{"permissions": missing})
	}
	return nil
}
