package savedfilter

import (
	"context"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// rows is the organization-owned row repository of filters (store.OrgRows).
func (s Store) rows() store.OrgRows[Filter] { return store.OrgRows[Filter]{St: s.St, Kind: "FILTER"} }

// Get reads filter id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*Filter, error) {
	return s.rows().Get(ctx, orgID, id)
}

// ByID finds filter id of whatever organization (GSI1); the caller checks the
// organization it names.
func (s Store) ByID(ctx context.Context, id string) (*Filter, error) { return s.rows().ByID(ctx, id) }

// List index keys: a filter is listed newest first (createdAt, then the id
// complemented, read in descending order; store.NewestSK) in its partner's
// partition of GSI3 and its organization's partition of GSI4.

// PartnerListPK is the GSI3 partition of the filters of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#FILTERS" }

// OrgListPK is the GSI4 partition of the filters of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#FILTERS" }

// SetListKeys puts f into the list indexes (a delete removes the row and so
// its index rows).
func SetListKeys(f *Filter) {
	f.SetList(PartnerListPK, OrgListPK, f.PartnerID, f.OrgID, store.NewestSK(f.CreatedAt, f.ID))
}

// createWrite puts a new filter.
func createWrite(f *Filter) *store.Write {
	SetListKeys(f)
	return store.PutNew(f)
}

// replaceWrite overwrites f (version bumped) if it is still at version prev.
func replaceWrite(f *Filter, prev int) *store.Write {
	f.Version = prev + 1
	SetListKeys(f)
	return store.Put(f).When(store.Is("version", prev))
}

// deleteWrite deletes f if it is still at its version.
func deleteWrite(f *Filter) *store.Write {
	return store.Delete(f.PK, f.SK).When(store.Is("version", f.Version))
}
