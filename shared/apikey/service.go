package apikey

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Orgs resolves the organizations a caller reaches; tenant.Store satisfies it.
type Orgs interface{ tenant.ListOrgs }

// Service holds the key rules.
type Service struct {
	St   Store
	Orgs Orgs
	// Owners reaches the service principal of a principal's key (PATCH,
	// rotate); nil where only RevokeCreatedBy is used (shared/user).
	Owners Owners
	Roles  role.Store
	Clock  clock.Clock
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID     string    `json:"orgId"`
	Name      *string   `json:"name"`
	Scopes    *[]string `json:"scopes"`
	ExpiresAt *string   `json:"expiresAt"`
	RateLimit *int      `json:"rateLimit"`
}

// PatchInput is the PATCH body: each field absent (kept) or a value; none
// takes null (the document marks none nullable), and a null or a value of the
// wrong type is a 400 naming the field.
type PatchInput struct {
	Name      valid.Opt[string]   `json:"name"`
	Scopes    valid.Opt[[]string] `json:"scopes"`
	RateLimit valid.Opt[int]      `json:"rateLimit"`
}

// ListFilter is the list query: filters, and page and limit or the cursor of
// the page before (the fast path for deep pages; it wins over page).
type ListFilter struct {
	OrgID, Status string
	Page, Limit   int
	Cursor        string
}

// MaxScopes bounds a key's or principal's scopes.
const MaxScopes = 100

// List returns one page of the keys the caller can see, newest first (ties by
// id): tenant.List over the API key list indexes, the status filter and reach
// applied to the index rows; then the page's usage from its keys' guards.
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Key], error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.Status != "" {
		valid.OneOf(fe, "status", f.Status, StatusActive, StatusRevoked, StatusExpired)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	pg, err := tenant.List(ctx, p, tenant.Listing[Key]{St: s.St.St, Orgs: s.Orgs, Name: "APIKEYS",
		OrgPK: KeyOrgListPK, PartnerPK: KeyPartnerListPK, Descending: true, OrgWide: true},
		tenant.ListQuery[Key]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor, Filtered: f.Status != "",
			Keep: func(k *Key) bool { return f.Status == "" || k.Status == f.Status }})
	if err != nil {
		return nil, err
	}
	if err := s.St.WithUsage(ctx, pg.Items); err != nil {
		return nil, err
	}
	return pg, nil
}

// Create issues a key in an organization the caller can reach.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Issued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if restricted(p) {
		return nil, ErrKeyRestricted
	}
	now := s.Clock.Now()
	f := fault.Fields{}
	name := CheckCreate(f, in.OrgID, in.Name)
	scopes := []string{}
	if in.Scopes != nil {
		scopes = CheckScopes(f, "scopes", *in.Scopes)
	}
	rate := DefaultRateLimit
	if in.RateLimit != nil {
		rate = *in.RateLimit
		valid.Range(f, "rateLimit", rate, 1, MaxRateLimit)
	}
	var expires *string
	if in.ExpiresAt != nil {
		if t := valid.Time(f, "expiresAt", *in.ExpiresAt); !t.IsZero() {
			if !t.After(now) {
				f.Add("expiresAt", "must be in the future")
			}
			e := clock.Format(t)
			expires = &e
		}
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := ceiling(p, scopes); err != nil {
		return nil, err
	}
	o, err := s.org(ctx, p, in.OrgID)
	if err != nil {
		return nil, err
	}
	c, err := s.creator(ctx, p)
	if err != nil {
		return nil, err
	}
	raw, hash, prefix, err := NewMaterial()
	if err != nil {
		return nil, err
	}
	id, ts := uuid.NewString(), clock.Format(now)
	k := &Key{Keys: recordKeys(o.ID, id), ID: id, OrgID: o.ID, PartnerID: o.PartnerID, Name: name, KeyPrefix: prefix,
		KeyHash: hash, Scopes: scopes, ExpiresAt: expires, RateLimit: rate, CreatedBy: p.UserID, CreatedAt: ts,
		UpdatedAt: ts, Status: StatusActive, Version: 1}
	tx := (&store.Tx{}).Add(CreateWrites(k, c)...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.create",
		ResourceType: "api_key", ResourceID: k.ID, ResourceName: k.Name,
		Details: map[string]any{"keyPrefix": prefix, "scopes": scopes, "rateLimit": rate, "expiresAt": expires}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create api key: %w", err)
	}
	return &Issued{Key: k, Raw: raw, Warning: Warning}, nil
}

