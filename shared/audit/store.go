package audit

import (
	"context"
	"fmt"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// Put stamps e with an id and time and returns the write to add to the change's transaction.
func Put(clk clock.Clock, e Entry) *store.Write {
	return store.PutNew(stamp(clk.Now(), e))
}

// Log writes a record on its own, for events that change nothing else (a denied
// attempt, a login). Changes use Put inside their transaction instead.
func Log(ctx context.Context, st *store.Store, e Entry) error {
	if err := st.Do(ctx, Put(st.Clock, e)); err != nil {
		return fmt.Errorf("audit %s: %w", e.Action, err)
	}
	return nil
}

// List returns up to limit records of a tenant, newest first.
func List(ctx context.Context, st *store.Store, tenant string, limit int32) ([]Record, error) {
	res, err := st.Page(ctx, store.Query{PK: "AUDIT#" + tenant, Descending: true, Limit: limit}, "")
	if err != nil {
		return nil, fmt.Errorf("audit list %s: %w", tenant, err)
	}
	out := make([]Record, 0, len(res.Items))
	for _, it := range res.Items {
		var r Record
		if err := store.Unmarshal(it, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}
