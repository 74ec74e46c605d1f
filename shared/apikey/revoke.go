package apikey

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// RevokeCreatedBy revokes every active user-created key that userID created
// in the organizations orgIDs (status revoked, one api_key.revoke audit record
// each, details.reason "creator_removed"), for shared/user's RemoveMembership
// (user.KeyRevoker). Keys owned by a service principal are not the user's and
// stay; keys already revoked or expired are left alone, so it may be re-run.
// before, when not "", limits it to keys created before that time. It
// returns how many keys it revoked.
func (s *Service) RevokeCreatedBy(ctx context.Context, actor audit.Actor, userID string, orgIDs []string, before string) (int, error) {
	// Called after the removal it belongs to was authorized (user.RemoveMembership).
	n := 0
	for _, orgID := range orgIDs {
		keys, err := s.St.OrgKeys(ctx, orgID)
		if err != nil {
			return n, err
		}
		for i := range keys {
			k := &keys[i]
			if k.CreatedBy != userID || k.PrincipalID != "" || k.Status != StatusActive || (before != "" && k.CreatedAt >= before) {
				continue
			}
			now := clock.Format(s.Clock.Now())
			tx := (&store.Tx{}).Add(statusWrites(k, StatusRevoked, now)...)
			tx.Add(audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.revoke",
				ResourceType: "api_key", ResourceID: k.ID, ResourceName: k.Name,
				Details: map[string]any{"keyPrefix": k.KeyPrefix, "previousStatus": k.Status, "reason": "creator_removed"}}))
			err := s.St.St.Commit(ctx, tx)
			if err == nil {
				n++
				continue
			}
			if !errors.Is(err, store.ErrConditionFailed) {
				return n, fmt.Errorf("revoke api key %s of removed creator: %w", k.ID, err)
			}
			// Changed meanwhile: revoked, expired or migrated is fine; still
			// active and the user's (rotated under us) is tried once more.
			cur, gerr := s.St.Key(ctx, k.OrgID, k.ID)
			if gerr != nil {
				return n, gerr
			}
			if cur.Status == StatusActive && cur.PrincipalID == "" {
				tx := (&store.Tx{}).Add(statusWrites(cur, StatusRevoked, now)...)
				tx.Add(audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: cur.OrgID, PartnerID: cur.PartnerID, Action: "api_key.revoke",
					ResourceType: "api_key", ResourceID: cur.ID, ResourceName: cur.Name,
					Details: map[string]any{"keyPrefix": cur.KeyPrefix, "previousStatus": cur.Status, "reason": "creator_removed"}}))
				if err := s.St.St.Commit(ctx, tx); err != nil {
					return n, fmt.Errorf("revoke api key %s of removed creator: %w", k.ID, err)
				}
				n++
			}
		}
	}
	return n, nil
}
