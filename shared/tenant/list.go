package tenant

import "context"

// Collect reads the rows of each organization of orgIDs with read, one
// organization after another, and keeps those keep keeps (nil keeps all). It
// is the one in-memory list loop, for the lists no list index serves yet
// (enrollment keys, alerts, API keys, service principals, saved filters,
// scripts) and for the reads that want every row (filter previews, search):
// it reads every row of every organization, so the caller sorts and slices.
// The device list reads one page instead (store.Window).
func Collect[T any](ctx context.Context, orgIDs []string, read func(ctx context.Context, orgID string) ([]T, error), keep func(*T) bool) ([]T, error) {
	out := []T{}
	for _, id := range orgIDs {
		rows, err := read(ctx, id)
		if err != nil {
			return nil, err
		}
		for i := range rows {
			if keep == nil || keep(&rows[i]) {
				out = append(out, rows[i])
			}
		}
	}
	return out, nil
}
