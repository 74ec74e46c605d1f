package role

import (
	"context"
	"fmt"
	"slices"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// lineage is what a parent change needs to know: the new chain of ancestors
// (parent first; custom roles of the owner, possibly ending in a system role).
type lineage struct {
	chain    []*Role
	wildcard bool     // some ancestor grants *:*
	perms    []string // every permission the chain passes down
}

// ancestry checks that parentID may be the parent of role self (a new id on
// create) owned by o: a system role of o's scope or a custom role of o, with no
// cycle and a chain no deeper than MaxDepth counting self's descendants. fam is
// o's custom roles.
func (s *Service) ancestry(ctx context.Context, p *authz.Principal, o owner, fam map[string]*Role, self, parentID string) (lineage, error) {
	if parentID == self {
		return lineage{}, ErrCircular
	}
	var l lineage
	next := parentID
	for next != "" {
		if len(l.chain) >= MaxDepth {
			return lineage{}, ErrTooDeep
		}
		if next == self {
			return lineage{}, ErrCircular
		}
		r, ok := fam[next]
		if !ok {
			sys, isSys := systemRole(next)
			switch {
			case isSys && sys.Scope == o.scope:
				r = sys
			case len(l.chain) == 0:
				return lineage{}, s.foreignParent(ctx, p, parentID)
			default:
				return lineage{}, fmt.Errorf("role %s: parent %s is missing from owner %s", l.chain[len(l.chain)-1].ID, next, o.key)
			}
		}
		l.chain = append(l.chain, r)
		l.wildcard = l.wildcard || slices.Contains(r.Permissions, authz.AdminAll.String())
		l.perms = append(l.perms, r.Permissions...)
		next = ""
		if r.ParentRoleID != nil {
			next = *r.ParentRoleID
		}
	}
	if len(l.chain)+1+height(fam, self) > MaxDepth {
		return lineage{}, ErrTooDeep
	}
	return l, nil
}

// foreignParent answers a parent that is not the owner's: 400 when the caller
// can see it (another scope's system role, another owner's role), else 404.
func (s *Service) foreignParent(ctx context.Context, p *authz.Principal, id string) error {
	if _, err := s.find(ctx, p, id); err != nil {
		return err
	}
	return fault.Invalid("parentRoleId", "must be a system role of the same scope or a role of the same owner")
}

// height is the length of the longest chain of descendants below id.
func height(fam map[string]*Role, id string) int {
	var walk func(id string, seen map[string]bool) int
	walk = func(id string, seen map[string]bool) int {
		if seen[id] {
			return MaxDepth // a stored cycle: refuse anything that joins it
		}
		seen[id] = true
		h := 0
		for _, c := range fam {
			if c.ParentRoleID != nil && *c.ParentRoleID == id {
				h = max(h, 1+walk(c.ID, seen))
			}
		}
		delete(seen, id)
		return h
	}
	return walk(id, map[string]bool{})
}

// family reads o's custom roles by id.
func (s *Service) family(ctx context.Context, o owner) (map[string]*Role, error) {
	rs, err := s.Roles.ByOwner(ctx, o.key)
	if err != nil {
		return nil, err
	}
	fam := make(map[string]*Role, len(rs))
	for i := range rs {
		fam[rs[i].ID] = &rs[i]
	}
	return fam, nil
}

// chainWrites guard a parent change: the custom ancestors must be unchanged
// (version) when the change commits, so two concurrent re-parents cannot close
// a cycle; childCount moves by delta on the roles it names (new parent +1, old
// parent -1). One write per role, as a transaction allows.
func chainWrites(chain []*Role, delta map[string]int, roles map[string]*Role) []*store.Write {
	var out []*store.Write
	done := map[string]bool{}
	for _, r := range chain {
		if r.IsSystem || done[r.ID] {
			continue
		}
		done[r.ID] = true
		if d := delta[r.ID]; d != 0 {
			out = append(out, childCountWrite(r, d))
		} else {
			out = append(out, unchangedWrite(r))
		}
	}
	for id, d := range delta {
		r := roles[id]
		if done[id] || d == 0 || r == nil || r.IsSystem {
			continue
		}
		out = append(out, childCountAnyWrite(r.PK, r.SK, d))
	}
	return out
}
