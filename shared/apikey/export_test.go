package apikey

import (
	"context"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/store"
)

// SeedKey writes an active API key record of organization orgID created at
// createdAt, as Create writes it (list index keys included; no guard, so it
// authenticates nothing), and returns its id.
func SeedKey(ctx context.Context, st *store.Store, orgID, partnerID, createdAt string) (string, error) {
	id := uuid.NewString()
	k := &Key{Keys: recordKeys(orgID, id), ID: id, OrgID: orgID, PartnerID: partnerID, Name: "seed", KeyPrefix: "svc_seed0000",
		KeyHash: "seed-" + id, Scopes: []string{}, RateLimit: DefaultRateLimit, CreatedBy: uuid.NewString(),
		CreatedAt: createdAt, UpdatedAt: createdAt, Status: StatusActive, Version: 1}
	return id, st.Do(ctx, createWrites(k, nil)[0])
}

// SeedPrincipal writes an active service principal as CreatePrincipal writes
// it (without its key) and returns its id.
func SeedPrincipal(ctx context.Context, st *store.Store, orgID, partnerID, createdAt string) (string, error) {
	id := uuid.NewString()
	p := &Principal{Keys: principalKeys(orgID, id), ID: id, OrgID: orgID, PartnerID: partnerID, Name: "seed",
		Scopes: []string{"devices:read"}, Status: SPActive, APIKeyID: uuid.NewString(), CreatedBy: uuid.NewString(),
		CreatedAt: createdAt, UpdatedAt: createdAt, Version: 1}
	return id, st.Do(ctx, putPrincipal(p))
}

// MintPrincipalKeys writes n more active keys of principal id of orgID, as a
// rotation writes its new key (record and guard), and returns their material.
func MintPrincipalKeys(ctx context.Context, st *store.Store, orgID, id string, n int, now string) ([]string, error) {
	sp, err := (Store{St: st}).Principal(ctx, orgID, id)
	if err != nil {
		return nil, err
	}
	var raws []string
	for range n {
		k, raw, err := (&Service{}).principalKey(sp, now)
		if err != nil {
			return nil, err
		}
		if err := st.Commit(ctx, (&store.Tx{}).Add(createWrites(k, nil)...)); err != nil {
			return nil, err
		}
		raws = append(raws, raw)
	}
	return raws, nil
}
