package principal

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Service holds the principal rules; its keys are apikey's.
type Service struct {
	St    Store
	Keys  *apikey.Service
	Orgs  apikey.Orgs
	Clock clock.Clock
}

// Input is the create body.
type Input struct {
	OrgID  string    `json:"orgId"`
	Name   *string   `json:"name"`
	Scopes *[]string `json:"scopes"`
}

// MigrateInput is the migrate-key body.
type MigrateInput struct {
	KeyID *string `json:"keyId"`
}

// List returns one page of the principals the caller can see, newest first
// (ties by id): tenant.List over the principal list indexes, the status
// filter and reach applied to the index rows.
func (s *Service) List(ctx context.Context, f apikey.ListFilter) (*tenant.Page[Principal], error) {
	p, err := authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.Status != "" {
		valid.OneOf(fe, "status", f.Status, Active, Disabled)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return tenant.List(ctx, p, tenant.Listing[Principal]{St: s.St.St, Orgs: s.Orgs, Name: "PRINCIPALS",
		OrgPK: OrgListPK, PartnerPK: PartnerListPK, Descending: true, OrgWide: true},
		tenant.ListQuery[Principal]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor, Filtered: f.Status != "",
			Keep: func(sp *Principal) bool {
				return f.Status == "" || sp.Status == f.Status
			}})
}

// Create creates a principal and mints its first key.
func (s *Service) Create(ctx context.Context, in Input) (*Issued, error) {
	p, err := authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := apikey.CheckCreate(f, in.OrgID, in.Name)
	var scopes []string
	if in.Scopes == nil {
		f.Add("scopes", "is required")
	} else {
		scopes = apikey.CheckScopes(f, "scopes", *in.Scopes)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := authz.CeilingScopes(p, scopes); err != nil {
		return nil, err
	}
	o, err := s.Orgs.Reach(ctx, p, in.OrgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	sp := &Principal{ID: uuid.NewString(), OrgID: o.ID, PartnerID: o.PartnerID, Name: name, Scopes: scopes,
		Status: Active, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now, Version: 1}
	sp.Keys = rowKeys(o.ID, sp.ID)
	k, raw, err := newKey(sp, now)
	if err != nil {
		return nil, err
	}
	sp.APIKeyID = k.ID
	tx := (&store.Tx{}).Add(put(sp)).Add(apikey.CreateWrites(k, nil)...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.create",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "scopes": scopes, "apiKeyId": k.ID}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create service principal: %w", err)
	}
	return &Issued{Principal: sp, Raw: raw, KeyPrefix: k.KeyPrefix, Warning: apikey.Warning}, nil
}

// newKey is a new key owned by sp, with sp's name and scopes.
func newKey(sp *Principal, now string) (*apikey.Key, string, error) {
	return apikey.OwnedKey(apikey.Owned{OrgID: sp.OrgID, PartnerID: sp.PartnerID, PrincipalID: sp.ID, Name: sp.Name,
		Scopes: sp.Scopes, CreatedBy: sp.CreatedBy}, now)
}

// Get returns one principal.
func (s *Service) Get(ctx context.Context, id string) (*Principal, error) {
	p, err := authorize(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	return s.find(ctx, p, id)
}

// Rotate mints a new key for the principal and revokes its current one, in
// one step.
func (s *Service) Rotate(ctx context.Context, id string) (*Rotated, error) {
	p, err := authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	sp, err := s.find(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sp.Status != Active {
		return nil, ErrDisabled
	}
	if err := authz.CeilingScopes(p, sp.Scopes); err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	next := *sp
	k, raw, err := newKey(&next, now)
	if err != nil {
		return nil, err
	}
	next.APIKeyID, next.UpdatedAt = k.ID, now
	tx := (&store.Tx{}).Add(replace(&next, sp.Version)).Add(apikey.CreateWrites(k, nil)...)
	if old, err := s.Keys.St.Key(ctx, sp.OrgID, sp.APIKeyID); err == nil && old.Status == apikey.StatusActive {
		tx.Add(apikey.StatusWrites(old, apikey.StatusRevoked, now)...)
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.rotate_key",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "apiKeyId": k.ID, "previousApiKeyId": sp.APIKeyID}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return nil, s.St.Lost(ctx, sp.OrgID, sp.ID)
		}
		return nil, fmt.Errorf("rotate service principal %s: %w", id, err)
	}
	return &Rotated{APIKeyID: k.ID, Raw: raw, KeyPrefix: k.KeyPrefix, Warning: apikey.Warning}, nil
}

// Disable disables the principal and revokes every active key it owns.
// Disabled is final. It is a kill switch
// (docs/decisions.md#kill-switches-always-win): the principal's state moves by
// one write that checks nothing but the row's existence, so no rotation or
// migration beside it makes it lose, and it bumps the version those
// compare-and-swap on, so none that read the principal before can commit after
// it. Key authentication reads the principal's state, so from this write on
// none of its keys authenticates; the key rows are then revoked in batches
// (apikey's RevokeAll), whatever their number. A repeated disable answers 200
// and revokes what a first one left (a crash between the two steps, a key that
// kept changing under it).
func (s *Service) Disable(ctx context.Context, id string) (*Principal, error) {
	p, err := authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	sp, err := s.find(ctx, p, id)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	if sp.Status == Active {
		tx := (&store.Tx{}).Add(disableWrite(sp, now),
			audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.disable",
				ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name}))
		if err := s.St.St.Commit(ctx, tx); err != nil {
			if errors.Is(err, store.ErrConditionFailed) {
				return nil, ErrNotFound // deleted with its organization meanwhile
			}
			return nil, fmt.Errorf("disable service principal %s: %w", id, err)
		}
		sp.Status, sp.UpdatedAt, sp.Version = Disabled, now, sp.Version+1
	}
	keys, err := s.Keys.St.OrgKeys(ctx, sp.OrgID)
	if err != nil {
		return nil, err
	}
	var owned []*apikey.Key
	for i := range keys {
		if keys[i].PrincipalID == sp.ID && keys[i].Status == apikey.StatusActive {
			owned = append(owned, &keys[i])
		}
	}
	if _, err := s.Keys.RevokeAll(ctx, p.Actor(), owned, "principal_disabled", func(k *apikey.Key) bool { return k.PrincipalID == sp.ID }); err != nil {
		return nil, fmt.Errorf("revoke the keys of disabled service principal %s: %w", id, err)
	}
	return sp, nil
}

