package role

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
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

// owner is where a custom role lives: a partner or an organization.
type owner struct {
	key       string // PARTNER#<id> or ORG#<id>
	scope     authz.Scope
	partnerID string // the partner, or the organization's partner
	orgID     string
}

func ownerOfOrg(o authz.Org) owner {
	return owner{key: OrgOwner(o.ID), scope: authz.ScopeOrg, partnerID: o.PartnerID, orgID: o.ID}
}

func ownerOfPartner(partnerID string) owner {
	return owner{key: PartnerOwner(partnerID), scope: authz.ScopePartner, partnerID: partnerID}
}

// ownerOf is the owner of a custom role.
func ownerOf(r *Role) owner {
	if r.OrgID != nil {
		return ownerOfOrg(authz.Org{ID: *r.OrgID, PartnerID: r.OrgPartnerID})
	}
	if r.PartnerID != nil {
		return ownerOfPartner(*r.PartnerID)
	}
	return owner{key: r.Owner, scope: r.Scope}
}

// stamp sets r's owner fields.
func (o owner) stamp(r *Role) {
	r.Owner, r.Scope = o.key, o.scope
	if o.orgID != "" {
		id := o.orgID
		r.OrgID, r.OrgPartnerID = &id, o.partnerID
	} else {
		id := o.partnerID
		r.PartnerID = &id
	}
	r.Keys = keys(o.key, r.ID)
}

// ownerFor resolves where a caller creates or lists roles: the organization they
// name (partner and system callers), or their own partner or organization.
func (s *Service) ownerFor(ctx context.Context, p *authz.Principal, orgID string) (owner, error) {
	if err := p.RequireFullPartnerAccess(); err != nil {
		return owner{}, err
	}
	if orgID != "" && !valid.IsUUID(orgID) {
		return owner{}, fault.Invalid("orgId", "must be a UUID")
	}
	switch p.Scope {
	case authz.ScopeOrg:
		if p.OrgID == "" {
			return owner{}, authz.ErrContextRequired
		}
		if orgID != "" && orgID != p.OrgID {
			return owner{}, ErrOrgNotFound
		}
		// The partner may be unknown here; writeOwner reads it when a write needs it.
		return ownerOfOrg(authz.Org{ID: p.OrgID, PartnerID: p.PartnerID}), nil
	case authz.ScopePartner, authz.ScopeSystem:
		if orgID != "" {
			return s.org(ctx, p, orgID)
		}
		if p.Scope == authz.ScopePartner && p.PartnerID != "" {
			return ownerOfPartner(p.PartnerID), nil
		}
	}
	return owner{}, authz.ErrContextRequired
}

// writeOwner is ownerFor for a write: an organization owner whose partner the
// caller's principal did not carry (organization memberships need not) is
// completed by reading the organization, so the roles it writes record the
// organization's partner for visibility checks.
func (s *Service) writeOwner(ctx context.Context, p *authz.Principal, orgID string) (owner, error) {
	o, err := s.ownerFor(ctx, p, orgID)
	if err != nil || o.scope != authz.ScopeOrg || o.partnerID != "" {
		return o, err
	}
	return s.org(ctx, p, o.orgID)
}

// org reads organization id and checks the caller may reach it (else 404).
func (s *Service) org(ctx context.Context, p *authz.Principal, id string) (owner, error) {
	o, err := s.Orgs.Reach(ctx, p, id)
	if err != nil {
		return owner{}, err
	}
	return ownerOfOrg(o.Ref()), nil
}

// visible reports whether p may see r: a system role of a scope the caller works
// in, or a custom role of an owner the caller can reach.
func visible(p *authz.Principal, r *Role) bool {
	if r.IsSystem {
		switch p.Scope {
		case authz.ScopeSystem:
			return true
		case authz.ScopePartner:
			return r.Scope == authz.ScopePartner || r.Scope == authz.ScopeOrg
		case authz.ScopeOrg:
			return r.Scope == authz.ScopeOrg
		}
		return false
	}
	switch {
	case r.OrgID != nil:
		return p.CanAccessOrg(authz.Org{ID: *r.OrgID, PartnerID: r.OrgPartnerID})
	case r.PartnerID != nil:
		return p.CanAccessPartner(*r.PartnerID)
	}
	return false
}

// authorizeRole opens the methods that act on one role: it requires perm and
// full partner access of the caller, then loads role id as they see it.
func (s *Service) authorizeRole(ctx context.Context, perm authz.Permission, id string) (*authz.Principal, *Role, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, nil, err
	}
	r, err := s.load(ctx, p, id)
	if err != nil {
		return nil, nil, err
	}
	return p, r, nil
}

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

// load reads role id (a path parameter) for p: unknown and invisible roles are
// both 404.
func (s *Service) load(ctx context.Context, p *authz.Principal, id string) (*Role, error) {
	if !valid.IsUUID(id) {
		return nil, fault.Invalid("id", "must be a UUID")
	}
	return s.find(ctx, p, id)
}

// find reads role id for p: unknown and invisible roles are both ErrNotFound.
func (s *Service) find(ctx context.Context, p *authz.Principal, id string) (*Role, error) {
	r, err := s.Roles.ByID(ctx, id)
	if IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !visible(p, r) {
		return nil, ErrNotFound
	}
	return r, nil
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

// systemRole returns system role id from its definition.
func systemRole(id string) (*Role, bool) {
	for _, r := range SystemRoles() {
		if r.ID == id {
			r.Keys = keys(SystemOwner, r.ID)
			return &r, true
		}
	}
	return nil, false
}

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

// Create makes a custom role of the caller's partner or organization (or of the
// organization a partner or system caller names).
func (s *Service) Create(ctx context.Context, in CreateInput) (*View, error) {
	p, err := authz.Require(ctx, authz.UsersWrite)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
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
	p, err := authz.Require(ctx, authz.UsersWrite)
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
	p, err := authz.Require(ctx, authz.UsersRead)
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
// only, in one batch (limit is at most 100).
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

// Available is GET /roles/permissions/available: the spec's resources and
// catalogue actions. Static, but authorized like every roles route.
func (s *Service) Available(ctx context.Context) (resources, actions []string, err error) {
	p, err := authz.Require(ctx, authz.UsersRead)
	if err != nil {
		return nil, nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, nil, err
	}
	return slices.Clone(authz.CatalogResources), authz.CatalogActions(), nil
}

// Catalog is GET /permissions/catalog: every assignable permission.
func (s *Service) Catalog(ctx context.Context) ([]authz.CatalogEntry, error) {
	p, err := authz.Require(ctx, authz.UsersRead)
	if err != nil {
		return nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, err
	}
	return slices.Clone(authz.Catalog), nil
}
