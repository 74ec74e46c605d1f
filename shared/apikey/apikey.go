// Package apikey owns API keys (/api/v1/api-keys): their rows, their
// material, the routes that manage them and the creator-entitlement check.
//
// Three packages share what a key is, each one room (the import arrows run
// one way: shared/keyauth and shared/principal import apikey, never the
// reverse):
//
//   - apikey: the key record, its authentication guard and usage row, the
//     /api-keys routes, and the one creator-entitlement check (creator.go:
//     may a key its creator made still act in the key's organization?),
//     which authentication and rotation both call;
//   - shared/principal: service principals, which mint, rotate, revoke and
//     adopt keys through this package's exported writes; the key routes reach
//     a key's principal only through Owners, declared here and wired in
//     shared/app;
//   - shared/keyauth: X-API-Key authentication. Every function links it
//     (shared/app builds it into shared/auth), so it holds only the request
//     path: the guard read, the rate limit and the checks; the management
//     routes' code stays in this package, whose functions the linker drops
//     from binaries that only authenticate.
//
// # Invariants
//
//   - Key material is "svc_" + 32 base64url characters from crypto/rand. The
//     table holds its SHA-256 (the hash guard's key) and its first 12
//     characters (keyPrefix); the raw key is returned only by create and
//     rotate, and keyHash by no route, log or audit record.
//   - Every change writes the key record and its guard in one transaction with
//     the audit record (api_key.create/update/rotate/revoke; details hold the
//     key prefix only), guarded by compare-and-swap on the record's version, so
//     concurrent rotations leave exactly one valid key.
//   - Status: active -> revoked (DELETE, permanent), active -> expired (the
//     first authentication after expiresAt persists it). Only active keys are
//     updated or rotated. A rotation replaces the material (old key invalid at
//     once: its guard is deleted), resets usage and keeps the other attributes.
//   - A user-created key acts with the scopes it holds that its creator still
//     holds in the key's organization, and stops (401 Invalid API key) when the
//     creator is disabled or no longer an active member there. Its guard caches
//     the creator's role and permissions; authentication re-checks them in the
//     same transaction that spends the rate-limit cell (condition checks on the
//     creator's profile, membership and custom roles), so a change is seen at
//     once and the cache costs no read. A service principal's key depends on no
//     user, only on its principal being active (shared/principal).
//   - A key acts only while its organization exists: deleting an organization
//     (DELETE /organizations/:id, refused while it has members or devices)
//     leaves its keys in the table, and authentication answers them 401
//     Invalid API key (it reads the organization row in the same
//     BatchGetItem as the other checks, no extra call).
//   - Site- or device-group-restricted users cannot create keys: keys act
//     organization-wide.
//
// # Rows
//
//	entity              PK / SK                         GSI1PK / GSI1SK
//	API key             ORG#<oid> / APIKEY#<id>         APIKEYREF#<id> / APIKEY
//	                    GSI3 PARTNER#<pid>#APIKEYS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#APIKEYS / same
//	                    GSI2 APIKEYCREATOR#<creator user id> / <pid>#<oid>#<id>
//	key guard           APIKEYHASH#<sha256 hex> / APIKEY  -
//	key usage           RL#api-key#<sha256 hex> / WIN   -
//
// The guard carries what authentication needs (organization, scopes, status,
// expiry, rate limit, creator cache) and is written only when that changes;
// each authenticated request writes the key's usage row instead
// (RL#api-key#<sha256 hex> / WIN: shared/ratelimit's flat row for the sliding
// hour, plus usageCount and lastUsedAt; about 100 bytes, 1 write unit).
// Guards of keys used before the usage row existed still carry the usage
// they counted then, which WithUsage adds in. Access
// patterns: the list reads one page from the list indexes (GSI3 for a partner
// caller across its organizations, GSI4 for one organization; newest first,
// store.Window); the keys of an organization are also a prefix query of
// ORG#<oid> (principal disable); the keys a user created in a partner's
// organizations, or in one, are a prefix query of the creator's GSI2
// partition (removal of a member, one Query whatever the partner's size;
// like every index it is eventually consistent, which the revocation's
// conditional writes and authentication's creator checks make safe); one by id is a GSI1 query
// (the caller then checks the organization it names); authentication reads
// the guard by hash.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Bounds and defaults.
const (
	Prefix           = "svc_"
	prefixLen        = 12
	MaxName          = 255
	DefaultRateLimit = 1000
	MaxRateLimit     = 100000
	// Warning is the create and rotate responses' reminder.
	Warning = "Store this key now: it is not shown again."
)

// Status of a key.
const (
	StatusActive  = "active"
	StatusExpired = "expired"
	StatusRevoked = "revoked"
)

// Key is an API key as stored and returned (never with its material or hash).
type Key struct {
	store.Keys
	ID          string   `dynamodbav:"id" json:"id"`
	OrgID       string   `dynamodbav:"orgId" json:"orgId"`
	PartnerID   string   `dynamodbav:"partnerId,omitempty" json:"-"`
	Name        string   `dynamodbav:"name" json:"name"`
	KeyPrefix   string   `dynamodbav:"keyPrefix" json:"keyPrefix"`
	KeyHash     string   `dynamodbav:"keyHash" json:"-"`
	Scopes      []string `dynamodbav:"scopes" json:"scopes"`
	ExpiresAt   *string  `dynamodbav:"expiresAt" json:"expiresAt"`
	RateLimit   int      `dynamodbav:"rateLimit" json:"rateLimit"`
	CreatedBy   string   `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt   string   `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt   string   `dynamodbav:"updatedAt" json:"updatedAt"`
	Status      string   `dynamodbav:"status" json:"status"`
	PrincipalID string   `dynamodbav:"principalId,omitempty" json:"servicePrincipalId,omitempty"`
	Version     int      `dynamodbav:"version" json:"-"`
	// Usage lives on the guard; reads copy it here.
	LastUsedAt *string `dynamodbav:"-" json:"lastUsedAt"`
	UsageCount int     `dynamodbav:"-" json:"usageCount"`
}

