// Package enforce is the one row of single sign-on that sign-in reads: an
// organization's active provider (ORG#<id> / SSOACTIVE). shared/sso writes it in
// the same transaction as every change that makes a provider active, renames
// it, changes its enforceSSO or takes it out of service; password sign-in
// (shared/signin, through its SSOPolicy) and GET /sso/check read it with one
// GetItem. It is its own package so that the sign-in functions do not link the
// OpenID Connect libraries.
package enforce

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/store"
)

// Active is a tenant's active provider: at most one per organization and one
// per partner (a partner's own provider, PARTNER#<id> / SSOACTIVE, with OrgID
// ""; it never enforces SSO).
type Active struct {
	store.Keys
	ProviderID string `dynamodbav:"providerId"`
	OrgID      string `dynamodbav:"orgId"`
	PartnerID  string `dynamodbav:"partnerId,omitempty"`
	Name       string `dynamodbav:"name"`
	Type       string `dynamodbav:"type"`
	EnforceSSO bool   `dynamodbav:"enforceSso"`
}

// KeyOf is the key of the active-provider row of the tenant whose partition
// is pk (ORG#<id> or PARTNER#<id>).
func KeyOf(pk string) store.KeyRef { return store.KeyRef{PK: pk, SK: "SSOACTIVE"} }

// Store reads the row.
type Store struct{ St *store.Store }

// Active returns orgID's active provider, or nil when it has none.
func (s Store) Active(ctx context.Context, orgID string) (*Active, error) {
	return s.ActiveOf(ctx, store.OrgPK(orgID))
}

// ActiveOf returns the active provider of the tenant whose partition is pk,
// or nil when it has none.
func (s Store) ActiveOf(ctx context.Context, pk string) (*Active, error) {
	var a Active
	k := KeyOf(pk)
	err := s.St.Get(ctx, k.PK, k.SK, &a)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("active SSO provider of %s: %w", pk, err)
	}
	return &a, nil
}

// Enforced reports whether orgID's active provider disables password login
// (signin.SSOPolicy).
func (s Store) Enforced(ctx context.Context, orgID string) (bool, error) {
	a, err := s.Active(ctx, orgID)
	if err != nil || a == nil {
		return false, err
	}
	return a.EnforceSSO, nil
}
