package enrollment

import "github.com/gale-rmm/gale/shared/store"

// Reindex gives enrollment keys written before their list had an index their
// list keys (store.Backfill).
func Reindex() store.Reindex {
	return store.Reindex{Kind: "enrollment key", SKPrefix: kind + "#", Keys: func(it store.Item) (store.Keys, error) {
		var k Key
		if err := store.Unmarshal(it, &k); err != nil {
			return store.Keys{}, err
		}
		k.setListKeys()
		return k.Keys, nil
	}}
}