// CheckCreate validates what a create body of a key or a principal names
// (orgId, a required UUID; name, required, at most MaxName once trimmed) into
// f, and answers the trimmed name.
func CheckCreate(f fault.Fields, orgID string, name *string) string {
	if orgID == "" {
		f.Add("orgId", "is required")
	} else {
		valid.UUID(f, "orgId", orgID)
	}
	if name == nil {
		f.Add("name", "is required")
		return ""
	}
	trimmed := strings.TrimSpace(*name)
	valid.Name(f, "name", trimmed, MaxName)
	return trimmed
}

// Get returns one key's metadata.
func (s *Service) Get(ctx context.Context, id string) (*Key, error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	k, err := s.key(ctx, p, id)
	if err != nil {
		return nil, err
	}
	keys := []Key{*k}
	if err := s.St.WithUsage(ctx, keys); err != nil {
		return nil, err
	}
	return &keys[0], nil
}

// Patch changes name, scopes or rate limit of an active key; the material stays.
func (s *Service) Patch(ctx context.Context, id string, in PatchInput) (*Key, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if restricted(p) {
		return nil, ErrKeyRestricted
	}
	c, err := checkPatch(in)
	if err != nil {
		return nil, err
	}
	if c.scopes != nil {
		if err := ceiling(p, *c.scopes); err != nil {
			return nil, err
		}
	}
	k, err := s.key(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := updatable(k, s.Clock.Now()); err != nil {
		return nil, err
	}
	sp, err := s.patchPrincipal(ctx, k, c)
	if err != nil {
		return nil, err
	}
	next := c.apply(k, clock.Format(s.Clock.Now()))
	if err := s.patchWrite(ctx, p, k, &next, sp, c.fields); err != nil {
		return nil, err
	}
	return s.Get(ctx, id)
}

// change is a validated PATCH: a nil field keeps the stored value; fields are
// the changed field names, in the audit entry's order.
type change struct {
	name      *string
	scopes    *[]string
	rateLimit *int
	fields    []string
}

// checkPatch validates a PATCH body into a change: field errors first, then
// an empty body is ErrNoUpdates.
func checkPatch(in PatchInput) (*change, error) {
	f := fault.Fields{}
	c := &change{}
	if c.name = valid.PatchName(f, in.Name, MaxName); c.name != nil {
		c.fields = append(c.fields, "name")
	}
	if sc := in.Scopes.NotNull(f, "scopes", "an array"); sc != nil {
		scopes := CheckScopes(f, "scopes", *sc)
		c.scopes, c.fields = &scopes, append(c.fields, "scopes")
	}
	if rl := in.RateLimit.NotNull(f, "rateLimit", "an integer"); rl != nil {
		valid.Range(f, "rateLimit", *rl, 1, MaxRateLimit)
		c.rateLimit, c.fields = rl, append(c.fields, "rateLimit")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if len(c.fields) == 0 {
		return nil, ErrNoUpdates
	}
	return c, nil
}

// patchPrincipal holds the active service principal a principal's key
// belongs to (nil for a user's key): the key never acts beyond its principal,
// and changes only while the principal is active (serialised on its version).
func (s *Service) patchPrincipal(ctx context.Context, k *Key, c *change) (*Hold, error) {
	if k.PrincipalID == "" {
		return nil, nil
	}
	sp, err := s.Owners.Hold(ctx, k.OrgID, k.PrincipalID)
	if err != nil {
		return nil, err
	}
	if c.scopes != nil && !within(*c.scopes, sp.Scopes) {
		return nil, ErrBeyondPrincipal
	}
	return sp, nil
}

// apply diffs the change onto the stored key k: the key after it.
func (c *change) apply(k *Key, now string) Key {
	next := *k
	if c.name != nil {
		next.Name = *c.name
	}
	if c.scopes != nil {
		next.Scopes = *c.scopes
	}
	if c.rateLimit != nil {
		next.RateLimit = *c.rateLimit
	}
	next.UpdatedAt = now
	return next
}

// patchWrite is the one transaction of a PATCH: the key as read (version),
// its guard settings, the principal's version when it has one, the audit entry.
func (s *Service) patchWrite(ctx context.Context, p *authz.Principal, k, next *Key, sp *Hold, changed []string) error {
	tx := (&store.Tx{}).Add(replaceWrite(next, k.Version), guardSettingsWrite(next))
	if sp != nil {
		tx.Add(sp.Write)
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.update",
		ResourceType: "api_key", ResourceID: k.ID, ResourceName: next.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "changed": changed, "scopesBefore": k.Scopes, "scopes": next.Scopes}}))
	err := s.St.St.Commit(ctx, tx)
	switch {
	case err == nil:
		return nil
	case failedAt(err, 0):
		return ErrConcurrent
	case sp != nil && failedAt(err, 2):
		return s.Owners.Lost(ctx, k.OrgID, k.PrincipalID)
	}
	return fmt.Errorf("update api key %s: %w", k.ID, err)
}

