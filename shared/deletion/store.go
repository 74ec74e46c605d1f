package deletion

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Store reads and writes the rows of the package doc.
type Store struct{ St *store.Store }

// Request reads request id.
func (s Store) Request(ctx context.Context, id string) (*Request, error) {
	var r Request
	k := requestKeys(id)
	if err := s.St.Get(ctx, k.PK, k.SK, &r); err != nil {
		return nil, fmt.Errorf("deletion request %s: %w", id, err)
	}
	return &r, nil
}

// OpenOf reads the open request of userID (store.ErrNotFound when none).
func (s Store) OpenOf(ctx context.Context, userID string) (*Request, error) {
	var g openGuard
	k := openKey(userID)
	if err := s.St.Get(ctx, k.PK, k.SK, &g); err != nil {
		return nil, err
	}
	return s.Request(ctx, g.RequestID)
}

// Requests reads requests by id (one BatchGetItem per 100).
func (s Store) Requests(ctx context.Context, ids []string) ([]Request, error) {
	refs := make([]store.KeyRef, 0, len(ids))
	for _, id := range ids {
		refs = append(refs, requestKeys(id))
	}
	out := []Request{}
	if len(refs) == 0 {
		return out, nil
	}
	got, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, err
	}
	for _, it := range got {
		var r Request
		if err := store.Unmarshal(it, &r); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// TenantRequestIDs lists the ids of the requests indexed under tenant (a
// tenant key such as ORG#<oid>).
func (s Store) TenantRequestIDs(ctx context.Context, tenant string) ([]string, error) {
	var rows []tenantRow
	if err := s.St.AllInto(ctx, store.Query{PK: "DELREQS#" + tenant}, &rows); err != nil {
		return nil, fmt.Errorf("deletion requests of %s: %w", tenant, err)
	}
	ids := make([]string, 0, len(rows))
	for _, r := range rows {
		ids = append(ids, r.RequestID)
	}
	return ids, nil
}

// All lists every request (GSI2).
func (s Store) All(ctx context.Context) ([]Request, error) {
	out := []Request{}
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI2, PK: "DELREQS"}, &out); err != nil {
		return nil, fmt.Errorf("deletion requests: %w", err)
	}
	return out, nil
}

// Due lists open requests of status st whose processBy is at most before
// ("" for any), from GSI1.
func (s Store) Due(ctx context.Context, st Status, before string) ([]Request, error) {
	out := []Request{}
	q := store.Query{Index: store.GSI1, PK: dueIndex(st)}
	if before != "" {
		q.SKTo = before + "~"
	}
	if err := s.St.AllInto(ctx, q, &out); err != nil {
		return nil, fmt.Errorf("due deletion requests: %w", err)
	}
	return out, nil
}

// AccountRows lists every row of the user's partition (keys only matter).
func (s Store) AccountRows(ctx context.Context, userID string) ([]store.Keys, error) {
	var out []store.Keys
	if err := s.St.AllInto(ctx, store.Query{PK: user.PK(userID)}, &out); err != nil {
		return nil, fmt.Errorf("rows of %s: %w", userID, err)
	}
	return out, nil
}

// Writes. Each names the condition that makes it compare-and-swap.

func createWrites(r *Request) []*store.Write {
	k := requestKeys(r.ID)
	r.Keys = store.Keys{PK: k.PK, SK: k.SK, GSI1PK: dueIndex(StatusPending), GSI1SK: r.ProcessBy + "#" + r.ID,
		GSI2PK: "DELREQS", GSI2SK: r.RequestedAt + "#" + r.ID}
	ok := openKey(r.UserID)
	ws := []*store.Write{
		store.PutNew(openGuard{Keys: store.Keys{PK: ok.PK, SK: ok.SK}, RequestID: r.ID}),
		store.PutNew(r),
	}
	for _, t := range r.Tenants {
		ws = append(ws, store.Put(tenantRow{Keys: store.Keys{PK: "DELREQS#" + t, SK: r.RequestedAt + "#" + r.ID}, RequestID: r.ID}))
	}
	for _, p := range r.Partners {
		if !contains(r.Tenants, store.PartnerPK(p)) {
			ws = append(ws, store.Put(tenantRow{Keys: store.Keys{PK: "DELREQS#" + store.PartnerPK(p), SK: r.RequestedAt + "#" + r.ID}, RequestID: r.ID}))
		}
	}
	return ws
}

