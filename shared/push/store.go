package push

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes push targets and mobile approval rows.
type Store struct{ St *store.Store }

// targetsAndGuard reads a user's target row and a token's guard in one
// BatchGetItem; a missing row is an empty one (version 0), a missing guard nil.
func (s Store) targetsAndGuard(ctx context.Context, userID, platform, token string) (*Targets, *guard, error) {
	tk, gk := TargetsKey(userID), guardKey(platform, token)
	items, err := s.St.BatchGet(ctx, tk, gk)
	if err != nil {
		return nil, nil, fmt.Errorf("read push targets of %s: %w", userID, err)
	}
	ts := &Targets{UserID: userID}
	if it, ok := items[tk.PK+"|"+tk.SK]; ok {
		if err := store.Unmarshal(it, ts); err != nil {
			return nil, nil, err
		}
	}
	var g *guard
	if it, ok := items[gk.PK+"|"+gk.SK]; ok {
		g = &guard{}
		if err := store.Unmarshal(it, g); err != nil {
			return nil, nil, err
		}
	}
	return ts, g, nil
}

// Targets reads a user's push targets (an empty row when none).
func (s Store) Targets(ctx context.Context, userID string) (*Targets, error) {
	k := TargetsKey(userID)
	ts := &Targets{UserID: userID}
	if err := s.St.Get(ctx, k.PK, k.SK, ts); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return &Targets{UserID: userID}, nil
		}
		return nil, fmt.Errorf("read push targets of %s: %w", userID, err)
	}
	return ts, nil
}

// putTargets writes ts if it is still at version prev (absent for 0).
func putTargets(ts *Targets, prev int) *store.Write {
	k := TargetsKey(ts.UserID)
	ts.Keys = store.Keys{PK: k.PK, SK: k.SK}
	ts.Version = prev + 1
	if prev == 0 {
		return store.Put(ts).When(store.Absent())
	}
	return store.Put(ts).When(store.Is("version", prev))
}

// putGuard gives a token to userID, if its guard is still as read (prev nil:
// absent).
func putGuard(platform, token, userID, targetID string, prev *guard) *store.Write {
	k := guardKey(platform, token)
	g := &guard{Keys: store.Keys{PK: k.PK, SK: k.SK}, UserID: userID, TargetID: targetID}
	if prev == nil {
		return store.Put(g).When(store.Absent())
	}
	return store.Put(g).When(store.Is("userId", prev.UserID).And(store.Is("targetId", prev.TargetID)))
}

// dropGuard removes a token's guard if userID still holds it.
func dropGuard(t Target, userID string) *store.Write {
	k := guardKey(t.Platform, t.Token)
	return store.Delete(k.PK, k.SK).When(store.Is("userId", userID))
}

// Approvals lists the mobile approval rows of an elevation request.
func (s Store) Approvals(ctx context.Context, orgID, reqID string) ([]Approval, error) {
	var out []Approval
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: approvalPrefix(reqID)}, &out); err != nil {
		return nil, fmt.Errorf("mobile approvals of %s: %w", reqID, err)
	}
	return out, nil
}

// closeWrite moves a pending approval to status (expired or decided).
func closeWrite(a *Approval, status, at string) *store.Write {
	return store.Change(a.PK, a.SK, expression.Set(expression.Name("status"), expression.Value(status)).
		Set(expression.Name("closedAt"), expression.Value(at))).When(store.Is("status", StatusPending))
}

// countWrite adds n mobile approvals to elevation request r, if it is still
// pending.
func countWrite(r *pam.Request, n int) *store.Write {
	k := pam.RequestKeys(r.OrgID, r.ID)
	return store.Change(k.PK, k.SK, expression.Add(expression.Name("mobileApprovals"), expression.Value(n))).
		When(store.Is("status", pam.StatusPending)).Exists()
}