// Revoke soft-deletes a key: it stays listed as revoked and never works again.
func (s *Service) Revoke(ctx context.Context, id string) (*Key, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if restricted(p) {
		return nil, ErrKeyRestricted
	}
	k, err := s.key(ctx, p, id)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	// A kill switch (docs/decisions.md#kill-switches-always-win): a revocation
	// that lost its compare-and-swap to a rotation or PATCH of the key reads it
	// again and goes on (those move the version it swaps on, and cannot
	// commit after it); only a revocation by someone else ends it.
	for attempt := 1; ; attempt++ {
		if k.Status == StatusRevoked || (attempt > 1 && k.Status != StatusActive) {
			return nil, ErrAlreadyRevoked
		}
		tx := (&store.Tx{}).Add(revokeWrites(k, now)...)
		tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.revoke",
			ResourceType: "api_key", ResourceID: k.ID, ResourceName: k.Name,
			Details: map[string]any{"keyPrefix": k.KeyPrefix, "previousStatus": k.Status}}))
		err := s.St.St.Commit(ctx, tx)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConditionFailed) || attempt == revokeAttempts {
			return nil, fmt.Errorf("revoke api key %s: %w", id, err)
		}
		if k, err = s.St.Key(ctx, k.OrgID, k.ID); err != nil {
			return nil, fmt.Errorf("revoke api key %s: %w", id, err)
		}
	}
	k.Status, k.UpdatedAt = StatusRevoked, now
	return k, nil
}

// revokeAttempts bounds a revocation's re-reads: each loss is another
// request's rotation or PATCH of the same key.
const revokeAttempts = 4

