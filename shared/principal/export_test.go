package principal

import (
	"context"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/store"
)

// SeedPrincipal writes an active service principal as Create writes it
// (without its key) and returns its id.
func SeedPrincipal(ctx context.Context, st *store.Store, orgID, partnerID, createdAt string) (string, error) {
	id := uuid.NewString()
	p := &Principal{Keys: rowKeys(orgID, id), ID: id, OrgID: orgID, PartnerID: partnerID, Name: "seed",
		Scopes: []string{"devices:read"}, Status: Active, APIKeyID: uuid.NewString(), CreatedBy: uuid.NewString(),
		CreatedAt: createdAt, UpdatedAt: createdAt, Version: 1}
	return id, st.Do(ctx, put(p))
}

// MintKeys writes n more active keys of principal id of orgID, as a rotation
// writes its new key (record and guard), and returns their material.
func MintKeys(ctx context.Context, st *store.Store, orgID, id string, n int, now string) ([]string, error) {
	sp, err := (Store{St: st}).Principal(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	var raws []string
	for range n {
		k, raw, err := newKey(sp, now)
		if err != nil {
			return nil, err
		}
		if err := st.Commit(ctx, (&store.Tx{}).Add(apikey.CreateWrites(k, nil)...)); err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	return raws, nil
}
