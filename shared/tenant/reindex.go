package tenant

import "github.com/gale-rmm/gale/shared/store"

// Reindex gives organizations, sites and device groups written before their
// lists had an index their list keys (store.Backfill), computed as their
// creates and renames set them; a rename meanwhile (From) is read again.
func Reindex() []store.Reindex {
	name := []string{"name"}
	return []store.Reindex{
		{Kind: "organization", SKPrefix: orgSK, From: name, Except: func(sk string) bool { return sk != orgSK },
			Keys: reindexed(func(o *Organization) store.Keys { o.SetListKeys(); return o.Keys })},
		{Kind: "site", SKPrefix: siteSK, From: name,
			Keys: reindexed(func(st *Site) store.Keys { st.SetListKeys(); return st.Keys })},
		{Kind: "device group", SKPrefix: groupSK, From: name,
			Keys: reindexed(func(g *DeviceGroup) store.Keys { g.SetListKeys(); return g.Keys })},
	}
}

// reindexed decodes a row as a T and answers the keys set gives it.
func reindexed[T any](set func(*T) store.Keys) func(store.Item) (store.Keys, error) {
	return func(it store.Item) (store.Keys, error) {
		var v T
		if err := store.Unmarshal(it, &v); err != nil {
			return store.Keys{}, err
		}
		return set(&v), nil
	}
}