// Rotate issues new material for an active key: the old key stops at once,
// usage restarts, the other attributes stay.
func (s *Service) Rotate(ctx context.Context, id string) (*Issued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if restricted(p) {
		return nil, ErrKeyRestricted
	}
	k, err := s.key(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if err := updatable(k, s.Clock.Now()); err != nil {
		return nil, err
	}
	// The key keeps its owner: a principal's key stays the principal's, a user's
	// keeps acting with what its creator holds (not the rotating caller). The
	// credential ceiling: the caller must hold what the key acts with, and its
	// owner must still be entitled to act (ceiling.go).
	var c *Creator
	var sp *Hold
	if k.PrincipalID == "" {
		g, err := s.St.Guard(ctx, k.KeyHash)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrConcurrent // rotated since it was read
		}
		if err != nil {
			return nil, err
		}
		c = g.Creator
		if err := s.rotatable(ctx, p, k, c); err != nil {
			return nil, err
		}
	} else {
		if sp, err = s.Owners.Hold(ctx, k.OrgID, k.PrincipalID); err != nil {
			return nil, err
		}
		if err := authz.Ceiling(p, authz.Acting(k.Scopes, authz.Acting(sp.Scopes, nil))); err != nil {
			return nil, err
		}
	}
	issued, err := s.rotateMaterial(k)
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(rotateWrites(k, issued.Key, c)...)
	if sp != nil {
		tx.Add(sp.Write)
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.rotate",
		ResourceType: "api_key", ResourceID: k.ID, ResourceName: k.Name,
		Details: map[string]any{"keyPrefix": issued.KeyPrefix, "previousKeyPrefix": k.KeyPrefix, "usageCount": 0}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) || failedAt(err, 1) {
			return nil, ErrConcurrent
		}
		if sp != nil && failedAt(err, 3) {
			return nil, s.Owners.Lost(ctx, k.OrgID, k.PrincipalID)
		}
		return nil, fmt.Errorf("rotate api key %s: %w", id, err)
	}
	return issued, nil
}

// Owned is what a service principal's new key takes from the principal.
type Owned struct {
	OrgID, PartnerID, PrincipalID, Name, CreatedBy string
	Scopes                                         []string
}

// OwnedKey is a new active key of principal o at time now, with the default
// rate limit, and its raw material (the caller commits CreateWrites).
func OwnedKey(o Owned, now string) (*Key, string, error) {
	raw, hash, prefix, err := NewMaterial()
	if err != nil {
		return nil, "", err
	}
	id := uuid.NewString()
	return &Key{Keys: recordKeys(o.OrgID, id), ID: id, OrgID: o.OrgID, PartnerID: o.PartnerID, Name: o.Name,
		KeyPrefix: prefix, KeyHash: hash, Scopes: o.Scopes, RateLimit: DefaultRateLimit, CreatedBy: o.CreatedBy,
		CreatedAt: now, UpdatedAt: now, Status: StatusActive, PrincipalID: o.PrincipalID, Version: 1}, raw, nil
}

// rotateMaterial returns k with new material (the caller commits it).
func (s *Service) rotateMaterial(k *Key) (*Issued, error) {
	raw, hash, prefix, err := NewMaterial()
	if err != nil {
		return nil, err
	}
	next := *k
	next.KeyHash, next.KeyPrefix, next.UpdatedAt = hash, prefix, clock.Format(s.Clock.Now())
	next.LastUsedAt, next.UsageCount = nil, 0
	return &Issued{Key: &next, Raw: raw, Warning: Warning}, nil
}

// revokeWrites revoke a key that is not revoked yet.
func revokeWrites(k *Key, now string) []*store.Write {
	ws := StatusWrites(k, StatusRevoked, now)
	ws[0].When(store.Is("version", k.Version))
	return ws
}

// updatable refuses changes to keys that are not active, and to a key past
// its expiresAt that no sweep or authentication has marked expired yet: its
// status is a lagging record of the time, and rotating it would hand out
// material that is dead on arrival (docs/decisions.md#api-keys).
func updatable(k *Key, now time.Time) error {
	switch {
	case k.Status == StatusRevoked:
		return ErrRevokedUpdate
	case k.Status == StatusExpired, Expired(k.ExpiresAt, now):
		return ErrExpiredUpdate
	}
	return nil
}

// authorize is the preamble of every route: a user session holding perm
// (API keys never manage keys).
func (s *Service) authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, perm, authz.NeedUserSession)
}

// restricted reports a site- or device-group-restricted caller.
func restricted(p *authz.Principal) bool { return len(p.SiteIDs) > 0 || len(p.DeviceGroupIDs) > 0 }

// org reads organization id, or ErrOrgNotFound when absent or out of reach.
func (s *Service) org(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error) {
	return s.Orgs.Reach(ctx, p, id)
}

// key reads key id if the caller can reach its organization.
func (s *Service) key(ctx context.Context, p *authz.Principal, id string) (*Key, error) {
	return tenant.Find(ctx, p, id, s.St.Key, s.St.KeyByID, ErrNotFound)
}

