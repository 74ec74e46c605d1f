package role

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// CreateInput is the body of POST /roles.
type CreateInput struct {
	// OrgID names the organization for partner and system callers (orgId in the OpenAPI document);
	// without it a partner caller creates a partner role. Organization callers
	// may omit it or name their own organization.
	OrgID        string
	Name         string
	Description  string
	Permissions  []authz.Permission
	ParentRoleID *string
	// ForceMFA makes every holder (and every holder of a role inheriting
	// from it) enrol an authenticator before anything else, as the built-in
	// roles that force it do (auth.Authenticator.Load reads it each request).
	ForceMFA bool
}

// UpdateInput is the body of PATCH /roles/:id; nil fields are left unchanged.
type UpdateInput struct {
	Name        *string
	Description *string
	// Permissions replaces the direct permissions.
	Permissions *[]authz.Permission
	// ParentRoleID sets the parent; a pointer to "" removes it.
	ParentRoleID *string
	// ForceMFA turns Force MFA on or off; holders feel it on their next request.
	ForceMFA *bool
}

// permissionStrings validates ps against the catalogue (naming permissions.N)
// and returns them as resource:action strings, duplicates dropped.
func permissionStrings(f fault.Fields, ps []authz.Permission) []string {
	out := make([]string, 0, len(ps))
	for i, p := range ps {
		if !authz.Known(p) {
			f.Addf(fmt.Sprintf("permissions.%d", i), "%q is not a permission of the catalogue", p.String())
			continue
		}
		if !slices.Contains(out, p.String()) {
			out = append(out, p.String())
		}
	}
	return out
}

