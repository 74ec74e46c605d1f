package apikey

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
)

// Window is the rate-limit window of every key.
const Window = time.Hour

// Rule is the rate limit of a key: limit requests in any Window.
func Rule(limit int) ratelimit.Rule {
	return ratelimit.Rule{Name: "api-key", Limit: limit, Window: Window}
}

// UsageKey is the row that counts the requests of the key with hash, and
// carries its lastUsedAt and usageCount.
func UsageKey(hash string) store.KeyRef { return ratelimit.BucketKey(Rule(0), hash) }

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// keys is the organization-owned row repository (store.OrgRows).
func (s Store) keys() store.OrgRows[Key] { return store.OrgRows[Key]{St: s.St, Kind: keyKind} }

// Key reads key id of organization orgID (consistent read).
func (s Store) Key(ctx context.Context, orgID, id string) (*Key, error) {
	return s.keys().Get(ctx, orgID, id)
}

// KeyByID finds key id of whatever organization (GSI1); the caller decides
// whether the organization it names is visible.
func (s Store) KeyByID(ctx context.Context, id string) (*Key, error) { return s.keys().ByID(ctx, id) }

// OrgKeys lists the keys of organization orgID.
func (s Store) OrgKeys(ctx context.Context, orgID string) ([]Key, error) {
	return s.keys().All(ctx, orgID)
}

// CreatedKeys lists the keys userID created in the organizations of partner
// partnerID, or with orgID in that one only (the creator's GSI2 partition).
func (s Store) CreatedKeys(ctx context.Context, userID, partnerID, orgID string) ([]Key, error) {
	var keys []Key
	q := store.Query{Index: store.GSI2, PK: CreatorPK(userID), SKPrefix: CreatorPrefix(partnerID, orgID)}
	if err := s.St.AllInto(ctx, q, &keys); err != nil {
		return nil, fmt.Errorf("api keys created by %s: %w", userID, err)
	}
	return keys, nil
}

// Guard reads the guard of hash (consistent read).
func (s Store) Guard(ctx context.Context, hash string) (*Guard, error) {
	var g Guard
	k := GuardKey(hash)
	if err := s.St.Get(ctx, k.PK, k.SK, &g); err != nil {
		return nil, fmt.Errorf("api key guard: %w", err)
	}
	return &g, nil
}

// Expire persists the expired status of the key guard g belongs to (record
// and guard); a key changed meanwhile keeps its new status.
func (s Store) Expire(ctx context.Context, g *Guard, now time.Time) error {
	k := &Key{Keys: recordKeys(g.OrgID, g.KeyID), KeyHash: strings.TrimPrefix(g.PK, "APIKEYHASH#")}
	err := s.St.Commit(ctx, (&store.Tx{}).Add(StatusWrites(k, StatusExpired, clock.Format(now))...))
	if err != nil && !errors.Is(err, store.ErrConditionFailed) {
		return err
	}
	return nil
}

// WithUsage copies the usage of each key onto it: its usage row (UsageKey,
// written by each authenticated request) plus what its guard counted before
// usage had a row of its own (keys used before then), in one BatchGetItem per
// 50 keys.
func (s Store) WithUsage(ctx context.Context, keys []Key) error {
	if len(keys) == 0 {
		return nil
	}
	refs := make([]store.KeyRef, 0, 2*len(keys))
	for _, k := range keys {
		refs = append(refs, UsageKey(k.KeyHash), GuardKey(k.KeyHash))
	}
	items, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return err
	}
	type usage struct {
		LastUsedAt *string `dynamodbav:"lastUsedAt"`
		UsageCount int     `dynamodbav:"usageCount"`
	}
	for i := range keys {
		for _, ref := range refs[2*i : 2*i+2] {
			item, ok := items[ref.PK+"|"+ref.SK]
			if !ok {
				continue
			}
			var u usage
			if err := store.Unmarshal(item, &u); err != nil {
				return err
			}
			keys[i].UsageCount += u.UsageCount
			if u.LastUsedAt != nil && (keys[i].LastUsedAt == nil || *u.LastUsedAt > *keys[i].LastUsedAt) {
				keys[i].LastUsedAt = u.LastUsedAt
			}
		}
	}
	return nil
}

