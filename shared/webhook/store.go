package webhook

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// Store reads and writes the rows of the package doc.
type Store struct {
	St *store.Store
	// DeliveryRetention is how long a delivery row is kept after it was
	// created (WEBHOOK_DELIVERY_RETENTION_DAYS; zero: DefaultDeliveryRetention).
	// Its ttl is set when it is written, once: retries and redrives make new
	// rows, and every delivery ends (delivered or failed) within the retry
	// schedule, days before.
	DeliveryRetention time.Duration
}

// DefaultDeliveryRetention is how long deliveries are kept unless configured.
const DefaultDeliveryRetention = 30 * 24 * time.Hour

// Get reads webhook id of organization orgID (consistent read).
func (s Store) Get(ctx context.Context, orgID, id string) (*record, error) {
	var r record
	k := Key(orgID, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &r); err != nil {
		return nil, fmt.Errorf("get webhook %s: %w", id, err)
	}
	return &r, nil
}

// ByID finds webhook id in any organization (GSI1).
func (s Store) ByID(ctx context.Context, id string) (*record, error) {
	var rs []record
	if err := s.St.AllInto(ctx, store.Query{Index: store.GSI1, PK: refPK(id)}, &rs); err != nil {
		return nil, fmt.Errorf("find webhook %s: %w", id, err)
	}
	if len(rs) == 0 {
		return nil, store.ErrNotFound
	}
	return &rs[0], nil
}

// List index keys: a webhook is listed newest first (createdAt, then the id
// complemented, read in descending order; store.NewestSK) in its partner's
// partition of GSI3 and its organization's partition of GSI4 (tenant.List). A
// webhook being deleted leaves both (markDeleting removes its keys), so no
// list sees it while its deliveries go.

// partnerListPK is the GSI3 partition of the webhooks of partner partnerID.
func partnerListPK(partnerID string) string { return store.PartnerPK(partnerID) + "#WEBHOOKS" }

// orgListPK is the GSI4 partition of the webhooks of organization orgID.
func orgListPK(orgID string) string { return store.OrgPK(orgID) + "#WEBHOOKS" }

// setListKeys puts r into the list indexes; a webhook being deleted gets none.
func setListKeys(r *record) {
	if r.Deleting {
		r.GSI3PK, r.GSI3SK, r.GSI4PK, r.GSI4SK = "", "", "", ""
		return
	}
	r.SetList(partnerListPK, orgListPK, r.PartnerID, r.OrgID, store.NewestSK(r.CreatedAt, r.ID))
}

// Reindex gives the webhooks written before their list had an index their
// list keys (shared/backfill); one being deleted gets none, and the backfill
// writes only while it is still not being deleted (From).
func Reindex() store.Reindex {
	return store.Reindex{Kind: "webhook", SKPrefix: "WEBHOOK#", From: []string{"deleting"}, Keys: func(it store.Item) (store.Keys, error) {
		var r record
		if err := store.Unmarshal(it, &r); err != nil {
			return store.Keys{}, err
		}
		setListKeys(&r)
		return r.Keys, nil
	}}
}

// List reads every webhook of organization orgID (the fan-out's read).
func (s Store) List(ctx context.Context, orgID string) ([]record, error) {
	out := []record{}
	if err := s.St.AllInto(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: "WEBHOOK#"}, &out); err != nil {
		return nil, fmt.Errorf("webhooks of %s: %w", orgID, err)
	}
	return out, nil
}

// Delivery reads one delivery.
func (s Store) Delivery(ctx context.Context, orgID, webhookID, id string) (*Delivery, error) {
	var d Delivery
	k := DeliveryKey(orgID, webhookID, id)
	if err := s.St.Get(ctx, k.PK, k.SK, &d); err != nil {
		return nil, fmt.Errorf("get delivery %s: %w", id, err)
	}
	return &d, nil
}

