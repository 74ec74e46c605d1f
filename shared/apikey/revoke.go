package apikey

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
)

// revokeBatch is how many keys one revocation transaction carries: three
// actions each (the key, its guard, the audit record) within DynamoDB's 100.
const revokeBatch = 33

// RevokeCreatedBy revokes every active user-created key that userID created
// in the organizations of partner partnerID, or with orgID only in that one
// (status revoked, one api_key.revoke audit record
// each, details.reason "creator_removed"), for shared/user's RemoveMembership
// (user.KeyRevoker). Keys owned by a service principal are not the user's and
// stay; keys already revoked or expired are left alone, so it may be re-run.
// before, when not "", limits it to keys created before that time. It
// returns how many keys it revoked.
//
// The keys go in transactions of revokeBatch, so a removal's calls do not grow
// with the keys a user created nor with the partner's organizations (one
// Query of the creator's index, one transaction per 33 keys); a batch that loses a race to a rotation or revocation is
// cancelled whole and its keys are then revoked one by one.
func (s *Service) RevokeCreatedBy(ctx context.Context, actor audit.Actor, userID, partnerID, orgID, before string) (int, error) {
	// Called after the removal it belongs to was authorized (user.RemoveMembership).
	keys, err := s.St.CreatedKeys(ctx, userID, partnerID, orgID)
	if err != nil {
		return 0, err
	}
	var mine []*Key
	for i := range keys {
		k := &keys[i]
		if k.PrincipalID == "" && k.Status == StatusActive && (before == "" || k.CreatedAt < before) {
			mine = append(mine, k)
		}
	}
	n, err := s.RevokeAll(ctx, actor, mine, "creator_removed", func(k *Key) bool { return k.PrincipalID == "" })
	if err != nil {
		return n, fmt.Errorf("revoke api keys of removed creator %s: %w", userID, err)
	}
	return n, nil
}

// RevokeAll revokes keys (a removed creator's here, a disabled principal's
// for shared/principal) in transactions of revokeBatch (one api_key.revoke
// audit record each, details.reason reason). A batch that loses a race (a
// key rotated, revoked, expired or migrated meanwhile) is cancelled whole and
// its keys are then revoked one by one: a key no longer active, or no longer
// owned as owned says, is left alone; one rotated under us is re-read and
// tried once more. It answers how many keys it revoked, and may be re-run.
func (s *Service) RevokeAll(ctx context.Context, actor audit.Actor, keys []*Key, reason string, owned func(*Key) bool) (int, error) {
	n := 0
	now := clock.Format(s.Clock.Now())
	for batch := range slices.Chunk(keys, revokeBatch) {
		tx := &store.Tx{}
		for _, k := range batch {
			tx.Add(s.revokeWrites(actor, k, reason, now)...)
		}
		err := s.St.St.Commit(ctx, tx)
		if err == nil {
			n += len(batch)
			continue
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return n, err
		}
		for _, k := range batch {
			done, err := s.revokeOne(ctx, actor, k, reason, owned, now)
			if err != nil {
				return n, err
			}
			if done {
				n++
			}
		}
	}
	return n, nil
}

// revokeOne revokes k on its own after its batch was cancelled.
func (s *Service) revokeOne(ctx context.Context, actor audit.Actor, k *Key, reason string, owned func(*Key) bool, now string) (bool, error) {
	err := s.St.St.Commit(ctx, (&store.Tx{}).Add(s.revokeWrites(actor, k, reason, now)...))
	if err == nil {
		return true, nil
	}
	if !errors.Is(err, store.ErrConditionFailed) {
		return false, fmt.Errorf("revoke api key %s: %w", k.ID, err)
	}
	cur, err := s.St.Key(ctx, k.OrgID, k.ID)
	if err != nil || cur.Status != StatusActive || !owned(cur) {
		return false, err
	}
	if err := s.St.St.Commit(ctx, (&store.Tx{}).Add(s.revokeWrites(actor, cur, reason, now)...)); err != nil {
		return false, fmt.Errorf("revoke api key %s: %w", k.ID, err)
	}
	return true, nil
}

// revokeWrites revoke k and record why.
func (s *Service) revokeWrites(actor audit.Actor, k *Key, reason, now string) []*store.Write {
	return append(StatusWrites(k, StatusRevoked, now),
		audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: k.OrgID, PartnerID: k.PartnerID, Action: "api_key.revoke",
			ResourceType: "api_key", ResourceID: k.ID, ResourceName: k.Name,
			Details: map[string]any{"keyPrefix": k.KeyPrefix, "previousStatus": k.Status, "reason": reason}}))
}
