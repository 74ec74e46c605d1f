package review

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// StaleAfter is how old a completion marker must be before the sweeper
// resumes the review (a live completion is left to finish by itself).
const StaleAfter = 2 * time.Minute

// Completed is the answer of complete.
type Completed struct {
	ID           string `json:"id"`
	Status       Status `json:"status"`
	CompletedAt  string `json:"completedAt"`
	RevokedCount int    `json:"revokedCount"`
}

// Complete finalizes a review (see the package doc: freeze, apply, finish). A
// review already carrying the completion marker is resumed.
func (s *Service) Complete(ctx context.Context, id string) (*Completed, error) {
	p, t, err := s.open(ctx, authz.UsersWrite)
	if err != nil {
		return nil, err
	}
	r, err := s.review(ctx, t, id)
	if err != nil {
		return nil, err
	}
	if r.Status == StatusCompleted {
		return nil, ErrAlreadyCompleted
	}
	var items []Item
	if !r.Completing() {
		if items, err = s.St.Items(ctx, r.ID); err != nil {
			return nil, err
		}
		for _, it := range items {
			if it.Decision == DecisionPending {
				return nil, ErrPendingItems
			}
		}
		at := clock.Format(s.Clock.Now())
		if err := s.St.St.Do(ctx, markCompletingWrite(r, at, p.UserID)); err != nil {
			if !errors.Is(err, store.ErrConditionFailed) {
				return nil, fmt.Errorf("freeze review %s: %w", r.ID, err)
			}
			cur, err := s.St.Review(ctx, t.pk(), r.ID)
			switch {
			case err != nil:
				return nil, err
			case cur.Status == StatusCompleted:
				return nil, ErrAlreadyCompleted
			case !cur.Completing():
				return nil, ErrChanged // a decision moved the review since its items were read
			}
			// Another call froze it: its decisions are the ones read now, not ours.
			r, items = cur, nil
		} else {
			r.CompletingAt, r.CompletingBy = at, p.UserID
		}
	}
	return s.finish(ctx, r, items, p.Actor())
}

// finish applies the frozen decisions of r (items may be nil: read them) and
// completes it. Safe to run any number of times, concurrently too.
func (s *Service) finish(ctx context.Context, r *Review, items []Item, actor audit.Actor) (*Completed, error) {
	if items == nil {
		var err error
		if items, err = s.St.Items(ctx, r.ID); err != nil {
			return nil, err
		}
	}
	for i := range items {
		it := &items[i]
		if it.Decision != DecisionRevoked || it.AppliedAt != "" {
			continue
		}
		rm := Removal{UserID: it.UserID, MembershipID: it.MemberID, RoleID: it.RoleID, Scope: r.Scope, PartnerID: r.PartnerID, OrgID: r.OrgID,
			Actor: actor, Reason: "access_review:" + r.ID}
		skipped := ""
		if err := s.Remover.RemoveMember(ctx, rm); errors.Is(err, user.ErrLastAdmin) {
			// The tenant keeps its last administrator: the item is applied as
			// kept, and counted apart from the revocations.
			skipped = "last_administrator"
		} else if errors.Is(err, user.ErrRoleChanged) {
			// Re-roled after the decision: the revocation was about a role the
			// member no longer holds, so it keeps its membership.
			skipped = "role_changed"
		} else if err != nil {
			return nil, fmt.Errorf("complete review %s: remove %s: %w", r.ID, it.UserID, err)
		}
		it.Skipped = skipped
		if err := s.St.St.Do(ctx, appliedWrite(it, clock.Format(s.Clock.Now()))); err != nil && !errors.Is(err, store.ErrConditionFailed) {
			return nil, fmt.Errorf("complete review %s: mark item %s: %w", r.ID, it.ID, err)
		}
	}
	revoked, kept := 0, []string{}
	for _, it := range items {
		switch {
		case it.Decision != DecisionRevoked:
		case it.Skipped != "":
			kept = append(kept, it.UserID)
		default:
			revoked++
		}
	}
	at := clock.Format(s.Clock.Now())
	rec := audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "access_review.complete",
		ResourceType: "access_review", ResourceID: r.ID, ResourceName: r.Name,
		Details: map[string]any{"revokedCount": revoked, "itemCount": len(items), "startedBy": r.CompletingBy, "keptLastAdministrator": kept}})
	if err := s.St.St.Commit(ctx, (&store.Tx{}).Add(finishWrite(r, at, revoked), rec)); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return nil, ErrAlreadyCompleted // another run finished it
		}
		return nil, fmt.Errorf("complete review %s: %w", r.ID, err)
	}
	return &Completed{ID: r.ID, Status: StatusCompleted, CompletedAt: at, RevokedCount: revoked}, nil
}

// ResumeStalled finishes every review whose completion marker is older than
// StaleAfter (the sweeper's access-review-completion job) and returns how
// many it finished.
func (s *Service) ResumeStalled(ctx context.Context) (int, error) {
	rs, err := s.St.CompletingBefore(ctx, clock.Format(s.Clock.Now().Add(-StaleAfter)))
	if err != nil {
		return 0, err
	}
	n := 0
	for i := range rs {
		// The index is eventually consistent: read the review itself.
		r, err := s.St.Review(ctx, rs[i].PK, rs[i].ID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return n, err
		}
		if !r.Completing() {
			continue
		}
		if _, err := s.finish(ctx, r, nil, audit.SystemActor); err != nil {
			if errors.Is(err, ErrAlreadyCompleted) {
				continue
			}
			return n, err
		}
		n++
	}
	return n, nil
}