// Deliveries reads the page-th page (from 1) of limit deliveries of a webhook,
// newest first, optionally only those with status.
func (s Store) Deliveries(ctx context.Context, orgID, webhookID, status string, page, limit int) ([]Delivery, error) {
	// One read covers the skipped pages and this one when they fit.
	q := store.Query{PK: store.OrgPK(orgID), SKPrefix: deliveryPrefix(webhookID), Descending: true, Limit: int32(min(page*limit, 500))}
	if status != "" {
		c := store.Is("status", status)
		q.Where = &c
	}
	skip := (page - 1) * limit
	out := []Delivery{}
	cursor := ""
	for {
		res, err := s.St.Page(ctx, q, cursor)
		if err != nil {
			return nil, fmt.Errorf("deliveries of %s: %w", webhookID, err)
		}
		for _, it := range res.Items {
			if skip > 0 {
				skip--
				continue
			}
			var d Delivery
			if err := store.Unmarshal(it, &d); err != nil {
				return nil, err
			}
			out = append(out, d)
			if len(out) == limit {
				return out, nil
			}
		}
		if res.Next == "" {
			return out, nil
		}
		cursor = res.Next
	}
}

// deleteDeliveries removes every delivery of a webhook, 100 per transaction,
// and returns how many it removed.
func (s Store) deleteDeliveries(ctx context.Context, orgID, webhookID string) (int, error) {
	items, err := s.St.All(ctx, store.Query{PK: store.OrgPK(orgID), SKPrefix: deliveryPrefix(webhookID)})
	if err != nil {
		return 0, fmt.Errorf("deliveries of %s: %w", webhookID, err)
	}
	n := 0
	for len(items) > 0 {
		chunk := items[:min(len(items), store.MaxTxItems)]
		items = items[len(chunk):]
		tx := &store.Tx{}
		for _, it := range chunk {
			var k store.Keys
			if err := store.Unmarshal(it, &k); err != nil {
				return n, err
			}
			tx.Add(store.Delete(k.PK, k.SK))
		}
		if err := s.St.Commit(ctx, tx); err != nil {
			return n, fmt.Errorf("delete deliveries of %s: %w", webhookID, err)
		}
		n += len(chunk)
	}
	return n, nil
}

// ---- writes ------------------------------------------------------------

// live is the condition "the webhook exists and is not being deleted".
func live() expression.ConditionBuilder {
	return store.Present().And(expression.Name("deleting").AttributeNotExists())
}

// changeWrite sets fields on a live webhook.
func changeWrite(orgID, id string, set map[string]any, remove []string) *store.Write {
	k := Key(orgID, id)
	var u expression.UpdateBuilder
	for name, v := range set {
		u = u.Set(expression.Name(name), expression.Value(v))
	}
	for _, name := range remove {
		u = u.Remove(expression.Name(name))
	}
	return store.Change(k.PK, k.SK, u).When(live())
}

// markDeleting hides a webhook while its deliveries are removed, and takes it
// out of the list indexes.
func markDeleting(orgID, id string) *store.Write {
	k := Key(orgID, id)
	u := expression.Set(expression.Name("deleting"), expression.Value(true))
	for _, name := range []string{"GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK"} {
		u = u.Remove(expression.Name(name))
	}
	return store.Change(k.PK, k.SK, u).When(store.Present())
}

// deleteWrite removes the webhook row.
func deleteWrite(orgID, id string) *store.Write {
	k := Key(orgID, id)
	return store.Delete(k.PK, k.SK)
}

// newDeliveryWrites create a pending delivery created at now, kept for the
// retention, and count it on its live webhook. The webhook write is returned
// second, so a cancelled commit tells which failed.
func (s Store) newDeliveryWrites(d *Delivery, now time.Time) (put, count *store.Write) {
	keep := s.DeliveryRetention
	if keep <= 0 {
		keep = DefaultDeliveryRetention
	}
	d.TTL = store.TTL(now.Add(keep))
	k := Key(d.OrgID, d.WebhookID)
	u := expression.Add(expression.Name("nTotal"), expression.Value(1)).Add(expression.Name("nPending"), expression.Value(1))
	return store.PutNew(d), store.Change(k.PK, k.SK, u).When(live())
}

