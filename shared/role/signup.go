package role

import (
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/store"
)

// NewPartnerAdmin returns a custom role of partnerID copying the system Partner
// Admin (`*:*`, Force MFA on, not a system role) and the writes that create it
// with its name guard, for partner signup to commit with the partner itself.
// now is the creation time (clock.Format).
func NewPartnerAdmin(partnerID, name, now string) (*Role, []*store.Write) {
	src, _ := systemRole(PartnerAdminID)
	r := &Role{ID: uuid.NewString(), Name: name, Description: src.Description, ForceMFA: src.ForceMFA,
		Permissions: append([]string(nil), src.Permissions...), Version: 1, CreatedAt: now, UpdatedAt: now}
	ownerOfPartner(partnerID).stamp(r)
	return r, []*store.Write{store.PutNew(r), putName(r.Owner, name, r.ID)}
}
