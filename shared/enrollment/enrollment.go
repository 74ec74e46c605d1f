// Package enrollment owns enrollment keys: short-lived, usage-limited secrets
// that onboard agents into an organization and optionally a site
// (/api/v1/enrollment-keys, user sessions only), and the conditional consume that
// agent enrollment adds to its transaction.
//
// # Invariants
//
//   - The raw key (64 hex characters from 32 random bytes) is returned only by
//     create and rotate. The table holds only HMAC-SHA256(pepper, key); the
//     pepper is the first configured of ENROLLMENT_KEY_PEPPER,
//     APP_ENCRYPTION_KEY, SECRET_ENCRYPTION_KEY, JWT_SECRET (shared/config), so a
//     pepper change makes every earlier key fail.
//   - A key accepts enrollments while expiresAt is in the future and usageCount
//     is below maxUsage (absent maxUsage = unlimited, settable on rotation only).
//     Consume is one conditional increment inside the enrollment's transaction:
//     usageCount never passes maxUsage, however many agents enroll at once.
//   - Rotation replaces the material in place (same id), resets usageCount and
//     keeps omitted values; the old material stops at once (its hash guard is
//     deleted in the same transaction).
//   - Every change writes its audit record (enrollment_key.create, .rotate,
//     .delete, .purge) in the same transaction; audit details hold only the
//     key's first 8 characters.
//
// # Rows
//
//	entity                PK / SK                        GSI1PK / GSI1SK       GSI2PK / GSI2SK
//	enrollment key        ORG#<oid> / EKEY#<id>          EKEYREF#<id> / EKEY   EKEYEXP / <expiresAt>#<oid>#<id>
//	                      GSI3 PARTNER#<pid>#EKEYS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#EKEYS / same
//	key hash guard        EKEYHASH#<hmac hex> / EKEY     -                     -
//
// Access patterns: the list reads one page from the list indexes (GSI3 for a
// partner caller across its organizations, GSI4 for one organization; newest
// first, store.Window); the keys of an organization are a prefix query of ORG#<oid>;
// a key by its own id is one GSI1 query (the caller then checks the
// organization it names); agent enrollment reads the hash guard (which carries
// the organization, site and expiry) with one GetItem; the expiry sweep reads
// GSI2 partition EKEYEXP up to its cutoff, so it touches only expired keys.
package enrollment

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Bounds of the spec.
const (
	MaxName      = 255
	MinUsage     = 1
	MaxUsage     = 100000
	DefaultUsage = 1
	// PurgeAfter is how long an expired key is kept before the sweeper deletes it.
	PurgeAfter = 24 * 60 * 60 // seconds
)

// Key is an enrollment key as stored and returned (never with its material).
type Key struct {
	store.Keys
	ID         string  `dynamodbav:"id" json:"id"`
	OrgID      string  `dynamodbav:"orgId" json:"orgId"`
	PartnerID  string  `dynamodbav:"partnerId,omitempty" json:"-"`
	SiteID     *string `dynamodbav:"siteId" json:"siteId"`
	Name       string  `dynamodbav:"name" json:"name"`
	UsageCount int     `dynamodbav:"usageCount" json:"usageCount"`
	MaxUsage   *int    `dynamodbav:"maxUsage,omitempty" json:"maxUsage"`
	ExpiresAt  string  `dynamodbav:"expiresAt" json:"expiresAt"`
	CreatedBy  string  `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt  string  `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt  string  `dynamodbav:"updatedAt" json:"-"`
	KeyHash    string  `dynamodbav:"keyHash" json:"-"`
}

// Owner is the key's organization (tenant.Owned).
func (k *Key) Owner() authz.Org { return authz.Org{ID: k.OrgID, PartnerID: k.PartnerID} }

// Issued is a key with its raw material: the create and rotate responses.
type Issued struct {
	*Key
	Raw string `json:"key"`
}

// Guard is the uniqueness and lookup row of a key's hash. It carries what
// enrollment needs before it consumes the key, so the lookup is one GetItem.
type Guard struct {
	store.Keys
	KeyID     string  `dynamodbav:"keyId"`
	OrgID     string  `dynamodbav:"orgId"`
	PartnerID string  `dynamodbav:"partnerId,omitempty"`
	SiteID    *string `dynamodbav:"siteId"`
	ExpiresAt string  `dynamodbav:"expiresAt"`
}

// kind is the row kind of store.OrgRows.
const kind = "EKEY"

// KeyKeys are the keys of key id of organization orgID (list index keys
// aside: setListKeys).
func KeyKeys(orgID, id, expiresAt string) store.Keys {
	k := store.OrgRows[Key]{Kind: kind}.Keys(orgID, id)
	k.GSI2PK, k.GSI2SK = expiryPK, expiresAt+"#"+orgID+"#"+id
	return k
}

// List index keys: newest first, ties by id ascending (store.NewestSK,
// read descending), in the partner's partition of GSI3 and the
// organization's of GSI4; expiresAt is projected, so the expired filter is
// applied to the index rows at the time of the read.

// PartnerListPK is the GSI3 partition of the enrollment keys of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#EKEYS" }

// OrgListPK is the GSI4 partition of the enrollment keys of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#EKEYS" }

// setListKeys puts k into the list indexes (every write of the whole record).
func (k *Key) setListKeys() {
	k.SetList(PartnerListPK, OrgListPK, k.PartnerID, k.OrgID, store.NewestSK(k.CreatedAt, k.ID))
}

const expiryPK = "EKEYEXP"

// GuardKey is the key of the hash guard of hash.
func GuardKey(hash string) store.KeyRef { return store.KeyRef{PK: "EKEYHASH#" + hash, SK: "EKEY"} }

// Hash is the stored form of raw under pepper: hex HMAC-SHA256.
func Hash(pepper []byte, raw string) string {
	m := hmac.New(sha256.New, pepper)
	m.Write([]byte(raw))
	return hex.EncodeToString(m.Sum(nil))
}

// NewRaw returns fresh key material: 64 hex characters from 32 random bytes.
func NewRaw() (string, error) {
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("enrollment key material: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// WellFormed reports whether raw looks like key material (64 lowercase hex).
func WellFormed(raw string) bool {
	if len(raw) != 64 {
		return false
	}
	for _, c := range raw {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

func prefix(raw string) string { return raw[:8] }
