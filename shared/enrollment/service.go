package enrollment

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Orgs reads organizations; tenant.Store satisfies it.
type Orgs interface{ tenant.ListOrgs }

// Service holds the enrollment-key rules.
type Service struct {
	St    Store
	Orgs  Orgs
	Clock clock.Clock
	// Pepper is config.EnrollPepper; DefaultTTL is ENROLLMENT_KEY_DEFAULT_TTL_MINUTES.
	Pepper     []byte
	DefaultTTL time.Duration
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID     string         `json:"orgId"`
	SiteID    *string        `json:"siteId"`
	Name      *string        `json:"name"`
	MaxUsage  valid.Opt[int] `json:"maxUsage"`
	ExpiresAt *string        `json:"expiresAt"`
}

// RotateInput is the rotate body: every field optional; maxUsage null means
// unlimited, an omitted field keeps its value.
type RotateInput struct {
	MaxUsage  valid.Opt[int] `json:"maxUsage"`
	ExpiresAt *string        `json:"expiresAt"`
}

// ListFilter is the list query: filters, and page and limit or the cursor of
// the page before (the fast path for deep pages; it wins over page).
type ListFilter struct {
	OrgID       string
	Expired     *bool
	Page, Limit int
	Cursor      string
}

// List returns one page of the keys the caller can see, newest first (ties
// by id): tenant.List over the enrollment key list indexes, the site
// restriction, reach and the expired filter (expiresAt is projected; compared
// with the time of the request) applied to the index rows.
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Key], error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if f.OrgID != "" && !valid.IsUUID(f.OrgID) {
		return nil, fault.Invalid("orgId", "must be a UUID")
	}
	now := clock.Format(s.Clock.Now())
	return tenant.List(ctx, p, tenant.Listing[Key]{St: s.St.St, Orgs: s.Orgs, Name: "EKEYS",
		OrgPK: OrgListPK, PartnerPK: PartnerListPK, Descending: true},
		tenant.ListQuery[Key]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor, Filtered: f.Expired != nil,
			Keep: func(k *Key) bool {
				return siteVisible(p, k.SiteID) && (f.Expired == nil || *f.Expired == (k.ExpiresAt <= now))
			}})
}

// Create issues a key in an organization the caller can reach.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Issued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	k, err := s.validateCreate(p, in, now)
	if err != nil {
		return nil, err
	}
	if p.SiteRestricted() && (in.SiteID == nil || !p.CanAccessSite(*in.SiteID)) {
		return nil, ErrSiteRequired
	}
	if p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0 {
		return nil, ErrGroupRestricted
	}
	if err := authz.CeilingScopes(p, Acts); err != nil {
		return nil, err
	}
	o, err := s.Orgs.Reach(ctx, p, k.OrgID)
	if err != nil {
		return nil, err
	}
	raw, err := NewRaw()
	if err != nil {
		return nil, err
	}
	ts := clock.Format(now)
	k.ID, k.OrgID, k.PartnerID, k.CreatedBy, k.CreatedAt, k.UpdatedAt = uuid.NewString(), o.ID, o.PartnerID, p.UserID, ts, ts
	k.KeyHash = Hash(s.Pepper, raw)
	k.Keys = KeyKeys(k.OrgID, k.ID, k.ExpiresAt)
	tx, siteAt := s.createTx(p, k, raw)
	if err := s.St.Commit(ctx, tx); err != nil {
		if siteAt >= 0 && failedAt(err, siteAt) {
			return nil, ErrSite
		}
		return nil, fmt.Errorf("create enrollment key: %w", err)
	}
	return &Issued{Key: k, Raw: raw}, nil
}

