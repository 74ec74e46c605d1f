package script

import (
	"context"
	"fmt"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// rows is the organization-owned row repository of scripts (store.OrgRows).
func (s Store) rows() store.OrgRows[Script] { return store.OrgRows[Script]{St: s.St, Kind: "SCRIPT"} }

// Get reads script id of organization orgID.
func (s Store) Get(ctx context.Context, orgID, id string) (*Script, error) {
	return s.rows().Get(ctx, orgID, id)
}

// ByID finds script id of whatever organization (GSI1).
func (s Store) ByID(ctx context.Context, id string) (*Script, error) { return s.rows().ByID(ctx, id) }

// OrgScripts lists the scripts of organization orgID.
func (s Store) OrgScripts(ctx context.Context, orgID string) ([]Script, error) {
	out := []Script{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "SCRIPT#"}, &out); err != nil {
		return nil, fmt.Errorf("scripts of %s: %w", orgID, err)
	}
	return out, nil
}

func createWrite(sc *Script) *store.Write { return store.PutNew(sc) }

func replaceWrite(sc *Script, prev int) *store.Write {
	sc.Version = prev + 1
	return store.Put(sc).When(store.Is("version", prev))
}

func deleteWrite(sc *Script) *store.Write {
	return store.Delete(sc.PK, sc.SK).When(store.Is("version", sc.Version))
}
