package sso

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/sso/enforce"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// Key is a provider's key.
func Key(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: "SSOPROV#" + id, GSI1PK: "SSOPROVREF#" + id, GSI1SK: "SSOPROV"}
}

// normIssuer is the issuer as the pair guard compares it.
func normIssuer(issuer string) string { return strings.TrimRight(strings.ToLower(issuer), "/") }

func clientKey(issuer, clientID string) store.KeyRef {
	return store.KeyRef{PK: "SSOCLIENT#" + hash(normIssuer(issuer)+"\n"+clientID), SK: "SSOCLIENT"}
}

func loginKey(state string) store.KeyRef {
	return store.KeyRef{PK: "SSOLOGIN#" + hash(state), SK: "SSOLOGIN"}
}

func codeKey(code string) store.KeyRef {
	return store.KeyRef{PK: "SSOCODE#" + hash(code), SK: "SSOCODE"}
}

func identityKey(providerID, sub string) store.KeyRef {
	return store.KeyRef{PK: "SSOIDENT#" + providerID, SK: "SUB#" + hash(sub)}
}

// clientGuard reserves an (issuer, clientId) pair for a provider.
type clientGuard struct {
	store.Keys
	ProviderID string `dynamodbav:"providerId"`
}

// loginSession is a login in flight.
type loginSession struct {
	store.Keys
	ProviderID string `dynamodbav:"providerId"`
	OrgID      string `dynamodbav:"orgId"`
	Nonce      string `dynamodbav:"nonce"`    // sealed
	Verifier   string `dynamodbav:"verifier"` // sealed
	CreatedAt  string `dynamodbav:"createdAt"`
	ExpiresAt  string `dynamodbav:"expiresAt"`
}

// exchangeCode is a finished callback waiting for /sso/exchange.
type exchangeCode struct {
	store.Keys
	UserID     string `dynamodbav:"userId"`
	OrgID      string `dynamodbav:"orgId"`
	ProviderID string `dynamodbav:"providerId"`
	ExpiresAt  string `dynamodbav:"expiresAt"`
}

// identity links a provider's subject to an account.
type identity struct {
	store.Keys
	ProviderID string `dynamodbav:"providerId"`
	Subject    string `dynamodbav:"sub"`
	UserID     string `dynamodbav:"userId"`
	Email      string `dynamodbav:"email"`
	CreatedAt  string `dynamodbav:"createdAt"`
}

// Get reads provider id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*record, error) {
	var r record
	k := Key(orgID, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &r); err != nil {
		return nil, fmt.Errorf("get SSO provider %s: %w", id, err)
	}
	return &r, nil
}

// ByID finds provider id in any organization (GSI1).
func (s Store) ByID(ctx context.Context, id string) (*record, error) {
	var rs []record
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "SSOPROVREF#" + id}, &rs); err != nil {
		return nil, fmt.Errorf("find SSO provider %s: %w", id, err)
	}
	if len(rs) == 0 {
		return nil, store.ErrNotFound
	}
	return &rs[0], nil
}

// List reads the providers of organization orgID.
func (s Store) List(ctx context.Context, orgID string) ([]record, error) {
	out := []record{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "SSOPROV#"}, &out); err != nil {
		return nil, fmt.Errorf("SSO providers of %s: %w", orgID, err)
	}
	return out, nil
}

// Identities lists the identities linked through provider id.
func (s Store) Identities(ctx context.Context, providerID string) ([]identity, error) {
	var out []identity
	if err := s.St.AllInto(ctx, store.Query{PK: "SSOIDENT#" + providerID, SKPrefix: "SUB#"}, &out); err != nil {
		return nil, fmt.Errorf("identities of SSO provider %s: %w", providerID, err)
	}
	return out, nil
}

// Identity reads the account linked to sub at a provider.
func (s Store) Identity(ctx context.Context, providerID, sub string) (*identity, error) {
	var i identity
	k := identityKey(providerID, sub)
	if err := s.St.Get(ctx, k.PK, k.SK, &i); err != nil {
		return nil, fmt.Errorf("SSO identity: %w", err)
	}
	return &i, nil
}

// Active reads orgID's active provider row.
func (s Store) Active(ctx context.Context, orgID string) (*enforce.Active, error) {
	return enforce.Store{St: s.St}.Active(ctx, orgID)
}

// putNew creates a provider; its pair guard is the second write.
func putNew(r *record) []*store.Write {
	k := clientKey(r.Issuer, r.ClientID)
	return []*store.Write{store.PutNew(r), store.PutNew(clientGuard{Keys: store.Keys{PK: k.PK, SK: k.SK}, ProviderID: r.ID})}
}

// replace writes r over the stored version prev (compare-and-swap on version).
func replace(r *record, prev int) *store.Write {
	return store.Put(r).When(store.Is("version", prev))
}

// dropGuard removes a provider's pair guard.
func dropGuard(issuer, clientID, providerID string) *store.Write {
	k := clientKey(issuer, clientID)
	return store.Delete(k.PK, k.SK).When(store.Is("providerId", providerID))
}

// newGuard reserves a pair for providerID.
func newGuard(issuer, clientID, providerID string) *store.Write {
	k := clientKey(issuer, clientID)
	return store.PutNew(clientGuard{Keys: store.Keys{PK: k.PK, SK: k.SK}, ProviderID: providerID})
}

// activate writes r as its organization's active provider: only when none is
// or r already is.
func activate(r *record) *store.Write {
	k := enforce.Key(r.OrgID)
	a := enforce.Active{Keys: store.Keys{PK: k.PK, SK: k.SK}, ProviderID: r.ID, OrgID: r.OrgID, Name: r.Name, Type: r.Type,
		EnforceSSO: r.EnforceSSO}
	return store.Put(a).When(store.Absent().Or(store.Is("providerId", r.ID)))
}

// deactivate removes r's active row (only when it is r's).
func deactivate(r *record) *store.Write {
	k := enforce.Key(r.OrgID)
	return store.Delete(k.PK, k.SK).When(store.Is("providerId", r.ID))
}

// deleteProvider removes a provider row (compare-and-swap on version).
func deleteProvider(r *record) *store.Write {
	k := Key(r.OrgID, r.ID)
	return store.Delete(k.PK, k.SK).When(store.Is("version", r.Version))
}

// deleteIdentity removes one linked identity.
func deleteIdentity(i *identity) *store.Write { return store.Delete(i.PK, i.SK) }

// assertProvider holds a transaction to the provider still being active at
// the version read.
func assertProvider(r *record) *store.Write {
	k := Key(r.OrgID, r.ID)
	return store.Assert(k.PK, k.SK, store.Is("version", r.Version).And(store.Is("status", StatusActive)))
}
