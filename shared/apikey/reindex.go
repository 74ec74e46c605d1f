package apikey

import "github.com/gale-rmm/gale/shared/store"

// Reindex gives API keys and service principals written before their lists
// had an index their list keys, and API keys written before the creator
// index their place in it (store.Backfill).
func Reindex() []store.Reindex {
	return []store.Reindex{
		{Kind: "api key", SKPrefix: keyKind + "#", Creator: true, Keys: func(it store.Item) (store.Keys, error) {
			var k Key
			if err := store.Unmarshal(it, &k); err != nil {
				return store.Keys{}, err
			}
			k.setListKeys()
			return k.Keys, nil
		}},
		{Kind: "service principal", SKPrefix: principalKind + "#", Keys: func(it store.Item) (store.Keys, error) {
			var p Principal
			if err := store.Unmarshal(it, &p); err != nil {
				return store.Keys{}, err
			}
			p.setListKeys()
			return p.Keys, nil
		}},
	}
}
