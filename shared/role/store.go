package role

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// MaxDepth bounds an inheritance chain (a role, its parent, ...).
const MaxDepth = 10

// Store reads and writes roles.
type Store struct{ St *store.Store }

// Get reads the role id of owner. System roles come from their Go definition
// (SystemRoles), never from the table: one source, no seeding, no read.
func (s Store) Get(ctx context.Context, owner, id string) (*Role, error) {
	if owner == SystemOwner {
		if r, ok := systemRole(id); ok {
			return r, nil
		}
		return nil, fmt.Errorf("get role %s: %w", id, store.ErrNotFound)
	}
	var r Role
	k := keys(owner, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &r); err != nil {
		return nil, fmt.Errorf("get role %s: %w", id, err)
	}
	return &r, nil
}

// ByID finds a role by id alone (GSI1); callers check the owner is visible.
func (s Store) ByID(ctx context.Context, id string) (*Role, error) {
	if r, ok := systemRole(id); ok {
		return r, nil
	}
	var rs []Role
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "ROLEREF#" + id}, &rs); err != nil {
		return nil, fmt.Errorf("role %s: %w", id, err)
	}
	if len(rs) == 0 {
		return nil, fmt.Errorf("role %s: %w", id, store.ErrNotFound)
	}
	return &rs[0], nil
}

// ByOwner lists the roles of an owner (SystemOwner: the Go definitions).
func (s Store) ByOwner(ctx context.Context, owner string) ([]Role, error) {
	if owner == SystemOwner {
		rs := SystemRoles()
		for i := range rs {
			rs[i].Keys = keys(SystemOwner, rs[i].ID)
		}
		return rs, nil
	}
	var rs []Role
	if err := s.St.AllInto(ctx, store.Query{PK: "ROLES#" + owner, SKPrefix: "ROLE#"}, &rs); err != nil {
		return nil, fmt.Errorf("roles of %s: %w", owner, err)
	}
	return rs, nil
}

// Grant is an effective permission with the role it comes from.
type Grant struct {
	authz.Permission
	SourceRoleID   string `json:"sourceRoleId"`
	SourceRoleName string `json:"sourceRoleName"`
	Inherited      bool   `json:"inherited"`
}

// Effective resolves a role and its parent chain: the permission set, whether
// any role of the chain forces MFA, and each grant with its source.
func (s Store) Effective(ctx context.Context, owner, id string) (authz.Set, bool, []Grant, error) {
	return s.EffectiveFrom(ctx, owner, id, nil)
}

// EffectiveFrom is Effective with the chain's first role already read (first,
// e.g. in authentication's batch; nil to read it). first is used only when it is
// the row of role id of owner (its key), so a row read for another role is
// never mistaken for it; custom parents are still read one call each.
func (s Store) EffectiveFrom(ctx context.Context, owner, id string, first *Role) (authz.Set, bool, []Grant, error) {
	if k := keys(owner, id); first != nil && (first.PK != k.PK || first.SK != k.SK) {
		first = nil
	}
	return effective(owner, id, func(o, i string) (*Role, error) {
		if r := first; r != nil {
			first = nil // the first role of the chain only
			return r, nil
		}
		return s.Get(ctx, o, i)
	})
}

// effective walks the chain from role id of owner, reading each role with get.
func effective(owner, id string, get func(owner, id string) (*Role, error)) (authz.Set, bool, []Grant, error) {
	set := authz.Set{}
	var grants []Grant
	force := false
	seen := map[string]bool{}
	for depth := 0; id != ""; depth++ {
		if depth >= MaxDepth || seen[id] {
			return nil, false, nil, fmt.Errorf("role %s: inheritance chain too deep or circular", id)
		}
		seen[id] = true
		r, err := get(owner, id)
		if err != nil {
			return nil, false, nil, err
		}
		force = force || r.ForceMFA
		for _, p := range r.PermissionList() {
			if !set[p] {
				set[p] = true
				grants = append(grants, Grant{Permission: p, SourceRoleID: r.ID, SourceRoleName: r.Name, Inherited: depth > 0})
			}
		}
		if r.ParentRoleID == nil {
			break
		}
		id, owner = *r.ParentRoleID, r.ParentOwner
		if owner == "" {
			owner = r.Owner
		}
	}
	return set, force, grants, nil
}