// membership reads the membership p acts through (nil for system scope
// without one).
func (s *Service) membership(ctx context.Context, p *authz.Principal) (*user.Membership, error) {
	k := user.MembershipKey(p.UserID, p.Scope, p.PartnerID, p.OrgID)
	var m user.Membership
	err := s.St.St.Get(ctx, k.PK, k.SK, &m)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return &m, err
}

// creator is the cache of what caller p holds, stored with a key it creates.
func (s *Service) creator(ctx context.Context, p *authz.Principal) (*Creator, error) {
	owner := role.SystemOwner
	m, err := s.membership(ctx, p)
	if err != nil {
		return nil, err
	}
	if m != nil {
		owner = m.RoleOwner
	}
	set, pins, err := s.Roles.Pinned(ctx, owner, p.RoleID)
	if err != nil {
		return nil, err
	}
	c := &Creator{UserID: p.UserID, Scope: string(p.Scope), PartnerID: p.PartnerID, OrgID: p.OrgID, RoleID: p.RoleID}
	for _, perm := range set.List() {
		c.Perms = append(c.Perms, perm.String())
	}
	slices.Sort(c.Perms)
	for _, pin := range pins {
		c.Pins = append(c.Pins, Pin{PK: pin.Key.PK, SK: pin.Key.SK, Version: pin.Version})
	}
	return c, nil
}

// CheckScopes validates scopes (a key's, or shared/principal's): "*" or
// resource:action, at most MaxScopes, without duplicates; it returns them
// sorted.
func CheckScopes(f fault.Fields, path string, in []string) []string {
	if len(in) > MaxScopes {
		f.Add(path, fmt.Sprintf("must hold at most %d scopes", MaxScopes))
		return nil
	}
	out := []string{}
	seen := map[string]bool{}
	for i, sc := range in {
		if sc != "*" {
			perm, ok := authz.Parse(sc)
			if !ok {
				f.Add(fmt.Sprintf("%s.%d", path, i), `must be "*" or resource:action`)
				continue
			}
			// A typo ("device:read") is named here, with the choices, rather
			// than refused by the ceiling as a scope the caller does not hold.
			if !knownScope(perm) {
				f.Addf(fmt.Sprintf("%s.%d", path, i), "unknown scope %q; valid scopes: %s", sc, strings.Join(validScopes(), ", "))
				continue
			}
		}
		if !seen[sc] {
			seen[sc] = true
			out = append(out, sc)
		}
	}
	slices.Sort(out)
	return out
}

// knownScope: a catalogue permission, or resource:* of a catalogue resource.
func knownScope(perm authz.Permission) bool {
	if authz.Known(perm) {
		return true
	}
	return perm.Action == "*" && slices.ContainsFunc(authz.Catalog, func(c authz.CatalogEntry) bool {
		return c.Resource == perm.Resource
	})
}

// validScopes lists what a key may be granted: "*", each catalogue
// permission, then each catalogue resource's resource:*.
func validScopes() []string {
	out := []string{"*"}
	var wild []string
	for _, c := range authz.Catalog {
		out = append(out, c.String())
		if w := c.Resource + ":*"; c.Resource != "*" && !slices.Contains(wild, w) {
			wild = append(wild, w)
		}
	}
	return append(out, wild...)
}

// ceiling refuses scopes the caller does not hold ("*" needs every
// permission): the credential ceiling of shared/authz, for grants.
func ceiling(p *authz.Principal, scopes []string) error { return authz.CeilingScopes(p, scopes) }

func failedAt(err error, i int) bool {
	var te *store.TxError
	return errors.As(err, &te) && te.FailedAt(i)
}

// Expired reports whether expiresAt has passed at now.
func Expired(expiresAt *string, now time.Time) bool {
	if expiresAt == nil {
		return false
	}
	t, err := time.Parse(time.RFC3339Nano, *expiresAt)
	return err == nil && !t.After(now)
}