// Issued is a key with its raw material: the create and rotate responses.
type Issued struct {
	*Key
	Raw     string `json:"key"`
	Warning string `json:"warning"`
}

// Creator caches what a user-created key's creator holds (see the package doc).
type Creator struct {
	UserID    string   `dynamodbav:"userId"`
	Scope     string   `dynamodbav:"scope"`
	PartnerID string   `dynamodbav:"partnerId,omitempty"`
	OrgID     string   `dynamodbav:"orgId,omitempty"`
	RoleID    string   `dynamodbav:"roleId"`
	Perms     []string `dynamodbav:"perms"`
	// Pins are the custom roles of the creator's role chain at their versions.
	Pins []Pin `dynamodbav:"pins,omitempty"`
}

// Pin is a custom role row at a version.
type Pin struct {
	PK      string `dynamodbav:"pk"`
	SK      string `dynamodbav:"sk"`
	Version int    `dynamodbav:"version"`
}

// Guard is the authentication row of a key (see the package doc).
type Guard struct {
	store.Keys
	KeyID       string   `dynamodbav:"keyId"`
	OrgID       string   `dynamodbav:"orgId"`
	PartnerID   string   `dynamodbav:"partnerId,omitempty"`
	KeyPrefix   string   `dynamodbav:"keyPrefix"`
	Scopes      []string `dynamodbav:"scopes"`
	Status      string   `dynamodbav:"status"`
	ExpiresAt   *string  `dynamodbav:"expiresAt"`
	RateLimit   int      `dynamodbav:"rateLimit"`
	PrincipalID string   `dynamodbav:"principalId,omitempty"`
	Creator     *Creator `dynamodbav:"creator,omitempty"`
	LastUsedAt  *string  `dynamodbav:"lastUsedAt,omitempty"`
	UsageCount  int      `dynamodbav:"usageCount"`
}

// NewMaterial returns a raw key, its hash and its prefix.
func NewMaterial() (raw, hash, prefix string, err error) {
	b := make([]byte, 24) // 24 bytes are 32 base64url characters
	if _, err := rand.Read(b); err != nil {
		return "", "", "", fmt.Errorf("api key: %w", err)
	}
	raw = Prefix + base64.RawURLEncoding.EncodeToString(b)
	return raw, Hash(raw), raw[:prefixLen], nil
}

// Hash is the stored form of a raw key.
func Hash(raw string) string {
	sum := sha256.Sum256([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// WellFormed reports whether raw has the key format (prefix, length, alphabet).
func WellFormed(raw string) bool {
	body, ok := strings.CutPrefix(raw, Prefix)
	if !ok || len(body) != 32 {
		return false
	}
	_, err := base64.RawURLEncoding.DecodeString(body)
	return err == nil
}

// keyKind is the row kind of store.OrgRows.
const keyKind = "APIKEY"

func recordKeys(orgID, id string) store.Keys {
	return store.OrgRows[Key]{Kind: keyKind}.Keys(orgID, id)
}

// GuardKey is the key of hash's guard.
func GuardKey(hash string) store.KeyRef { return store.KeyRef{PK: "APIKEYHASH#" + hash, SK: "APIKEY"} }

// List index keys: the list is newest first, ties by id ascending
// (store.NewestSK, read descending), in the partner's partition of GSI3
// and the organization's of GSI4.

// KeyPartnerListPK is the GSI3 partition of the API keys of partner partnerID.
func KeyPartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#APIKEYS" }

// KeyOrgListPK is the GSI4 partition of the API keys of organization orgID.
func KeyOrgListPK(orgID string) string { return store.OrgPK(orgID) + "#APIKEYS" }

// setListKeys puts k into the API key list indexes and its creator's
// partition of GSI2 (every write of the whole record).
func (k *Key) setListKeys() {
	k.SetList(KeyPartnerListPK, KeyOrgListPK, k.PartnerID, k.OrgID, store.NewestSK(k.CreatedAt, k.ID))
	k.GSI2PK, k.GSI2SK = "", ""
	if k.CreatedBy != "" {
		k.GSI2PK, k.GSI2SK = CreatorPK(k.CreatedBy), CreatorPrefix(k.PartnerID, k.OrgID)+k.ID
	}
}

// CreatorPK is the GSI2 partition of the API keys user userID created.
func CreatorPK(userID string) string { return "APIKEYCREATOR#" + userID }

// CreatorPrefix is the GSI2 sort-key prefix of a creator's keys in partner
// partnerID, or, with orgID, in that organization ("" partner: an
// organization without one).
func CreatorPrefix(partnerID, orgID string) string {
	if orgID == "" {
		return partnerID + "#"
	}
	return partnerID + "#" + orgID + "#"
}

// Owner is the organization the key belongs to.
func (k *Key) Owner() authz.Org { return authz.Org{ID: k.OrgID, PartnerID: k.PartnerID} }
