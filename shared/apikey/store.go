package apikey

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// keys and principals are the organization-owned row repositories (store.OrgRows).
func (s Store) keys() store.OrgRows[Key] { return store.OrgRows[Key]{St: s.St, Kind: keyKind} }

func (s Store) principals() store.OrgRows[Principal] {
	return store.OrgRows[Principal]{St: s.St, Kind: principalKind}
}

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

// Principal reads principal id of organization orgID.
func (s Store) Principal(ctx context.Context, orgID, id string) (*Principal, error) {
	return s.principals().Get(ctx, orgID, id)
}

// PrincipalByID finds principal id of whatever organization (GSI1).
func (s Store) PrincipalByID(ctx context.Context, id string) (*Principal, error) {
	return s.principals().ByID(ctx, id)
}

// OrgPrincipals lists the principals of organization orgID.
func (s Store) OrgPrincipals(ctx context.Context, orgID string) ([]Principal, error) {
	return s.principals().All(ctx, orgID)
}

// guardOf is the guard of k with the given creator cache.
func guardOf(k *Key, c *Creator) Guard {
	g := GuardKey(k.KeyHash)
	return Guard{Keys: store.Keys{PK: g.PK, SK: g.SK}, KeyID: k.ID, OrgID: k.OrgID, PartnerID: k.PartnerID,
		KeyPrefix: k.KeyPrefix, Scopes: k.Scopes, Status: k.Status, ExpiresAt: k.ExpiresAt, RateLimit: k.RateLimit,
		PrincipalID: k.PrincipalID, Creator: c}
}

// createWrites puts a new key (in the list indexes) and its guard.
func createWrites(k *Key, c *Creator) []*store.Write {
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

// statusWrites move an active key (record and guard) to status to.
func statusWrites(k *Key, to, now string) []*store.Write {
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

// putPrincipal creates principal p (in the list indexes).
func putPrincipal(p *Principal) *store.Write {
	p.setListKeys()
	return store.PutNew(p)
}

// replacePrincipal overwrites p (version bumped) if it is still at version prev
// and active.
// disablePrincipalWrite moves sp to disabled whatever else changed it (it
// checks only that the row exists) and moves its version on.
func disablePrincipalWrite(sp *Principal, now string) *store.Write {
	return store.Change(sp.PK, sp.SK, expression.Set(expression.Name("status"), expression.Value(SPDisabled)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Add(expression.Name("version"), expression.Value(1))).When(store.Present())
}

func replacePrincipal(p *Principal, prev int) *store.Write {
	p.Version = prev + 1
	p.setListKeys()
	return store.Put(p).When(store.Is("version", prev).And(store.Is("status", SPActive)))
}
