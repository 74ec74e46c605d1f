package webhook

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// A webhook whose receiver keeps failing stops. What counts is a delivery
// that ended failed (its retries exhausted, or its destination unsafe), not
// each attempt: one event's six attempts are one failure. A delivery that
// ended failed because the webhook was not active does not count (the
// receiver was never asked). The webhook row holds the run: failRun (ADDed by
// each failed delivery's outcome transaction, so concurrent outcomes and
// retried transactions count once each) and failRunSince (the first failure
// of the run, set only if absent); a delivered delivery sets failRun to 0 and
// removes failRunSince in its own outcome transaction.
//
// When a failed outcome finds the run's first failure at least the window ago
// and the run at the threshold (by the webhook it read before sending, or,
// when that copy is short, by reading the row again: outcomes recorded
// concurrently are not in it), the worker tries the transition: one transaction that sets status failed only while the
// row is active and the stored run still meets both conditions, with the
// webhook.failed audit row. Exactly one outcome's transaction passes the
// condition, and only its worker e-mails the organization's administrators.
// The transaction is retried by the SDK with the same idempotency token, so a
// lost answer is not mistaken for a lost race.
//
// A failed webhook receives no new event (fan-out skips it). Deliveries
// already queued end failed with errorMessage "Webhook is not active" at
// their next attempt, uncounted. Re-enabling (PATCH status active) resets the
// run and records activeSince: events that happened before it (raised while
// the webhook was failed, even if they wait in the outbox or the queue) are
// not delivered, only new ones.

// FailurePolicy says when a failing webhook stops: at least Threshold
// consecutive failed deliveries, the first of them at least Window ago
// (WEBHOOK_FAILURE_THRESHOLD, WEBHOOK_FAILURE_WINDOW_HOURS).
type FailurePolicy struct {
	Threshold int
	Window    time.Duration
}

// DefaultFailure is the policy when none is configured: 50 over 24 hours.
var DefaultFailure = FailurePolicy{Threshold: 50, Window: 24 * time.Hour}

func (p FailurePolicy) effective() FailurePolicy {
	if p.Threshold < 1 {
		p.Threshold = DefaultFailure.Threshold
	}
	if p.Window <= 0 {
		p.Window = DefaultFailure.Window
	}
	return p
}

// Users reads an organization's members and their accounts; user.Store
// satisfies it.
type Users interface {
	Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]user.Membership, error)
	Get(ctx context.Context, id string) (*user.User, error)
}

// Roles resolves a role with its effective permissions; role.Store satisfies it.
type Roles interface {
	Assignee(ctx context.Context, id string) (user.RoleInfo, error)
}

// Mailer enqueues e-mail (the mail queue, notify.Queue).
type Mailer interface {
	SendEmail(ctx context.Context, e notify.Email) error
}

// maxNotified bounds the administrators told of one failure.
const maxNotified = 20

// Attribute names of the failure run (package doc, Rows).
const (
	attrFailRun      = "failRun"
	attrFailRunSince = "failRunSince"
)

// countsAsFailure reports whether an attempt's outcome ends a delivery failed
// in a way that counts against the receiver.
func countsAsFailure(r result) bool {
	return r.to == DeliveryFailed && (r.errorMessage == nil || *r.errorMessage != msgNotActive)
}

// runUpdate adds an outcome to the webhook's failure run: a delivered one
// ends it, a counted failure extends it.
func runUpdate(u expression.UpdateBuilder, r result) expression.UpdateBuilder {
	switch {
	case r.to == DeliveryDelivered:
		return u.Set(expression.Name(attrFailRun), expression.Value(0)).Remove(expression.Name(attrFailRunSince))
	case countsAsFailure(r):
		return u.Add(expression.Name(attrFailRun), expression.Value(1)).
			Set(expression.Name(attrFailRunSince), expression.Name(attrFailRunSince).IfNotExists(expression.Value(r.at)))
	}
	return u
}

// failWrite stops webhook h when its stored run still has at least threshold
// failures, the first one at or before cutoff, and it is active and live.
func failWrite(h *record, threshold int, cutoff, at string) *store.Write {
	k := Key(h.OrgID, h.ID)
	cond := live().And(store.Is("status", StatusActive),
		expression.Name(attrFailRun).GreaterThanEqual(expression.Value(threshold)),
		expression.Name(attrFailRunSince).LessThanEqual(expression.Value(cutoff)))
	u := expression.Set(expression.Name("status"), expression.Value(StatusFailed)).
		Set(expression.Name("failedAt"), expression.Value(at)).
		Set(expression.Name("updatedAt"), expression.Value(at))
	return store.Change(k.PK, k.SK, u).When(cond)
}