// validateCreate answers the key in asks p for at now (its organization as
// named, not yet reached; no id, owner or times), or the fields at fault.
func (s *Service) validateCreate(p *authz.Principal, in CreateInput, now time.Time) (*Key, error) {
	f := fault.Fields{}
	k := &Key{OrgID: in.OrgID, SiteID: in.SiteID}
	switch {
	case k.OrgID == "" && p.Scope == authz.ScopeOrg:
		k.OrgID = p.OrgID
	case k.OrgID == "":
		f.Add("orgId", "is required for partner and system scope")
	case !valid.IsUUID(k.OrgID):
		f.Add("orgId", "must be a UUID")
	}
	if in.SiteID != nil {
		valid.UUID(f, "siteId", *in.SiteID)
	}
	if in.Name == nil {
		f.Add("name", "is required")
	} else {
		k.Name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", k.Name, MaxName)
	}
	maxUsage := DefaultUsage
	switch {
	case in.MaxUsage.Bad:
		f.Add("maxUsage", "must be an integer or null")
	case in.MaxUsage.Set && in.MaxUsage.Value == nil:
		f.Add("maxUsage", "may be null (unlimited) only on rotation")
	case in.MaxUsage.Set:
		maxUsage = *in.MaxUsage.Value
		valid.Range(f, "maxUsage", maxUsage, MinUsage, MaxUsage)
	}
	k.MaxUsage = &maxUsage
	expires := now.Add(s.DefaultTTL)
	if in.ExpiresAt != nil {
		expires = futureTime(f, "expiresAt", *in.ExpiresAt, now)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	k.ExpiresAt = clock.Format(expires)
	return k, nil
}

// createTx is the creation's one transaction: the key's rows, its site's
// presence when it names one (at the position it answers, else -1), the
// audit record.
func (s *Service) createTx(p *authz.Principal, k *Key, raw string) (*store.Tx, int) {
	tx := (&store.Tx{}).Add(createWrites(k)...)
	siteAt := -1
	if k.SiteID != nil {
		sk := tenant.SiteKeys(k.OrgID, *k.SiteID)
		siteAt = tx.Len()
		tx.Add(siteExists(sk.PK, sk.SK))
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, Action: "enrollment_key.create",
		ResourceType: "enrollment_key", ResourceID: k.ID, ResourceName: k.Name,
		Details: map[string]any{"keyPrefix": prefix(raw), "maxUsage": *k.MaxUsage, "expiresAt": k.ExpiresAt, "siteId": k.SiteID}}))
	return tx, siteAt
}

// Get returns key id.
func (s *Service) Get(ctx context.Context, id string) (*Key, error) {
	p, err := s.authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	return s.key(ctx, p, id)
}

// Rotate replaces key id's material in place and resets its usage.
func (s *Service) Rotate(ctx context.Context, id string, in RotateInput) (*Issued, error) {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	f := fault.Fields{}
	switch {
	case in.MaxUsage.Bad:
		f.Add("maxUsage", "must be an integer or null")
	case in.MaxUsage.Value != nil:
		valid.Range(f, "maxUsage", *in.MaxUsage.Value, MinUsage, MaxUsage)
	}
	var expires time.Time
	if in.ExpiresAt != nil {
		expires = futureTime(f, "expiresAt", *in.ExpiresAt, now)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	old, err := s.key(ctx, p, id)
	if err != nil {
		return nil, err
	}
	// The ceiling, and the restrictions of create: new material enrols as
	// widely as the key does.
	if p.Scope == authz.ScopeOrg && len(p.DeviceGroupIDs) > 0 {
		return nil, ErrGroupRestricted
	}
	if p.SiteRestricted() && (old.SiteID == nil || !p.CanAccessSite(*old.SiteID)) {
		return nil, ErrSiteRequired
	}
	if err := authz.CeilingScopes(p, Acts); err != nil {
		return nil, err
	}
	raw, err := NewRaw()
	if err != nil {
		return nil, err
	}
	next := *old
	next.UsageCount = 0
	next.KeyHash = Hash(s.Pepper, raw)
	next.UpdatedAt = clock.Format(now)
	if in.MaxUsage.Set {
		next.MaxUsage = in.MaxUsage.Value
	}
	if in.ExpiresAt != nil {
		next.ExpiresAt = clock.Format(expires)
	}
	next.Keys = KeyKeys(next.OrgID, next.ID, next.ExpiresAt)
	details := map[string]any{"keyPrefix": prefix(raw), "previousUsageCount": old.UsageCount, "maxUsage": next.MaxUsage}
	if next.ExpiresAt != old.ExpiresAt {
		details["expiresAt"] = map[string]string{"from": old.ExpiresAt, "to": next.ExpiresAt}
	}
	tx := (&store.Tx{}).Add(rotateWrites(old, &next)...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: next.OrgID, Action: "enrollment_key.rotate",
		ResourceType: "enrollment_key", ResourceID: next.ID, ResourceName: next.Name, Details: details}))
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("rotate enrollment key %s: %w", id, err)
	}
	return &Issued{Key: &next, Raw: raw}, nil
}