// claim takes attempt job.Attempt of a delivery for claimID until claimUntil
// (epoch ms): only while the delivery has made exactly that many attempts, is
// pending or retrying, and no other claim is live. It returns the delivery.
func (s Store) claim(ctx context.Context, j Job, claimID string, now, claimUntil int64) (*Delivery, error) {
	k := DeliveryKey(j.OrgID, j.WebhookID, j.DeliveryID)
	free := expression.Name("claimUntil").AttributeNotExists().Or(expression.Name("claimUntil").LessThan(expression.Value(now)))
	open := expression.Name("status").In(expression.Value(DeliveryPending), expression.Value(DeliveryRetrying))
	cond := store.Present().And(store.Is("attempts", j.Attempt), open, free)
	u := expression.Set(expression.Name("claimId"), expression.Value(claimID)).
		Set(expression.Name("claimUntil"), expression.Value(claimUntil))
	var d Delivery
	if err := s.St.UpdateReturn(ctx, store.Change(k.PK, k.SK, u).When(cond), &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// result is what one attempt produced.
type result struct {
	from, to       string // delivery status before and after
	attempts       int    // attempts made, this one included
	at             string // attempt time
	responseStatus *int
	responseBody   *string
	responseTimeMs int64
	errorMessage   *string
	nextAttemptAt  *string
}

// outcomeWrites record an attempt while claimID holds it, and count it on the
// webhook: successCount or failureCount, lastDeliveryAt (lastSuccessAt), the
// status counts and the failure run (runUpdate), all by ADD and SET.
func outcomeWrites(d *Delivery, claimID string, r result) (dw, ww *store.Write) {
	u := expression.Set(expression.Name("status"), expression.Value(r.to)).
		Set(expression.Name("attempts"), expression.Value(r.attempts)).
		Set(expression.Name("responseTimeMs"), expression.Value(r.responseTimeMs)).
		Remove(expression.Name("claimId")).Remove(expression.Name("claimUntil"))
	opt := func(name string, v any, set bool) {
		if set {
			u = u.Set(expression.Name(name), expression.Value(v))
		} else {
			u = u.Remove(expression.Name(name))
		}
	}
	opt("responseStatus", deref(r.responseStatus), r.responseStatus != nil)
	opt("responseBody", deref(r.responseBody), r.responseBody != nil)
	opt("errorMessage", deref(r.errorMessage), r.errorMessage != nil)
	opt("next_retry_at", deref(r.nextAttemptAt), r.nextAttemptAt != nil)
	if r.to == DeliveryDelivered {
		u = u.Set(expression.Name("deliveredAt"), expression.Value(r.at))
	}
	k := DeliveryKey(d.OrgID, d.WebhookID, d.ID)
	dw = store.Change(k.PK, k.SK, u).When(store.Present().And(store.Is("claimId", claimID)))

	wk := Key(d.OrgID, d.WebhookID)
	wu := expression.Set(expression.Name("lastDeliveryAt"), expression.Value(r.at))
	if r.to == DeliveryDelivered {
		wu = wu.Add(expression.Name("successCount"), expression.Value(1)).Set(expression.Name("lastSuccessAt"), expression.Value(r.at))
	} else if r.responseStatus != nil || r.errorMessage != nil {
		wu = wu.Add(expression.Name("failureCount"), expression.Value(1))
	}
	if r.from != r.to {
		wu = wu.Add(expression.Name(count(r.from)), expression.Value(-1)).Add(expression.Name(count(r.to)), expression.Value(1))
	}
	wu = runUpdate(wu, r)
	ww = store.Change(wk.PK, wk.SK, wu).When(store.Present())
	return dw, ww
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// isNotFound reports a missing row.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// isConflict reports a failed condition.
func isConflict(err error) bool { return errors.Is(err, store.ErrConditionFailed) }

// msgUnqueued is recorded on a delivery whose first job could not be sent.
const msgUnqueued = "Delivery could not be queued"

// unqueuedWrites mark a new delivery failed when its first job could not be
// sent (still pending, no attempt made), so it shows and can be retried.
func unqueuedWrites(d *Delivery) (dw, ww *store.Write) {
	k := DeliveryKey(d.OrgID, d.WebhookID, d.ID)
	u := expression.Set(expression.Name("status"), expression.Value(DeliveryFailed)).
		Set(expression.Name("errorMessage"), expression.Value(msgUnqueued))
	dw = store.Change(k.PK, k.SK, u).When(store.Is("status", DeliveryPending).And(store.Is("attempts", 0)))
	wk := Key(d.OrgID, d.WebhookID)
	wu := expression.Add(expression.Name("nPending"), expression.Value(-1)).Add(expression.Name("nFailed"), expression.Value(1))
	return dw, store.Change(wk.PK, wk.SK, wu).When(store.Present())
}
