// Package principal owns service principals (/api/v1/service-principals):
// non-human identities of an organization whose API keys depend on no user.
//
// It sits above shared/apikey in the import graph: a principal mints, rotates,
// revokes and adopts keys through apikey's exported writes, and apikey reaches
// a key's principal only through the small apikey.Owners interface this
// package's Store satisfies (wired in shared/app), so the two never import
// each other. X-API-Key authentication (shared/keyauth) reads a principal's
// state with Ref and Active.
//
// # Invariants
//
//   - A principal is created with its first key, in one transaction with the
//     audit record (service_principal.create/rotate_key/disable/migrate_key;
//     details hold the key prefix only); its key's scopes are the principal's.
//   - Status: active -> disabled (final). Disabling is a kill switch: one write
//     to the principal that nothing beside it can make fail, after which
//     authentication refuses its keys (it reads the principal's state), then
//     its key rows revoked in batches (any number of keys; a repeat finishes
//     the rest).
//   - Every change of a principal or of one of its keys (rotate, PATCH of the
//     key, migrate-key) moves the principal's version on while it is active
//     (Hold, bump), so they serialise with disable.
//   - A principal's key never acts beyond the principal's scopes; migrate-key
//     adopts only a user-created key of the principal's organization, its
//     scopes narrowed to the intersection.
//   - Site- or device-group-restricted users cannot manage principals, which
//     act organization-wide.
//
// # Rows
//
//	entity              PK / SK                         GSI1PK / GSI1SK
//	service principal   ORG#<oid> / SP#<id>             SPREF#<id> / SP
//	                    GSI3 PARTNER#<pid>#PRINCIPALS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#PRINCIPALS / same
//
// Access patterns: the list reads one page from the list indexes (GSI3 for a
// partner caller across its organizations, GSI4 for one organization; newest
// first, store.Window); one by id is a GSI1 query (the caller then checks the
// organization it names); authentication reads the row by key (Ref). The keys
// of a principal are apikey's rows (its organization's keys, principalId set).
package principal

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Status of a principal.
const (
	Active   = "active"
	Disabled = "disabled"
)

// Principal is a service principal.
type Principal struct {
	store.Keys
	ID        string   `dynamodbav:"id" json:"id"`
	OrgID     string   `dynamodbav:"orgId" json:"orgId"`
	PartnerID string   `dynamodbav:"partnerId,omitempty" json:"-"`
	Name      string   `dynamodbav:"name" json:"name"`
	Scopes    []string `dynamodbav:"scopes" json:"scopes"`
	Status    string   `dynamodbav:"status" json:"status"`
	APIKeyID  string   `dynamodbav:"apiKeyId" json:"apiKeyId"`
	CreatedBy string   `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt string   `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt string   `dynamodbav:"updatedAt" json:"updatedAt"`
	Version   int      `dynamodbav:"version" json:"-"`
}

// Issued is the create answer: the principal and its first key.
type Issued struct {
	*Principal
	Raw       string `json:"key"`
	KeyPrefix string `json:"keyPrefix"`
	Warning   string `json:"warning"`
}

// Rotated is the rotate answer.
type Rotated struct {
	APIKeyID  string `json:"apiKeyId"`
	Raw       string `json:"key"`
	KeyPrefix string `json:"keyPrefix"`
	Warning   string `json:"warning"`
}

// kind is the row kind of store.OrgRows.
const kind = "SP"

func rowKeys(orgID, id string) store.Keys {
	return store.OrgRows[Principal]{Kind: kind}.Keys(orgID, id)
}

// Ref is the key of principal id of organization orgID (authentication reads it).
func Ref(orgID, id string) store.KeyRef {
	k := rowKeys(orgID, id)
	return store.KeyRef{PK: k.PK, SK: k.SK}
}