// Create makes a custom role of the caller's partner or organization (or of the
// organization a partner or system caller names).
func (s *Service) Create(ctx context.Context, in CreateInput) (*View, error) {
	p, err := authz.RequireTenant(ctx, authz.UsersWrite, authz.NeedUnrestricted)
	if err != nil {
		return nil, err
	}
	o, err := s.writeOwner(ctx, p, in.OrgID)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := strings.TrimSpace(in.Name)
	valid.Name(f, "name", name, MaxName)
	valid.Len(f, "description", in.Description, 0, MaxDescription)
	perms := permissionStrings(f, in.Permissions)
	parentID := ""
	if in.ParentRoleID != nil && *in.ParentRoleID != "" {
		parentID = *in.ParentRoleID
		valid.UUID(f, "parentRoleId", parentID)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	now := clock.Format(s.St.Clock.Now())
	r := &Role{ID: uuid.NewString(), Name: name, Description: in.Description, Permissions: perms,
		ForceMFA: in.ForceMFA, Version: 1, CreatedAt: now, UpdatedAt: now}
	o.stamp(r)
	tx := &store.Tx{}
	wildcard := slices.Contains(perms, authz.AdminAll.String())
	// The ceiling covers what the role grants, inherited permissions included.
	granted := perms
	if parentID != "" {
		fam, err := s.family(ctx, o)
		if err != nil {
			return nil, err
		}
		l, err := s.ancestry(ctx, p, o, fam, r.ID, parentID)
		if err != nil {
			return nil, err
		}
		r.ParentRoleID, r.ParentOwner = &parentID, l.chain[0].Owner
		wildcard = wildcard || l.wildcard
		granted = append(slices.Clone(perms), l.perms...)
		tx.Add(chainWrites(l.chain, map[string]int{parentID: 1}, fam)...)
	}
	if wildcard && !p.Holds(authz.AdminAll) {
		return nil, ErrWildcard
	}
	if err := ceiling(p, granted); err != nil {
		return nil, err
	}
	guard := tx.Len() + 1
	tx.Add(store.PutNew(r), putName(o.key, name, r.ID),
		s.record(p, o, "role.create", r, map[string]any{"permissions": perms, "parentRoleId": parentID, "forceMfa": r.ForceMFA}))
	if err := s.commit(ctx, tx, guard); err != nil {
		return nil, fmt.Errorf("create role %q: %w", name, err)
	}
	return &View{Role: r, Permissions: r.PermissionList()}, nil
}

// Update changes a custom role's name, description, permissions or parent:
// validate into a change (checkUpdate), diff the parent against the role's
// (reparent), check the author may grant the result (mayGrant), then one
// transaction that holds only over the version read.
func (s *Service) Update(ctx context.Context, id string, in UpdateInput) (*View, error) {
	p, r, err := s.authorizeRole(ctx, authz.UsersWrite, id)
	if err != nil {
		return nil, err
	}
	if r.IsSystem {
		return nil, ErrModifySystem
	}
	if err := s.withinLevel(ctx, p, r); err != nil {
		return nil, err
	}
	if in.Name == nil && in.Description == nil && in.Permissions == nil && in.ParentRoleID == nil && in.ForceMFA == nil {
		return nil, ErrNoUpdates
	}
	c, err := checkUpdate(r, in)
	if err != nil {
		return nil, err
	}
	o := ownerOf(r)
	chain, l, err := s.reparent(ctx, p, o, r, c)
	if err != nil {
		return nil, err
	}
	if err := c.mayGrant(p, l); err != nil {
		return nil, err
	}
	next := &c.next
	next.UpdatedAt = clock.Format(s.St.Clock.Now())
	next.Version = r.Version + 1
	tx := (&store.Tx{}).Add(chain...).Add(replaceWrite(next, r.Version))
	guard := -1
	if strings.ToLower(next.Name) != strings.ToLower(r.Name) {
		guard = tx.Len() + 1
		tx.Add(deleteName(o.key, r.Name), putName(o.key, next.Name, r.ID))
	}
	details := map[string]any{"changes": c.changed}
	if in.ForceMFA != nil {
		details["forceMfa"] = map[string]any{"from": r.ForceMFA, "to": next.ForceMFA}
	}
	tx.Add(s.record(p, o, "role.update", next, details))
	if err := s.commit(ctx, tx, guard); err != nil {
		return nil, fmt.Errorf("update role %s: %w", r.ID, err)
	}
	// The answer is the role as GET shows it, with its holders counted.
	n, err := s.userCount(ctx, p, next)
	if err != nil {
		return nil, err
	}
	return &View{Role: next, Permissions: next.PermissionList(), UserCount: n}, nil
}

// roleChange is a validated role PATCH: next is the role with the new name,
// description and permissions, parent the parent asked for ("" for none).
type roleChange struct {
	next     Role
	changed  []string // the fields the body named (audit)
	parent   string
	perms    bool // the direct permissions are replaced
	wildcard bool // and grant *:*
}

// checkUpdate validates a PATCH of role r; field errors are its error.
func checkUpdate(r *Role, in UpdateInput) (*roleChange, error) {
	f := fault.Fields{}
	c := &roleChange{next: *r}
	if r.ParentRoleID != nil {
		c.parent = *r.ParentRoleID
	}
	if in.Name != nil {
		c.next.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", c.next.Name, MaxName)
		c.changed = append(c.changed, "name")
	}
	if in.Description != nil {
		c.next.Description = *in.Description
		valid.Len(f, "description", c.next.Description, 0, MaxDescription)
		c.changed = append(c.changed, "description")
	}
	if in.Permissions != nil {
		c.next.Permissions = permissionStrings(f, *in.Permissions)
		c.perms, c.wildcard = true, slices.Contains(c.next.Permissions, authz.AdminAll.String())
		c.changed = append(c.changed, "permissions")
	}
	if in.ParentRoleID != nil {
		c.parent = *in.ParentRoleID
		if c.parent != "" {
			valid.UUID(f, "parentRoleId", c.parent)
		}
		c.changed = append(c.changed, "parentRoleId")
	}
	if in.ForceMFA != nil {
		c.next.ForceMFA = *in.ForceMFA
		c.changed = append(c.changed, "forceMfa")
	}
	return c, f.Err()
}

// reparent diffs the parent asked for against role r's. A move checks the new
// chain (no cycle, within reach), sets it on c.next and answers the writes
// that move the inheritance counts along both chains, with the new chain's
// lineage (what it passes down); no move answers nothing.
func (s *Service) reparent(ctx context.Context, p *authz.Principal, o owner, r *Role, c *roleChange) ([]*store.Write, lineage, error) {
	old := ""
	if r.ParentRoleID != nil {
		old = *r.ParentRoleID
	}
	if c.parent == old {
		return nil, lineage{}, nil
	}
	fam, err := s.family(ctx, o)
	if err != nil {
		return nil, lineage{}, err
	}
	var l lineage
	c.next.ParentRoleID, c.next.ParentOwner = nil, ""
	delta := map[string]int{}
	if parent := c.parent; parent != "" {
		if l, err = s.ancestry(ctx, p, o, fam, r.ID, parent); err != nil {
			return nil, lineage{}, err
		}
		c.next.ParentRoleID, c.next.ParentOwner = &parent, l.chain[0].Owner
		delta[parent]++
	}
	if old != "" {
		delta[old]--
	}
	return chainWrites(l.chain, delta, fam), l, nil
}

// Delete removes a custom role nobody holds and no role inherits from.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, r, err := s.authorizeRole(ctx, authz.UsersDelete, id)
	if err != nil {
		return err
	}
	if r.IsSystem {
		return ErrDeleteSystem
	}
	if err := s.withinLevel(ctx, p, r); err != nil {
		return err
	}
	holders, err := s.Users.RoleHolders(ctx, r.ID)
	if err != nil {
		return err
	}
	if len(holders) > 0 || r.ChildCount > 0 {
		refusal := ErrInUse
		if len(holders) == 0 {
			refusal = ErrInherited // say what blocks it: only child roles
		}
		return refusal.WithDetails(map[string]any{"userCount": len(holders), "childRoleCount": r.ChildCount})
	}
	o := ownerOf(r)
	tx := (&store.Tx{}).Add(
		deleteWrite(r),
		deleteName(o.key, r.Name),
	)
	if r.ParentRoleID != nil {
		if _, sys := systemRole(*r.ParentRoleID); !sys {
			k := keys(r.ParentOwner, *r.ParentRoleID)
			if r.ParentOwner == "" {
				k = keys(r.Owner, *r.ParentRoleID)
			}
			tx.Add(childCountAnyWrite(k.PK, k.SK, -1))
		}
	}
	tx.Add(s.record(p, o, "role.delete", r, nil))
	if err := s.commit(ctx, tx, -1); err != nil {
		return fmt.Errorf("delete role %s: %w", r.ID, err)
	}
	return nil
}

