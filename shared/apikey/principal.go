package apikey

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
	"github.com/gale-rmm/gale/shared/valid"
)

// PrincipalInput is the create body.
type PrincipalInput struct {
	OrgID  string    `json:"orgId"`
	Name   *string   `json:"name"`
	Scopes *[]string `json:"scopes"`
}

// MigrateInput is the migrate-key body.
type MigrateInput struct {
	KeyID *string `json:"keyId"`
}

// Principals returns one page of the principals the caller can see, newest
// first (ties by id): tenant.List over the principal list indexes, the status
// filter and reach applied to the index rows.
func (s *Service) Principals(ctx context.Context, f ListFilter) (*tenant.Page[Principal], error) {
	p, err := s.authorizeSP(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.Status != "" {
		valid.OneOf(fe, "status", f.Status, SPActive, SPDisabled)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	return tenant.List(ctx, p, tenant.Listing[Principal]{St: s.St.St, Orgs: s.Orgs, Name: "PRINCIPALS",
		OrgPK: PrincipalOrgListPK, PartnerPK: PrincipalPartnerListPK, Descending: true, OrgWide: true},
		tenant.ListQuery[Principal]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor, Filtered: f.Status != "",
			Keep: func(sp *Principal) bool {
				return f.Status == "" || sp.Status == f.Status
			}})
}

// CreatePrincipal creates a principal and mints its first key.
func (s *Service) CreatePrincipal(ctx context.Context, in PrincipalInput) (*PrincipalIssued, error) {
	p, err := s.authorizeSP(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if in.OrgID == "" {
		f.Add("orgId", "is required")
	} else {
		valid.UUID(f, "orgId", in.OrgID)
	}
	name := ""
	if in.Name == nil {
		f.Add("name", "is required")
	} else {
		name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", name, MaxName)
	}
	var scopes []string
	if in.Scopes == nil {
		f.Add("scopes", "is required")
	} else {
		scopes = checkScopes(f, "scopes", *in.Scopes)
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
	now := clock.Format(s.Clock.Now())
	sp := &Principal{ID: uuid.NewString(), OrgID: o.ID, PartnerID: o.PartnerID, Name: name, Scopes: scopes,
		Status: SPActive, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now, Version: 1}
	sp.Keys = principalKeys(o.ID, sp.ID)
	k, raw, err := s.principalKey(sp, now)
	if err != nil {
		return nil, err
	}
	sp.APIKeyID = k.ID
	tx := (&store.Tx{}).Add(putPrincipal(sp)).Add(createWrites(k, nil)...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.create",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "scopes": scopes, "apiKeyId": k.ID}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create service principal: %w", err)
	}
	return &PrincipalIssued{Principal: sp, Raw: raw, KeyPrefix: k.KeyPrefix, Warning: Warning}, nil
}

// principalKey is a new key owned by sp, with sp's scopes.
func (s *Service) principalKey(sp *Principal, now string) (*Key, string, error) {
	raw, hash, prefix, err := NewMaterial()
	if err != nil {
		return nil, "", err
	}
	id := uuid.NewString()
	return &Key{Keys: recordKeys(sp.OrgID, id), ID: id, OrgID: sp.OrgID, PartnerID: sp.PartnerID, Name: sp.Name,
		KeyPrefix: prefix, KeyHash: hash, Scopes: sp.Scopes, RateLimit: DefaultRateLimit, CreatedBy: sp.CreatedBy,
		CreatedAt: now, UpdatedAt: now, Status: StatusActive, PrincipalID: sp.ID, Version: 1}, raw, nil
}

// GetPrincipal returns one principal.
func (s *Service) GetPrincipal(ctx context.Context, id string) (*Principal, error) {
	p, err := s.authorizeSP(ctx, authz.OrgsRead)
	if err != nil {
		return nil, err
	}
	return s.principal(ctx, p, id)
}

// RotatePrincipal mints a new key for the principal and revokes its current
// one, in one step.
func (s *Service) RotatePrincipal(ctx context.Context, id string) (*Rotated, error) {
	p, err := s.authorizeSP(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	sp, err := s.principal(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sp.Status != SPActive {
		return nil, ErrSPDisabled
	}
	if err := ceiling(p, sp.Scopes); err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	next := *sp
	k, raw, err := s.principalKey(&next, now)
	if err != nil {
		return nil, err
	}
	next.APIKeyID, next.UpdatedAt = k.ID, now
	tx := (&store.Tx{}).Add(replacePrincipal(&next, sp.Version)).Add(createWrites(k, nil)...)
	if old, err := s.St.Key(ctx, sp.OrgID, sp.APIKeyID); err == nil && old.Status == StatusActive {
		tx.Add(statusWrites(old, StatusRevoked, now)...)
	} else if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.rotate_key",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "apiKeyId": k.ID, "previousApiKeyId": sp.APIKeyID}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return nil, s.principalConflict(ctx, sp)
		}
		return nil, fmt.Errorf("rotate service principal %s: %w", id, err)
	}
	return &Rotated{APIKeyID: k.ID, Raw: raw, KeyPrefix: k.KeyPrefix, Warning: Warning}, nil
}

// DisablePrincipal disables the principal and revokes every active key it
// owns. Disabled is final. It is a kill switch
// (docs/decisions.md#kill-switches-always-win): the principal's state moves by
// one write that checks nothing but the row's existence, so no rotation or
// migration beside it makes it lose, and it bumps the version those
// compare-and-swap on, so none that read the principal before can commit after
// it. Key authentication reads the principal's state, so from this write on
// none of its keys authenticates; the key rows are then revoked in batches
// (revokeAll), whatever their number. A repeated disable answers 200 and
// revokes what a first one left (a crash between the two steps, a key that kept
// changing under it).
func (s *Service) DisablePrincipal(ctx context.Context, id string) (*Principal, error) {
	p, err := s.authorizeSP(ctx, authz.OrgsWrite)
	if err != nil {
		return nil, err
	}
	sp, err := s.principal(ctx, p, id)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	if sp.Status == SPActive {
		tx := (&store.Tx{}).Add(disablePrincipalWrite(sp, now),
			audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.disable",
				ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name}))
		if err := s.St.St.Commit(ctx, tx); err != nil {
			if errors.Is(err, store.ErrConditionFailed) {
				return nil, ErrSPNotFound // deleted with its organization meanwhile
			}
			return nil, fmt.Errorf("disable service principal %s: %w", id, err)
		}
		sp.Status, sp.UpdatedAt, sp.Version = SPDisabled, now, sp.Version+1
	}
	keys, err := s.St.OrgKeys(ctx, sp.OrgID)
	if err != nil {
		return nil, err
	}
	var owned []*Key
	for i := range keys {
		if keys[i].PrincipalID == sp.ID && keys[i].Status == StatusActive {
			owned = append(owned, &keys[i])
		}
	}
	if _, err := s.revokeAll(ctx, p.Actor(), owned, "principal_disabled", func(k *Key) bool { return k.PrincipalID == sp.ID }); err != nil {
		return nil, fmt.Errorf("revoke the keys of disabled service principal %s: %w", id, err)
	}
	return sp, nil
}