// nameGuard reserves a role name (case-insensitively) within its owner.
type nameGuard struct {
	store.Keys
	RoleID string `dynamodbav:"roleId"`
}

// nameKey is the guard key of name within owner.
func nameKey(owner, name string) store.KeyRef {
	return store.KeyRef{PK: "ROLES#" + owner, SK: "NAME#" + strings.ToLower(name)}
}

// putName reserves name for roleID; it fails its condition when the name is taken.
func putName(owner, name, roleID string) *store.Write {
	k := nameKey(owner, name)
	return store.PutNew(nameGuard{Keys: store.Keys{PK: k.PK, SK: k.SK}, RoleID: roleID})
}

// deleteName releases name.
func deleteName(owner, name string) *store.Write {
	k := nameKey(owner, name)
	return store.Delete(k.PK, k.SK)
}

// IsNotFound reports an unknown role.
func IsNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// Pin is a custom role's row at a version: a cache of what the role grants is
// current while the row is still at that version.
type Pin struct {
	Key     store.KeyRef
	Version int
}

// Pinned is Effective that also returns a Pin for each custom role of the
// chain (system roles live in code and need none).
func (s Store) Pinned(ctx context.Context, owner, id string) (authz.Set, []Pin, error) {
	set := authz.Set{}
	var pins []Pin
	seen := map[string]bool{}
	for depth := 0; id != ""; depth++ {
		if depth >= MaxDepth || seen[id] {
			return nil, nil, fmt.Errorf("role %s: inheritance chain too deep or circular", id)
		}
		seen[id] = true
		r, err := s.Get(ctx, owner, id)
		if err != nil {
			return nil, nil, err
		}
		if owner != SystemOwner {
			k := keys(owner, id)
			pins = append(pins, Pin{Key: store.KeyRef{PK: k.PK, SK: k.SK}, Version: r.Version})
		}
		for _, p := range r.PermissionList() {
			set[p] = true
		}
		if r.ParentRoleID == nil {
			break
		}
		id, owner = *r.ParentRoleID, r.ParentOwner
		if owner == "" {
			owner = r.Owner
		}
	}
	return set, pins, nil
}

// Writes of the role service; each names its compare-and-swap.

// childCountWrite adds d to r's child count if r is still at its version.
func childCountWrite(r *Role, d int) *store.Write {
	return store.Change(r.PK, r.SK, expression.Add(expression.Name("childCount"), expression.Value(d))).When(store.Is("version", r.Version))
}

// unchangedWrite checks that r is still at its version.
func unchangedWrite(r *Role) *store.Write {
	return store.Assert(r.PK, r.SK, store.Is("version", r.Version))
}

// childCountAnyWrite adds d to the child count of the role at k, whatever its version.
func childCountAnyWrite(pk, sk string, d int) *store.Write {
	return store.Change(pk, sk, expression.Add(expression.Name("childCount"), expression.Value(d))).Exists()
}

// replaceWrite stores next's editable fields if the role is still at version prev.
func replaceWrite(next *Role, prev int) *store.Write {
	upd := expression.Set(expression.Name("name"), expression.Value(next.Name)).
		Set(expression.Name("description"), expression.Value(next.Description)).
		Set(expression.Name("permissions"), expression.Value(next.Permissions)).
		Set(expression.Name("parentRoleId"), expression.Value(next.ParentRoleID)).
		Set(expression.Name("parentOwner"), expression.Value(next.ParentOwner)).
		Set(expression.Name("forceMfa"), expression.Value(next.ForceMFA)).
		Set(expression.Name("updatedAt"), expression.Value(next.UpdatedAt)).
		Set(expression.Name("version"), expression.Value(next.Version))
	return store.Change(next.PK, next.SK, upd).When(store.Is("version", prev)).Exists()
}

// deleteWrite deletes r if it is still at its version and no role inherits from it.
func deleteWrite(r *Role) *store.Write {
	noChildren := expression.Name("childCount").AttributeNotExists().Or(store.Is("childCount", 0))
	return store.Delete(r.PK, r.SK).When(store.Is("version", r.Version).And(noChildren))
}