// stopIfFailing runs after an attempt's outcome r was written: when it is a
// counted failure that, by the webhook h read before the attempt, brings the
// run to the policy, it tries the transition and tells the owners if it won.
func (w *Worker) stopIfFailing(ctx context.Context, h *record, d *Delivery, r result) error {
	if !countsAsFailure(r) {
		return nil
	}
	pol := w.Failure.effective()
	now := w.Clock.Now()
	since := h.FailRunSince
	if since == "" {
		since = r.at
	}
	cutoff := clock.Format(now.Add(-pol.Window))
	if since > cutoff {
		return nil // the run is younger than the window (a reset since only makes it younger)
	}
	if h.FailRun+1 < int64(pol.Threshold) {
		// Outcomes recorded concurrently are not in h: read the run as it is
		// now (only for a run old enough, so a healthy webhook never pays).
		cur, err := w.St.Get(ctx, h.OrgID, h.ID)
		if err != nil {
			return nil // deleted meanwhile, or unreadable: the next failure decides
		}
		if cur.FailRun < int64(pol.Threshold) || cur.Status != StatusActive {
			return nil
		}
	}
	at := clock.Format(now)
	tx := (&store.Tx{}).Add(failWrite(h, pol.Threshold, cutoff, at), audit.Put(w.Clock, audit.Entry{Actor: audit.SystemActor,
		OrgID: h.OrgID, Action: "webhook.failed", ResourceType: "webhook", ResourceID: h.ID, ResourceName: h.Name,
		Details: map[string]any{"threshold": pol.Threshold, "windowHours": int(pol.Window / time.Hour), "failingSince": since,
			"deliveryId": d.ID}}))
	err := w.St.St.Commit(ctx, tx)
	var te *store.TxError
	switch {
	case errors.As(err, &te):
		return nil // already failed, paused, reset by a success or deleted meanwhile
	case err != nil:
		return fmt.Errorf("stop failing webhook %s: %w", h.ID, err)
	}
	w.Log.WarnContext(ctx, "webhook failed: stopped", "webhookId", h.ID, "orgId", h.OrgID, "failingSince", since)
	w.tellOwners(ctx, h, pol, since)
	return nil
}

// tellOwners e-mails the organization's administrators (active members whose
// role grants organizations:write, who can re-enable the webhook), at most
// maxNotified. The webhook has stopped whether or not mail goes out: failures
// are logged, and the audit row and the status say so.
func (w *Worker) tellOwners(ctx context.Context, h *record, pol FailurePolicy, since string) {
	if w.Mail == nil || w.Users == nil || w.Roles == nil {
		w.Log.ErrorContext(ctx, "webhook failed: nobody told (no mailer wired)", "webhookId", h.ID)
		return
	}
	ms, err := w.Users.Members(ctx, authz.ScopeOrg, "", h.OrgID)
	if err != nil {
		w.Log.ErrorContext(ctx, "webhook failed: administrators not read", "webhookId", h.ID, "err", err)
		return
	}
	subject := "A webhook of your organization was stopped after failing deliveries"
	text := "Hello,\n\nThe webhook \"" + printable(h.Name) + "\" (id " + h.ID + ") of your organization on Gale failed " +
		strconv.Itoa(pol.Threshold) + " or more deliveries in a row, the first at " + since + ", and was stopped:\n" +
		"it receives no new events.\n\nOnce its endpoint answers again, set its status back to active\n" +
		"(PATCH /api/v1/webhooks/" + h.ID + " with {\"status\": \"active\"}). It resumes with events raised from then on;\n" +
		"events raised while it was stopped are not delivered.\n"
	told := 0
	for i := range ms {
		if told == maxNotified {
			break
		}
		m := &ms[i]
		if !m.Active() {
			continue
		}
		ri, err := w.Roles.Assignee(ctx, m.RoleID)
		if err != nil || !ri.Effective.Has(authz.OrgsWrite) {
			continue
		}
		u, err := w.Users.Get(ctx, m.UserID)
		if err != nil || u.Status != user.StatusActive {
			continue
		}
		if err := w.Mail.SendEmail(ctx, notify.Email{To: u.Email, Subject: subject, Text: text}); err != nil {
			w.Log.ErrorContext(ctx, "webhook failed: e-mail not queued", "webhookId", h.ID, "err", err)
			continue
		}
		told++
	}
}

// printable keeps a webhook name to one printable line in an e-mail.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, s)
}
