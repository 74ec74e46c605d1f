package savedfilter

import (
	"context"
	"fmt"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Get reads filter id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*Filter, error) {
	var f Filter
	if err := s.St.Get(ctx, store.OrgPK(orgID), "FILTER#"+id, &f); err != nil {
		return nil, fmt.Errorf("get filter %s: %w", id, err)
	}
	return &f, nil
}

// ByID finds filter id of whatever organization (GSI1); the caller checks the
// organization it names.
func (s Store) ByID(ctx context.Context, id string) (*Filter, error) {
	var out []Filter
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: "FILTERREF#" + id, SKPrefix: "FILTER"}, &out); err != nil {
		return nil, fmt.Errorf("filter %s: %w", id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("filter %s: %w", id, store.ErrNotFound)
	}
	return &out[0], nil
}

// OrgFilters lists the filters of organization orgID.
func (s Store) OrgFilters(ctx context.Context, orgID string) ([]Filter, error) {
	out := []Filter{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "FILTER#"}, &out); err != nil {
		return nil, fmt.Errorf("filters of %s: %w", orgID, err)
	}
	return out, nil
}

// createWrite puts a new filter.
func createWrite(f *Filter) *store.Write { return store.PutNew(f) }

// replaceWrite overwrites f (version bumped) if it is still at version prev.
func replaceWrite(f *Filter, prev int) *store.Write {
	f.Version = prev + 1
	return store.Put(f).When(store.Is("version", prev))
}

// deleteWrite deletes f if it is still at its version.
func deleteWrite(f *Filter) *store.Write {
	return store.Delete(f.PK, f.SK).When(store.Is("version", f.Version))
}
