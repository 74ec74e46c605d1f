package script

import (
	"context"
	"fmt"
	"strings"

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

// List index keys: a script is listed by name (case-insensitively, then id)
// in its partner's partition of GSI3 and its organization's partition of GSI4.
// listSep sorts below every character a name may hold (valid.Name refuses
// control characters), so "ab" sorts before "ab-1" as strings.Compare has it.
const listSep = "\x01"

// PartnerListPK is the GSI3 partition of the scripts of partner partnerID.
func PartnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#SCRIPTS" }

// OrgListPK is the GSI4 partition of the scripts of organization orgID.
func OrgListPK(orgID string) string { return store.OrgPK(orgID) + "#SCRIPTS" }

// SetListKeys puts sc into the list indexes (create and every replace: a
// rename moves its sort keys; a delete removes the row and so its index rows).
func SetListKeys(sc *Script) {
	sc.SetList(PartnerListPK, OrgListPK, sc.PartnerID, sc.OrgID, strings.ToLower(sc.Name)+listSep+sc.ID)
}

func createWrite(sc *Script) *store.Write {
	SetListKeys(sc)
	return store.PutNew(sc)
}

func replaceWrite(sc *Script, prev int) *store.Write {
	sc.Version = prev + 1
	SetListKeys(sc)
	return store.Put(sc).When(store.Is("version", prev))
}

func deleteWrite(sc *Script) *store.Write {
	return store.Delete(sc.PK, sc.SK).When(store.Is("version", sc.Version))
}