// IsActive reports whether the stored principal item is active.
func IsActive(it store.Item) bool {
	var sp struct {
		Status string `dynamodbav:"status"`
	}
	return it != nil && store.Unmarshal(it, &sp) == nil && sp.Status == Active
}

// PartnerListPK is the GSI3 partition of the service principals of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#PRINCIPALS" }

// OrgListPK is the GSI4 partition of the service principals of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#PRINCIPALS" }

// setListKeys puts p into the list indexes: newest first, ties by id
// ascending (store.NewestSK, read descending).
func (p *Principal) setListKeys() {
	p.SetList(PartnerListPK, OrgListPK, p.PartnerID, p.OrgID, store.NewestSK(p.CreatedAt, p.ID))
}

// Owner is the organization the principal belongs to.
func (p *Principal) Owner() authz.Org { return authz.Org{ID: p.OrgID, PartnerID: p.PartnerID} }

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

func (s Store) rows() store.OrgRows[Principal] { return store.OrgRows[Principal]{St: s.St, Kind: kind} }

// Principal reads principal id of organization orgID (consistent read).
func (s Store) Principal(ctx context.Context, orgID, id string) (*Principal, error) {
	return s.rows().Get(ctx, orgID, id)
}

// ByID finds principal id of whatever organization (GSI1); the caller decides
// whether the organization it names is visible.
func (s Store) ByID(ctx context.Context, id string) (*Principal, error) {
	return s.rows().ByID(ctx, id)
}

// Hold reads principal id of organization orgID for a change of one of its
// keys (apikey.Owners): ErrDisabled unless it is active, else its scopes and
// the write that moves its version on.
func (s Store) Hold(ctx context.Context, orgID, id string) (*apikey.Hold, error) {
	sp, err := s.Principal(ctx, orgID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrDisabled
	}
	if err != nil {
		return nil, err
	}
	if sp.Status != Active {
		return nil, ErrDisabled
	}
	return &apikey.Hold{Scopes: sp.Scopes, Write: bump(sp)}, nil
}

// Lost names why a write of a principal, or a Hold's write, lost its
// compare-and-swap (apikey.Owners).
func (s Store) Lost(ctx context.Context, orgID, id string) error {
	cur, err := s.Principal(ctx, orgID, id)
	if err == nil && cur.Status != Active {
		return ErrDisabled
	}
	return ErrConcurrent
}

// bump moves principal sp's version on, if it is still at the version read
// and active: every change of the principal or its keys takes this step, so
// they serialise with disable.
func bump(sp *Principal) *store.Write {
	return store.Change(sp.PK, sp.SK, expression.Add(expression.Name("version"), expression.Value(1))).
		When(store.Is("version", sp.Version).And(store.Is("status", Active)))
}

// put creates principal p (in the list indexes).
func put(p *Principal) *store.Write {
	p.setListKeys()
	return store.PutNew(p)
}

// replace overwrites p (version bumped) if it is still at version prev and
// active.
func replace(p *Principal, prev int) *store.Write {
	p.Version = prev + 1
	p.setListKeys()
	return store.Put(p).When(store.Is("version", prev).And(store.Is("status", Active)))
}

// disableWrite moves sp to disabled whatever else changed it (it checks only
// that the row exists) and moves its version on.
func disableWrite(sp *Principal, now string) *store.Write {
	return store.Change(sp.PK, sp.SK, expression.Set(expression.Name("status"), expression.Value(Disabled)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Add(expression.Name("version"), expression.Value(1))).When(store.Present())
}

// Reindex gives principals written before their list had an index their list
// keys (store.Backfill).
func Reindex() []store.Reindex {
	return []store.Reindex{{Kind: "service principal", SKPrefix: kind + "#", Keys: func(it store.Item) (store.Keys, error) {
		var p Principal
		if err := store.Unmarshal(it, &p); err != nil {
			return store.Keys{}, fmt.Errorf("service principal: %w", err)
		}
		p.setListKeys()
		return p.Keys, nil
	}}}
}