// guardOf is the guard of k with the given creator cache.
func guardOf(k *Key, c *Creator) Guard {
	g := GuardKey(k.KeyHash)
	return Guard{Keys: store.Keys{PK: g.PK, SK: g.SK}, KeyID: k.ID, OrgID: k.OrgID, PartnerID: k.PartnerID,
		KeyPrefix: k.KeyPrefix, Scopes: k.Scopes, Status: k.Status, ExpiresAt: k.ExpiresAt, RateLimit: k.RateLimit,
		PrincipalID: k.PrincipalID, Creator: c}
}

// CreateWrites puts a new key (in the list indexes) and its guard with
// creator cache c (nil for a service principal's key).
func CreateWrites(k *Key, c *Creator) []*store.Write {
	k.setListKeys()
	g := guardOf(k, c)
	return []*store.Write{store.PutNew(k), store.PutNew(&g)}
}

// isVersion is "the record is at version v and active".
func isVersion(v int) expression.ConditionBuilder {
	return store.Is("version", v).And(store.Is("status", StatusActive))
}

// replaceWrite overwrites key record next (version bumped) if it still is at
// version prev and active.
func replaceWrite(next *Key, prev int) *store.Write {
	next.Version = prev + 1
	next.setListKeys() // a key written before the list indexes gets its keys
	return store.Put(next).When(isVersion(prev))
}

// AdoptWrites move key next, read at version prev and still active, to the
// service principal it names (next.PrincipalID, its scopes narrowed): the
// record (write 0, ErrConcurrent when it fails) and its guard, which loses its
// creator cache.
func AdoptWrites(next *Key, prev int) []*store.Write {
	return []*store.Write{replaceWrite(next, prev), guardSettingsWrite(next)}
}

// guardSettingsWrite copies the settings authentication reads onto k's guard;
// a key owned by a principal loses its creator cache.
func guardSettingsWrite(k *Key) *store.Write {
	g := GuardKey(k.KeyHash)
	upd := expression.Set(expression.Name("scopes"), expression.Value(k.Scopes)).
		Set(expression.Name("rateLimit"), expression.Value(k.RateLimit)).
		Set(expression.Name("status"), expression.Value(k.Status)).
		Set(expression.Name("principalId"), expression.Value(k.PrincipalID))
	if k.PrincipalID != "" {
		upd = upd.Remove(expression.Name("creator"))
	}
	return store.Change(g.PK, g.SK, upd).When(store.Present())
}

// StatusWrites move an active key (record and guard) to status to.
func StatusWrites(k *Key, to, now string) []*store.Write {
	rec := store.Change(k.PK, k.SK, expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Add(expression.Name("version"), expression.Value(1))).
		When(store.Is("status", StatusActive))
	g := GuardKey(k.KeyHash)
	guard := store.Change(g.PK, g.SK, expression.Set(expression.Name("status"), expression.Value(to))).When(store.Present())
	return []*store.Write{rec, guard}
}

// rotateWrites move k from its old material to next's (same id), in one step.
func rotateWrites(prev, next *Key, c *Creator) []*store.Write {
	old := GuardKey(prev.KeyHash)
	g := guardOf(next, c)
	return []*store.Write{
		replaceWrite(next, prev.Version),
		store.Delete(old.PK, old.SK).When(store.Present()),
		store.PutNew(&g),
	}
}

// creatorCacheWrite refreshes g's creator cache if g is unchanged otherwise.
func creatorCacheWrite(g *Guard, c *Creator) *store.Write {
	return store.Change(g.PK, g.SK, expression.Set(expression.Name("creator"), expression.Value(c))).When(store.Present())
}
