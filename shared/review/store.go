package review

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Reviews lists the reviews of the tenant partition pk.
func (s Store) Reviews(ctx context.Context, pk string) ([]Review, error) {
	out := []Review{}
	if err := s.St.AllInto(ctx, store.Query{PK: pk, SKPrefix: "REVIEW#"}, &out); err != nil {
		return nil, fmt.Errorf("reviews of %s: %w", pk, err)
	}
	return out, nil
}

// Review reads review id of the tenant partition pk.
func (s Store) Review(ctx context.Context, pk, id string) (*Review, error) {
	var r Review
	if err := s.St.Get(ctx, pk, "REVIEW#"+id, &r); err != nil {
		return nil, fmt.Errorf("review %s: %w", id, err)
	}
	return &r, nil
}

// Items lists the items of review id.
func (s Store) Items(ctx context.Context, id string) ([]Item, error) {
	out := []Item{}
	if err := s.St.AllInto(ctx, store.Query{PK: "REVIEW#" + id, SKPrefix: "ITEM#"}, &out); err != nil {
		return nil, fmt.Errorf("items of review %s: %w", id, err)
	}
	return out, nil
}

// ReviewAndItem reads review id of pk and its item itemID in one call; either
// missing is store.ErrNotFound.
func (s Store) ReviewAndItem(ctx context.Context, pk, id, itemID string) (*Review, *Item, error) {
	rk := store.KeyRef{PK: pk, SK: "REVIEW#" + id}
	ik := itemKeys(id, itemID)
	got, err := s.St.BatchGet(ctx, rk, store.KeyRef{PK: ik.PK, SK: ik.SK})
	if err != nil {
		return nil, nil, fmt.Errorf("review %s item %s: %w", id, itemID, err)
	}
	ri, ok1 := got[rk.PK+"|"+rk.SK]
	ii, ok2 := got[ik.PK+"|"+ik.SK]
	if !ok1 || !ok2 {
		return nil, nil, store.ErrNotFound
	}
	var r Review
	var it Item
	if err := store.Unmarshal(ri, &r); err != nil {
		return nil, nil, err
	}
	if err := store.Unmarshal(ii, &it); err != nil {
		return nil, nil, err
	}
	return &r, &it, nil
}

// CompletingBefore lists reviews whose completion marker was set before at
// (GSI2 REVIEWCOMPLETING), oldest first.
func (s Store) CompletingBefore(ctx context.Context, at string) ([]Review, error) {
	out := []Review{}
	q := store.Query{Index: store.GSI2, PK: completingIndex, SKTo: at + "~"}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("completing reviews: %w", err)
	}
	return out, nil
}

// Writes. Each names the condition that makes it compare-and-swap.

func createItemWrite(it *Item) *store.Write { return store.PutNew(it) }

func createReviewWrite(r *Review) *store.Write { return store.PutNew(r) }

// open is "the review is neither completed nor being completed".
func open() expression.ConditionBuilder {
	return expression.Name("status").NotEqual(expression.Value(StatusCompleted)).
		And(expression.AttributeNotExists(expression.Name("completingAt")))
}

// decisionWrite records it's decision if the item is still at version prev.
func decisionWrite(it *Item, prev int) *store.Write {
	upd := expression.Set(expression.Name("decision"), expression.Value(it.Decision)).
		Set(expression.Name("notes"), expression.Value(it.Notes)).
		Set(expression.Name("reviewedAt"), expression.Value(it.ReviewedAt)).
		Set(expression.Name("reviewedBy"), expression.Value(it.ReviewedBy)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(it.PK, it.SK, upd).When(store.Is("version", prev))
}

// Profiles reads the accounts of ids (one BatchGetItem per 100), by id;
// accounts that no longer exist are absent.
func (s Store) Profiles(ctx context.Context, ids []string) (map[string]user.User, error) {
	refs := make([]store.KeyRef, 0, len(ids))
	for _, id := range ids {
		if id != "" {
			refs = append(refs, user.ProfileKey(id))
		}
	}
	out := map[string]user.User{}
	if len(refs) == 0 {
		return out, nil
	}
	got, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, fmt.Errorf("profiles: %w", err)
	}
	for _, it := range got {
		var u user.User
		if err := store.Unmarshal(it, &u); err != nil {
			return nil, err
		}
		out[u.ID] = u
	}
	return out, nil
}

// touchWrite moves review r (read at version r.Version) on by one version,
// to status to, if it is still open and at that version.
func touchWrite(r *Review, to Status, now string) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(to)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(r.PK, r.SK, upd).When(open().And(store.Is("version", r.Version)))
}

// markCompletingWrite sets the completion marker on r if it is still open at
// the version its items were read with.
func markCompletingWrite(r *Review, at, by string) *store.Write {
	upd := expression.Set(expression.Name("completingAt"), expression.Value(at)).
		Set(expression.Name("completingBy"), expression.Value(by)).
		Set(expression.Name("GSI2PK"), expression.Value(completingIndex)).
		Set(expression.Name("GSI2SK"), expression.Value(at+"#"+r.PK+"#"+r.ID)).
		Set(expression.Name("updatedAt"), expression.Value(at))
	return store.Change(r.PK, r.SK, upd).When(open().And(store.Is("version", r.Version)))
}

// appliedWrite marks item it applied, once.
func appliedWrite(it *Item, at string) *store.Write {
	upd := expression.Set(expression.Name("appliedAt"), expression.Value(at))
	if it.Skipped != "" {
		upd = upd.Set(expression.Name("skipped"), expression.Value(it.Skipped))
	}
	return store.Change(it.PK, it.SK, upd).
		When(expression.AttributeNotExists(expression.Name("appliedAt"))).Exists()
}

// finishWrite completes r if it still carries the completion marker.
func finishWrite(r *Review, at string, revoked int) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(StatusCompleted)).
		Set(expression.Name("completedAt"), expression.Value(at)).
		Set(expression.Name("updatedAt"), expression.Value(at)).
		Set(expression.Name("revokedCount"), expression.Value(revoked)).
		Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK"))
	return store.Change(r.PK, r.SK, upd).When(expression.AttributeExists(expression.Name("completingAt")).
		And(expression.Name("status").NotEqual(expression.Value(StatusCompleted))))
}
