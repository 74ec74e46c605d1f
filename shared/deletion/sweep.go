package deletion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// DeletedName is the name an anonymised account keeps.
const DeletedName = "Deleted user"

// DeletedEmail is the address an anonymised account keeps.
func DeletedEmail(userID string) string { return "deleted-" + userID + "@deleted.invalid" }

// SweepGrace carries out the due requests (the sweeper's deletion-grace job):
// pending ones past processBy and every processing one. It returns how many
// it completed; finished work is not done again.
func (s *Service) SweepGrace(ctx context.Context) (int, error) {
	due, err := s.St.Due(ctx, StatusPending, clock.Format(s.Clock.Now()))
	if err != nil {
		return 0, err
	}
	processing, err := s.St.Due(ctx, StatusProcessing, "")
	if err != nil {
		return 0, err
	}
	n := 0
	var failed error
	for _, r := range append(due, processing...) {
		// The index is eventually consistent: decide on the request itself.
		cur, err := s.St.Request(ctx, r.ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if cur.Status == StatusPending && cur.ProcessBy > clock.Format(s.Clock.Now()) || cur.Status == StatusCompleted ||
			cur.Status == StatusCancelled {
			continue
		}
		done, err := s.carryOut(ctx, cur)
		if errors.Is(err, user.ErrLastAdmin) {
			// The account is a tenant's last administrator: it waits (and
			// the next run retries) until the tenant has another one.
			slog.WarnContext(ctx, "deletion request waits: last administrator of a tenant", "request", cur.ID)
			continue
		}
		if err != nil {
			failed = errors.Join(failed, fmt.Errorf("deletion request %s: %w", cur.ID, err))
			continue
		}
		if done {
			n++
		}
	}
	return n, failed
}

// carryOut deletes the account of r, each step idempotent, and completes r.
func (s *Service) carryOut(ctx context.Context, r *Request) (bool, error) {
	ms, err := s.Users.Memberships(ctx, r.UserID)
	if err != nil {
		return false, err
	}
	for _, m := range ms {
		rm := Removal{UserID: r.UserID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, Actor: audit.SystemActor,
			Reason: "account_deletion:" + r.ID}
		if err := s.Remover.RemoveMember(ctx, rm); err != nil {
			return false, err
		}
	}
	// Sessions, passkeys, invitations, reset and MFA setup rows: every row of
	// the account's partition but the profile, its memberships (above) and
	// the open-request guard (released with the completion).
	rows, err := s.St.AccountRows(ctx, r.UserID)
	if err != nil {
		return false, err
	}
	tx := &store.Tx{}
	for _, k := range rows {
		if k.SK == "PROFILE" || k.SK == openKey(r.UserID).SK {
			continue
		}
		tx.Add(deleteRow(k))
		if tx.Len() == store.MaxTxItems {
			if err := s.St.St.Commit(ctx, tx); err != nil {
				return false, fmt.Errorf("delete rows of %s: %w", r.UserID, err)
			}
			tx = &store.Tx{}
		}
	}
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return false, fmt.Errorf("delete rows of %s: %w", r.UserID, err)
	}
	if err := s.anonymise(ctx, r.UserID); err != nil {
		return false, err
	}
	now := clock.Format(s.Clock.Now())
	next := *r
	next.Status, next.CompletedAt, next.UpdatedAt = StatusCompleted, &now, now
	next.UserEmail, next.UserName = DeletedEmail(r.UserID), DeletedName
	tx = (&store.Tx{}).Add(moveWrite(&next, r.Version, r.Status), releaseWrite(r.UserID, r.ID),
		audit.Put(s.Clock, audit.Entry{Actor: audit.SystemActor, Action: "user.account_deletion.completed",
			ResourceType: "account_deletion_request", ResourceID: r.ID, Details: map[string]any{"userId": r.UserID,
				"memberships": len(ms), "rows": len(rows)}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return false, nil // completed (or cancelled) by a concurrent run
		}
		return false, err
	}
	return true, nil
}

// anonymise replaces the account's personal fields and releases its e-mail,
// unless done already.
func (s *Service) anonymise(ctx context.Context, userID string) error {
	u, err := s.Users.Get(ctx, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if u.Email == DeletedEmail(userID) && u.Status == user.StatusDisabled {
		return nil
	}
	now := s.Clock.Now()
	w := anonymiseWrite(u, DeletedName, DeletedEmail(userID), clock.Stamp(now), clock.Format(now))
	err = s.St.St.Commit(ctx, (&store.Tx{}).Add(w, releaseEmailWrite(u.Email, userID)))
	var te *store.TxError
	if errors.As(err, &te) {
		// A concurrent run anonymised it, or the e-mail guard no longer
		// names the account: read again and anonymise the profile alone.
		u, gerr := s.Users.Get(ctx, userID)
		switch {
		case gerr != nil:
			err = gerr
		case u.Email == DeletedEmail(userID) && u.Status == user.StatusDisabled:
			err = nil
		default:
			err = s.St.St.Do(ctx, anonymiseWrite(u, DeletedName, DeletedEmail(userID), clock.Stamp(now), clock.Format(now)))
		}
	}
	if err != nil {
		return fmt.Errorf("anonymise %s: %w", userID, err)
	}
	return nil
}