// MigrateKey re-points an API key of the principal's organization to the
// principal; its scopes become the intersection of its own and the
// principal's, and it no longer depends on its creator.
func (s *Service) MigrateKey(ctx context.Context, id string, in MigrateInput) (*Key, error) {
	p, err := s.authorizeSP(ctx, authz.OrgsWrite)
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
	sp, err := s.principal(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if sp.Status != SPActive {
		return nil, ErrSPDisabled
	}
	k, err := s.key(ctx, p, *in.KeyID)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrKeyOtherOrg
	}
	if err != nil {
		return nil, err
	}
	switch {
	case k.OrgID != sp.OrgID:
		return nil, ErrKeyOtherOrg
	case k.Status != StatusActive:
		return nil, ErrKeyNotActive
	case k.PrincipalID == sp.ID:
		return nil, ErrOwnedAlready
	case k.PrincipalID != "":
		// The spec's migrate adopts a user-created key; a principal's key
		// never moves to another principal.
		return nil, ErrKeyNotUserCreated
	}
	scopes := intersect(k.Scopes, sp.Scopes)
	if err := ceiling(p, scopes); err != nil {
		return nil, err
	}
	next := *k
	next.PrincipalID, next.Scopes, next.UpdatedAt = sp.ID, scopes, clock.Format(s.Clock.Now())
	// The principal's version moves with the migration, so a disable that read
	// the principal's keys before it cannot commit after it (and miss this key).
	tx := (&store.Tx{}).Add(replaceWrite(&next, k.Version), guardSettingsWrite(&next), bumpPrincipal(sp))
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: sp.OrgID, PartnerID: sp.PartnerID, Action: "service_principal.migrate_key",
		ResourceType: "service_principal", ResourceID: sp.ID, ResourceName: sp.Name,
		Details: map[string]any{"keyPrefix": k.KeyPrefix, "apiKeyId": k.ID, "scopesBefore": k.Scopes, "scopes": scopes}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if failedAt(err, 0) {
			return nil, ErrConcurrent
		}
		if failedAt(err, 2) {
			return nil, s.principalConflict(ctx, sp)
		}
		return nil, fmt.Errorf("migrate api key %s: %w", k.ID, err)
	}
	return s.Get(ctx, k.ID)
}

// principalConflict names why a principal write lost its compare-and-swap.
func (s *Service) principalConflict(ctx context.Context, sp *Principal) error {
	cur, err := s.St.Principal(ctx, sp.OrgID, sp.ID)
	if err == nil && cur.Status != SPActive {
		return ErrSPDisabled
	}
	return ErrSPConcurrent
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

// authorizeSP is authorize for the principal routes, which also refuse
// site- and device-group-restricted users explicitly.
func (s *Service) authorizeSP(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	p, err := s.authorize(ctx, perm)
	if err != nil {
		return nil, err
	}
	if restricted(p) {
		return nil, ErrSPRestricted
	}
	return p, nil
}

// principal reads principal id if the caller can reach its organization.
func (s *Service) principal(ctx context.Context, p *authz.Principal, id string) (*Principal, error) {
	return tenant.Find(ctx, p, id, s.St.Principal, s.St.PrincipalByID, ErrSPNotFound)
}