// moveWrite stores next (status and decision fields) if the request is still
// at version prev with status from.
func moveWrite(next *Request, prev int, from Status) *store.Write {
	k := requestKeys(next.ID)
	upd := expression.Set(expression.Name("status"), expression.Value(next.Status)).
		Set(expression.Name("processedAt"), expression.Value(next.ProcessedAt)).
		Set(expression.Name("processedBy"), expression.Value(next.ProcessedBy)).
		Set(expression.Name("adminNote"), expression.Value(next.AdminNote)).
		Set(expression.Name("updatedAt"), expression.Value(next.UpdatedAt)).
		Set(expression.Name("version"), expression.Value(prev+1))
	if len(next.RemovedFrom) > 0 {
		upd = upd.Set(expression.Name("removedFrom"), expression.Value(next.RemovedFrom))
	}
	switch next.Status {
	case StatusPending, StatusProcessing:
		upd = upd.Set(expression.Name("GSI1PK"), expression.Value(dueIndex(next.Status))).
			Set(expression.Name("GSI1SK"), expression.Value(next.ProcessBy+"#"+next.ID))
	default:
		upd = upd.Remove(expression.Name("GSI1PK")).Remove(expression.Name("GSI1SK"))
	}
	if next.Status == StatusCompleted {
		upd = upd.Set(expression.Name("completedAt"), expression.Value(next.CompletedAt)).
			Set(expression.Name("userEmail"), expression.Value(next.UserEmail)).
			Set(expression.Name("userName"), expression.Value(next.UserName))
	}
	return store.Change(k.PK, k.SK, upd).When(store.Is("version", prev).And(store.Is("status", from)))
}

// releaseWrite deletes the open-request guard of userID if it names id.
func releaseWrite(userID, id string) *store.Write {
	k := openKey(userID)
	return store.Delete(k.PK, k.SK).When(store.Is("requestId", id))
}

// deleteRow deletes one row of the account's partition.
func deleteRow(k store.Keys) *store.Write { return store.Delete(k.PK, k.SK) }

// anonymiseWrite replaces the personal fields of the profile of u (read at
// version u.Version), disables it and ends every token.
func anonymiseWrite(u *user.User, name, email, stamp, now string) *store.Write {
	k := user.ProfileKey(u.ID)
	upd := expression.Set(expression.Name("name"), expression.Value(name)).
		Set(expression.Name("email"), expression.Value(email)).
		Set(expression.Name("status"), expression.Value(user.StatusDisabled)).
		Set(expression.Name("mfaEnabled"), expression.Value(false)).
		Set(expression.Name("phoneVerified"), expression.Value(false)).
		Set(expression.Name("tokensValidAfter"), expression.Value(stamp)).
		Set(expression.Name("updatedAt"), expression.Value(now)).
		Add(expression.Name("version"), expression.Value(1))
	for _, a := range []string{"passwordHash", "mfaSecret", "mfaRecoveryCodes", "mfaLastStep", "phoneNumber", "mfaMethod",
		"mfaSmsEnabled", "passkeyCount", "avatarUrl", "lastLoginAt", "passwordChangedAt"} {
		upd = upd.Remove(expression.Name(a))
	}
	return store.Change(k.PK, k.SK, upd).When(store.Is("version", u.Version))
}

// releaseEmailWrite frees the e-mail guard of address if it still names userID.
func releaseEmailWrite(address, userID string) *store.Write {
	k := user.EmailKey(address)
	return store.Delete(k.PK, k.SK).When(store.Is("userId", userID))
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}
