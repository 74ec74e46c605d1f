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
	return id, st.Do(ctx, CreateWrites(k, nil)[0])
}
