package enrollment

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// rows is the organization-owned row repository of enrollment keys (store.OrgRows).
func (s Store) rows() store.OrgRows[Key] { return store.OrgRows[Key]{St: s.St, Kind: kind} }

// Key reads key id of organization orgID (consistent read).
func (s Store) Key(ctx context.Context, orgID, id string) (*Key, error) {
	return s.rows().Get(ctx, orgID, id)
}

// KeyByID finds key id of whatever organization (GSI1, eventually consistent);
// the caller decides whether the organization it names is visible.
func (s Store) KeyByID(ctx context.Context, id string) (*Key, error) { return s.rows().ByID(ctx, id) }

// OrgKeys lists the keys of organization orgID.
func (s Store) OrgKeys(ctx context.Context, orgID string) ([]Key, error) {
	return s.rows().All(ctx, orgID)
}

// Guard reads the hash guard of hash; store.ErrNotFound when no key has it.
func (s Store) Guard(ctx context.Context, hash string) (*Guard, error) {
	var g Guard
	k := GuardKey(hash)
	if err := s.St.Get(ctx, k.PK, k.SK, &g); err != nil {
		return nil, fmt.Errorf("enrollment key guard: %w", err)
	}
	return &g, nil
}

// ExpiredBefore lists keys whose expiresAt is at or before cutoff (GSI2, only
// the expired keys are read), at most limit of them.
func (s Store) ExpiredBefore(ctx context.Context, cutoff string, limit int32) ([]Key, error) {
	res, err := s.St.Page(ctx, store.Query{Index: store.GSI2, PK: expiryPK, SKTo: cutoff + "#~", Limit: limit}, "")
	if err != nil {
		return nil, fmt.Errorf("expired enrollment keys: %w", err)
	}
	out := make([]Key, 0, len(res.Items))
	for _, it := range res.Items {
		var k Key
		if err := store.Unmarshal(it, &k); err != nil {
			return nil, err
		}
		out = append(out, k)
	}
	return out, nil
}

// Commit runs a transaction.
func (s Store) Commit(ctx context.Context, tx *store.Tx) error { return s.St.Commit(ctx, tx) }

// createWrites are the key (in the list indexes) and its guard, both new.
func createWrites(k *Key) []*store.Write {
	k.setListKeys()
	g := guardOf(k)
	return []*store.Write{store.PutNew(k), store.PutNew(g)}
}

func guardOf(k *Key) *Guard {
	gk := GuardKey(k.KeyHash)
	return &Guard{Keys: store.Keys{PK: gk.PK, SK: gk.SK}, KeyID: k.ID, OrgID: k.OrgID, PartnerID: k.PartnerID, SiteID: k.SiteID, ExpiresAt: k.ExpiresAt}
}

// rotateWrites replace old's material with next's, in place, on condition that
// the stored hash is still old's (a concurrent rotation loses).
func rotateWrites(old, next *Key) []*store.Write {
	next.setListKeys() // expiresAt is projected; a key written before the list indexes gets its keys
	og := GuardKey(old.KeyHash)
	return []*store.Write{
		store.Put(next).When(store.Is("keyHash", old.KeyHash)),
		store.Delete(og.PK, og.SK),
		store.PutNew(guardOf(next)),
	}
}

// deleteWrites remove key k and its guard; the key must still carry k's hash.
func deleteWrites(k *Key) []*store.Write {
	g := GuardKey(k.KeyHash)
	return []*store.Write{
		store.Delete(k.PK, k.SK).When(store.Is("keyHash", k.KeyHash)),
		store.Delete(g.PK, g.SK),
	}
}

// Consume is the write agent enrollment adds to its transaction: one more use
// of key keyID of orgID, only while the stored hash is hash, expiresAt is after
// now and usageCount is below maxUsage (or maxUsage is absent: unlimited).
func Consume(orgID, keyID, hash, now string) *store.Write {
	usable := store.Is("keyHash", hash).
		And(expression.Name("expiresAt").GreaterThan(expression.Value(now))).
		And(expression.Name("maxUsage").AttributeNotExists().Or(expression.Name("usageCount").LessThan(expression.Name("maxUsage"))))
	return store.Change(store.OrgPK(orgID), "EKEY#"+keyID, expression.Add(expression.Name("usageCount"), expression.Value(1))).
		When(usable).Exists()
}

// siteExists checks, in a transaction, that the site at sk exists.
func siteExists(pk, sk string) *store.Write {
	return store.Assert(pk, sk, store.Present())
}

func failedAt(err error, i int) bool {
	var te *store.TxError
	if !errors.As(err, &te) {
		return false
	}
	return te.FailedAt(i) || te.FailedAt(-1)
}
