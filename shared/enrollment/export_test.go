package enrollment

import (
	"context"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/store"
)

// SeedKey writes an enrollment key of organization orgID created at
// createdAt and expiring at expiresAt, as Create writes it (list index keys
// included; no hash guard, so it enrolls nothing), and returns its id.
func SeedKey(ctx context.Context, st *store.Store, orgID, partnerID, createdAt, expiresAt string) (string, error) {
	id, one := uuid.NewString(), 1
	k := &Key{ID: id, OrgID: orgID, PartnerID: partnerID, Name: "seed", MaxUsage: &one, ExpiresAt: expiresAt,
		CreatedBy: uuid.NewString(), CreatedAt: createdAt, UpdatedAt: createdAt, KeyHash: "seed-" + id}
	k.Keys = KeyKeys(orgID, id, expiresAt)
	return id, st.Do(ctx, createWrites(k)[0])
}
