package apikey

import "github.com/gale-rmm/gale/shared/store"

// Reindex gives API keys written before their list had an index their list
// keys, and those written before the creator index their place in it
// (store.Backfill; shared/principal has its own).
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
	}
}