// Delete removes key id for good.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, err := s.authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return err
	}
	if err := valid.PathID("id", id); err != nil {
		return err
	}
	k, err := s.key(ctx, p, id)
	if err != nil {
		return err
	}
	tx := (&store.Tx{}).Add(deleteWrites(k)...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: k.OrgID, Action: "enrollment_key.delete",
		ResourceType: "enrollment_key", ResourceID: k.ID, ResourceName: k.Name,
		Details: map[string]any{"usageCount": k.UsageCount}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return ErrNotFound
		}
		return fmt.Errorf("delete enrollment key %s: %w", id, err)
	}
	return nil
}

// Purge deletes keys that expired more than PurgeAfter seconds ago (the
// sweeper's enrollment-key-expiry job), at most 25 per transaction round; it
// returns how many it deleted. A key deleted or rotated meanwhile is skipped.
func (s *Service) Purge(ctx context.Context) (int, error) {
	// Strictly more than PurgeAfter ago: the bound itself is kept.
	cutoff := clock.Format(s.Clock.Now().Add(-PurgeAfter*time.Second - time.Millisecond))
	n := 0
	for {
		keys, err := s.St.ExpiredBefore(ctx, cutoff, 25)
		if err != nil {
			return n, err
		}
		if len(keys) == 0 {
			return n, nil
		}
		done := 0
		for _, k := range keys {
			tx := (&store.Tx{}).Add(deleteWrites(&k)...)
			tx.Add(audit.Put(s.Clock, audit.Entry{Actor: audit.SystemActor, OrgID: k.OrgID, Action: "enrollment_key.purge",
				ResourceType: "enrollment_key", ResourceID: k.ID, ResourceName: k.Name,
				Details: map[string]any{"expiresAt": k.ExpiresAt, "usageCount": k.UsageCount}}))
			err := s.St.Commit(ctx, tx)
			switch {
			case err == nil:
				n++
				done++
			case failedAt(err, 0):
				// Gone or rotated since the index was read: nothing to purge.
			default:
				return n, fmt.Errorf("purge enrollment key %s: %w", k.ID, err)
			}
		}
		if len(keys) < 25 || done == 0 {
			return n, nil
		}
	}
}

// authorize is the preamble of every route: a user session holding perm.
func (s *Service) authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, perm, authz.NeedUserSession)
}

// key reads key id and checks that the caller can see it.
func (s *Service) key(ctx context.Context, p *authz.Principal, id string) (*Key, error) {
	k, err := tenant.Find(ctx, p, id, s.St.Key, s.St.KeyByID, ErrNotFound)
	if err != nil {
		return nil, err
	}
	if !siteVisible(p, k.SiteID) {
		return nil, ErrNotFound
	}
	return k, nil
}

func siteVisible(p *authz.Principal, siteID *string) bool {
	if siteID == nil {
		return p.CanAccessSite("")
	}
	return p.CanAccessSite(*siteID)
}

// futureTime parses an RFC 3339 time that must lie after now.
func futureTime(f fault.Fields, path, s string, now time.Time) time.Time {
	before := len(f[path])
	t := valid.Time(f, path, s)
	switch {
	case len(f[path]) != before:
	case !t.After(now):
		f.Add(path, "must be in the future")
	case t.After(now.Add(MaxLifetime)):
		f.Add(path, "must be at most 365 days ahead")
	}
	return t
}

// MaxLifetime bounds expiresAt (at most 365 days ahead:
// docs/decisions.md#enrollment-key-lifetime).
const MaxLifetime = 365 * 24 * time.Hour

// Acts is what an enrollment key acts with: it creates devices in its
// organization (and site). Create and rotate apply the credential ceiling
// (authz.Ceiling) to it: the caller must hold devices:write now.
var Acts = []string{authz.DevicesWrite.String()}
