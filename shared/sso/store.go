package sso

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/sso/enforce"
	"github.com/gale-rmm/gale/shared/sso/ssolist"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

func hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// owner is the tenant a provider belongs to: an organization (OrgID set;
// PartnerID is then the organization's partner) or a partner (OrgID "").
type owner struct{ OrgID, PartnerID string }

// pk is the owner's partition.
func (o owner) pk() string { return store.TenantPK(o.OrgID, o.PartnerID) }

func (o owner) isPartner() bool { return o.OrgID == "" }

func (r *record) owner() owner { return owner{OrgID: r.OrgID, PartnerID: r.PartnerID} }

// Owner is the provider's organization (tenant.Owned); a partner's own
// provider has none and answers OwnedByPartner (tenant.PartnerOwned).
func (r *record) Owner() authz.Org { return authz.Org{ID: r.OrgID, PartnerID: r.PartnerID} }

// OwnedByPartner answers the partner of a partner's own provider.
func (r *record) OwnedByPartner() (string, bool) { return r.PartnerID, r.owner().isPartner() }

// key is a provider's key.
func key(o owner, id string) store.Keys {
	return store.Keys{PK: o.pk(), SK: "SSOPROV#" + id, GSI1PK: "SSOPROVREF#" + id, GSI1SK: "SSOPROV"}
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

// identityKey binds a link to the issuer that vouched for sub as well as to
// the provider: a provider moved to another issuer (PATCH) does not inherit
// the links of the old one, whatever subjects the new issuer names.
func identityKey(providerID, issuer, sub string) store.KeyRef {
	return store.KeyRef{PK: "SSOIDENT#" + providerID, SK: "SUB#" + hash(normIssuer(issuer)+"\n"+sub)}
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
	PartnerID  string `dynamodbav:"partnerId,omitempty"`
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
	PartnerID  string `dynamodbav:"partnerId,omitempty"`
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

// Get reads provider id of tenant o.
func (s Store) Get(ctx context.Context, o owner, id string) (*record, error) {
	var r record
	k := key(o, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &r); err != nil {
		return nil, fmt.Errorf("get SSO provider %s: %w", id, err)
	}
	return &r, nil
}

// inOrg reads provider id of organization orgID (tenant.Find's read for an
// organization caller).
func (s Store) inOrg(ctx context.Context, orgID, id string) (*record, error) {
	return s.Get(ctx, owner{OrgID: orgID}, id)
}

// ByID finds provider id of any tenant (GSI1).
// A provider's GSI1 keys are those of store.OrgRows (kind SSOPROV), whether an
// organization or a partner owns it.
func (s Store) ByID(ctx context.Context, id string) (*record, error) {
	return store.OrgRows[record]{St: s.St, Kind: "SSOPROV"}.ByID(ctx, id)
}

// partnerPage reads one page of partner partnerID's own providers from its
// list partition (store.Window), counting the partition when the page stops
// short of its end.
func (s Store) partnerPage(ctx context.Context, partnerID string, q tenant.ListQuery[record]) (*tenant.Page[record], error) {
	q.Page, q.Limit = max(q.Page, 1), max(q.Limit, 1)
	qu := store.Query{Index: store.GSI4, PK: listPK(owner{PartnerID: partnerID})}
	pg, err := s.St.Window(ctx, store.Window{Query: qu, Offset: store.Offset(q.Page, q.Limit), Limit: q.Limit, Cursor: q.Cursor})
	if err != nil {
		return nil, fmt.Errorf("SSO providers of partner %s: %w", partnerID, err)
	}
	out := &tenant.Page[record]{Items: []record{}, Page: pg.Offset/q.Limit + 1, Limit: q.Limit, Total: pg.Total, Next: pg.Next}
	if err := attributevalue.UnmarshalListOfMaps(pg.Items, &out.Items); err != nil {
		return nil, err
	}
	if out.Total < 0 {
		if out.Total, err = s.St.Count(ctx, qu, nil); err != nil {
			return nil, err
		}
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

// Identity reads the account linked to sub of issuer at a provider.
func (s Store) Identity(ctx context.Context, providerID, issuer, sub string) (*identity, error) {
	var i identity
	k := identityKey(providerID, issuer, sub)
	if err := s.St.Get(ctx, k.PK, k.SK, &i); err != nil {
		return nil, fmt.Errorf("SSO identity: %w", err)
	}
	return &i, nil
}

// Active reads tenant o's active provider row.
func (s Store) Active(ctx context.Context, o owner) (*enforce.Active, error) {
	return enforce.Store{St: s.St}.ActiveOf(ctx, o.pk())
}

// listPK is the GSI4 partition of the providers of tenant o (shared/sso/ssolist).
func listPK(o owner) string { return ssolist.PK(o.pk()) }

// orgListPK is the GSI4 partition of the providers of organization orgID.
func orgListPK(orgID string) string { return listPK(owner{OrgID: orgID}) }

// setListKeys puts r into its owner's list partition.
func setListKeys(r *record) { ssolist.Set(&r.Keys, r.CreatedAt, r.ID) }

// putNew creates a provider; its pair guard is the second write.
func putNew(r *record) []*store.Write {
	setListKeys(r)
	k := clientKey(r.Issuer, r.ClientID)
	return []*store.Write{store.PutNew(r), store.PutNew(clientGuard{Keys: store.Keys{PK: k.PK, SK: k.SK}, ProviderID: r.ID})}
}

// replace writes r over the stored version prev (compare-and-swap on version).
func replace(r *record, prev int) *store.Write {
	setListKeys(r)
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

// activate writes r as its tenant's active provider: only when none is or r
// already is.
func activate(r *record) *store.Write {
	k := enforce.KeyOf(r.owner().pk())
	a := enforce.Active{Keys: store.Keys{PK: k.PK, SK: k.SK}, ProviderID: r.ID, OrgID: r.OrgID, Name: r.Name, Type: r.Type,
		EnforceSSO: r.EnforceSSO}
	if r.owner().isPartner() {
		a.PartnerID, a.EnforceSSO = r.PartnerID, false
	}
	return store.Put(a).When(store.Absent().Or(store.Is("providerId", r.ID)))
}

// deactivate removes r's active row (only when it is r's).
func deactivate(r *record) *store.Write {
	k := enforce.KeyOf(r.owner().pk())
	return store.Delete(k.PK, k.SK).When(store.Is("providerId", r.ID))
}

// deleteProvider removes a provider row (compare-and-swap on version).
func deleteProvider(r *record) *store.Write {
	k := key(r.owner(), r.ID)
	return store.Delete(k.PK, k.SK).When(store.Is("version", r.Version))
}

// deleteIdentity removes one linked identity.
func deleteIdentity(i *identity) *store.Write { return store.Delete(i.PK, i.SK) }

// assertProvider holds a transaction to the provider still being active at
// the version read.
func assertProvider(r *record) *store.Write {
	k := key(r.owner(), r.ID)
	return store.Assert(k.PK, k.SK, store.Is("version", r.Version).And(store.Is("status", StatusActive)))
}