// MigrateKey re-points an API key of the principal's organization to the
// principal; its scopes become the intersection of its own and the
// principal's, and it no longer depends on its creator.
func (s *Service) MigrateKey(ctx context.Context, id string, in MigrateInput) (*apikey.Key, error) {
	p, err := authorize(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if in.KeyID == nil {
		f.Add("keyId", "is required")
	} else {
		valid.UUID(f, "keyId", *in.KeyID)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	sp, err := s.find(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sp.Status != Active {
		return nil, ErrDisabled
	}
	k, err := s.adoptable(ctx, p, sp, *in.KeyID)
	if err != nil {
		return nil, err
	}
	scopes := intersect(k.Scopes, sp.Scopes)
	if err := authz.CeilingScopes(p, scopes); err != nil {
		return nil, err
	}
	next := *k
	next.PrincipalID, next.Scopes, next.UpdatedAt = sp.ID, scopes, clock.Format(s.Clock.Now())
	// The principal's version moves with the migration, so a disable that read
	// the principal's keys before it cannot commit after it (and miss this key).
	tx := (&store.Tx{}).Add(apikey.AdoptWrites(&next, k.Version)...).Add(bump(sp))
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.migrate_key",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "apiKeyId": k.ID, "scopesBefore": k.Scopes, "scopes": scopes}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return nil, apikey.ErrConcurrent
		}
		if failedAt(err, 2) {
			return nil, s.St.Lost(ctx, sp.OrgID, sp.ID)
		}
		return nil, fmt.Errorf("migrate api key %s: %w", k.ID, err)
	}
	return s.Keys.Get(ctx, k.ID)
}

// adoptable reads key keyID for migration to sp: an active user-created key
// of sp's organization the caller reaches.
func (s *Service) adoptable(ctx context.Context, p *authz.Principal, sp *Principal, keyID string) (*apikey.Key, error) {
	k, err := tenant.Find(ctx, p, keyID, s.Keys.St.Key, s.Keys.St.KeyByID, apikey.ErrNotFound)
	if errors.Is(err, apikey.ErrNotFound) {
		return nil, ErrKeyOtherOrg
	}
	if err != nil {
		return nil, err
	}
	switch {
	case k.OrgID != sp.OrgID:
		return nil, ErrKeyOtherOrg
	case k.Status != apikey.StatusActive:
		return nil, ErrKeyNotActive
	case k.PrincipalID == sp.ID:
		return nil, ErrOwnedAlready
	case k.PrincipalID != "":
		// The spec's migrate adopts a user-created key; a principal's key
		// never moves to another principal.
		return nil, ErrKeyNotUserCreated
	}
	return k, nil
}

// intersect returns the scopes of a that b allows ("*" in b allows all; "*" in
// a is narrowed to b's).
func intersect(a, b []string) []string {
	switch {
	case slices.Contains(b, "*"):
		return slices.Clone(a)
	case slices.Contains(a, "*"):
		return slices.Clone(b)
	}
	out := []string{}
	for _, sc := range a {
		if slices.Contains(b, sc) {
			out = append(out, sc)
		}
	}
	return out
}

// authorize is the preamble of every route: a user session holding perm (API
// keys never manage principals), not restricted to sites or device groups.
func authorize(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	p, err := authz.RequireTenant(ctx, perm, authz.NeedUserSession)
	if err != nil {
		return nil, err
	}
	if len(p.SiteIDs) > 0 || len(p.DeviceGroupIDs) > 0 {
		return nil, ErrRestricted
	}
	return p, nil
}

// find reads principal id if the caller can reach its organization.
func (s *Service) find(ctx context.Context, p *authz.Principal, id string) (*Principal, error) {
	return tenant.Find(ctx, p, id, s.St.Principal, s.St.ByID, ErrNotFound)
}

// failedAt reports whether write i of a cancelled transaction failed its condition.
func failedAt(err error, i int) bool {
	var te *store.TxError
	return errors.As(err, &te) && te.FailedAt(i)
}