// Clone copies a visible role's effective permissions (and Force MFA) into a new
// custom role of the caller's partner or organization.
func (s *Service) Clone(ctx context.Context, id, name string) (*View, error) {
	p, err := authz.RequireTenant(ctx, authz.UsersWrite)
	if err != nil {
		return nil, err
	}
	o, err := s.writeOwner(ctx, p, "")
	if err != nil {
		return nil, err
	}
	src, err := s.load(ctx, p, id)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name = strings.TrimSpace(name)
	valid.Name(f, "name", name, MaxName)
	if err := f.Err(); err != nil {
		return nil, err
	}
	set, force, _, err := s.Roles.Effective(ctx, src.Owner, src.ID)
	if err != nil {
		return nil, err
	}
	if set[authz.AdminAll] && !p.Holds(authz.AdminAll) {
		return nil, ErrWildcard
	}
	var perms []string
	for _, c := range authz.Catalog {
		if set[c.Permission] {
			perms = append(perms, c.Permission.String())
		}
	}
	if err := ceiling(p, perms); err != nil {
		return nil, err
	}
	now := clock.Format(s.St.Clock.Now())
	r := &Role{ID: uuid.NewString(), Name: name, Description: src.Description, ForceMFA: force, Permissions: perms,
		Version: 1, CreatedAt: now, UpdatedAt: now}
	o.stamp(r)
	tx := (&store.Tx{}).Add(store.PutNew(r), putName(o.key, name, r.ID),
		s.record(p, o, "role.clone", r, map[string]any{"sourceRoleId": src.ID, "sourceRoleName": src.Name}))
	if err := s.commit(ctx, tx, 1); err != nil {
		return nil, fmt.Errorf("clone role %s as %q: %w", src.ID, name, err)
	}
	return &View{Role: r, Permissions: r.PermissionList()}, nil
}
