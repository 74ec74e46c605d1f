package push

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Members lists a tenant's memberships (user.Store satisfies it).
type Members interface {
	Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]user.Membership, error)
}

// Roles resolves a role chain's permissions (role.Store satisfies it).
type Roles interface {
	Effective(ctx context.Context, owner, id string) (authz.Set, bool, []role.Grant, error)
}

// Queue enqueues messages for the mailer (notify.Queue satisfies it).
type Queue interface {
	EnqueueAll(ctx context.Context, ms []notify.Message) error
}

// Push message texts: fixed, so a lock screen shows nothing of the request.
const (
	PushTitle = "Elevation approval requested"
	PushText  = "A privileged elevation request awaits your decision."
)

// candidatesPerBatch: each candidate takes two keys (profile, targets) of a
// BatchGetItem's 100.
const candidatesPerBatch = store.MaxBatchGet / 2

// Fanout sends mobile approval requests (pam.Service.FanOut) and closes them
// on the first decision (pam.Service.Decided).
type Fanout struct {
	St      Store
	Members Members
	Roles   Roles
	Queue   Queue
	Clock   clock.Clock
	// Requests reads the request an elevation.requested event names (OnEvent).
	Requests Requests
}

// approver is an eligible approver and their targets.
type approver struct {
	userID  string
	targets []Target
}

// approvers returns the eligible approvers of r that have push targets, in
// user-id order (package doc: "Mobile approval requests").
func (f *Fanout) approvers(ctx context.Context, r *pam.Request) ([]approver, error) {
	orgMs, err := f.Members.Members(ctx, authz.ScopeOrg, "", r.OrgID)
	if err != nil {
		return nil, err
	}
	var partnerMs []user.Membership
	if r.PartnerID != "" {
		if partnerMs, err = f.Members.Members(ctx, authz.ScopePartner, r.PartnerID, ""); err != nil {
			return nil, err
		}
	}
	site := ""
	if r.SiteID != nil {
		site = *r.SiteID
	}
	perms := map[string]authz.Set{}
	candidates := map[string]bool{}
	for _, m := range append(orgMs, partnerMs...) {
		if !m.Active() || candidates[m.UserID] {
			continue
		}
		reach := authz.Principal{Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, OrgAccess: m.OrgAccess, OrgIDs: m.OrgIDs,
			SiteIDs: m.SiteIDs, DeviceGroupIDs: m.GroupIDs}
		if !reach.CanAccessDevice(r.Owner(), site, r.GroupIDs) {
			continue
		}
		key := m.RoleOwner + "|" + m.RoleID
		set, ok := perms[key]
		if !ok {
			owner := m.RoleOwner
			if owner == "" {
				owner = role.SystemOwner
			}
			set, _, _, err = f.Roles.Effective(ctx, owner, m.RoleID)
			if err != nil {
				slog.WarnContext(ctx, "mobile approvals: role not resolved", "roleId", m.RoleID, "err", err)
				set = authz.Set{}
			}
			perms[key] = set
		}
		if set.Has(authz.DevicesExecute) {
			candidates[m.UserID] = true
		}
	}
	ids := make([]string, 0, len(candidates))
	for id := range candidates {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []approver
	for start := 0; start < len(ids); start += candidatesPerBatch {
		batch := ids[start:min(start+candidatesPerBatch, len(ids))]
		refs := make([]store.KeyRef, 0, 2*len(batch))
		for _, id := range batch {
			refs = append(refs, user.ProfileKey(id), TargetsKey(id))
		}
		items, err := f.St.St.BatchGet(ctx, refs...)
		if err != nil {
			return nil, fmt.Errorf("mobile approvers of %s: %w", r.ID, err)
		}
		for _, id := range batch {
			pk, tk := user.ProfileKey(id), TargetsKey(id)
			pit, ok1 := items[pk.PK+"|"+pk.SK]
			tit, ok2 := items[tk.PK+"|"+tk.SK]
			if !ok1 || !ok2 {
				continue
			}
			var u user.User
			var ts Targets
			if store.Unmarshal(pit, &u) != nil || store.Unmarshal(tit, &ts) != nil {
				continue
			}
			if u.Status != user.StatusActive || pam.IsSubject(r.SubjectUsername, u.Email) || len(ts.Targets) == 0 {
				continue
			}
			out = append(out, approver{userID: id, targets: ts.Targets})
		}
	}
	return out, nil
}

// FanOut writes one mobile approval request per eligible approver of pending
// request r (one transaction per 99, each adding its count to the request's
// mobileApprovals on the condition that it is still pending) and enqueues one
// push message per target of theirs. A request that is not pending, or is
// decided before the rows are written, sends nothing.
//
// FanOut runs from the events queue (OnEvent), which redelivers a message
// whose handling failed: a second run finds the rows an earlier one wrote (a
// put fails its condition), reads them (one Query), writes only the missing
// ones and enqueues the pushes of every row still pending again. Pushes are
// at least once (the app keys them by approvalId); rows are written once.
func (f *Fanout) FanOut(ctx context.Context, r *pam.Request) error {
	if r.Status != pam.StatusPending {
		return nil
	}
	as, err := f.approvers(ctx, r)
	if err != nil || len(as) == 0 {
		return err
	}
	err = f.fanOut(ctx, r, as, nil)
	if !errors.Is(err, errWritten) {
		return err
	}
	rows, err := f.St.Approvals(ctx, r.OrgID, r.ID)
	if err != nil {
		return fmt.Errorf("mobile approvals of %s: %w", r.ID, err)
	}
	have := map[string]Approval{}
	for _, a := range rows {
		have[a.UserID] = a
	}
	return f.fanOut(ctx, r, as, have)
}

// errWritten: an approval row of the fan-out exists already (a redelivered
// event); FanOut reads them and resumes.
var errWritten = errors.New("push: approval rows written by an earlier run")

// fanOut writes the approval rows of as that have (nil on a first run) does
// not hold and enqueues the pushes of every pending one.
func (f *Fanout) fanOut(ctx context.Context, r *pam.Request, as []approver, have map[string]Approval) error {
	now := f.Clock.Now()
	ts, exp := clock.Format(now), now.Add(MobileLifetime)
	var msgs []notify.Message
	tx := &store.Tx{}
	flush := func() error {
		if tx.Len() == 0 {
			return nil
		}
		cw := countWrite(r, tx.Len())
		tx.Add(cw)
		err := f.St.St.Commit(ctx, tx)
		tx = &store.Tx{}
		var te *store.TxError
		switch {
		case err == nil:
			return nil
		case errors.As(err, &te) && te.FailedOn(cw):
			return errDecided
		case errors.As(err, &te) && have == nil:
			return errWritten
		}
		return fmt.Errorf("mobile approvals of %s: %w", r.ID, err)
	}
	for _, a := range as {
		row, ok := have[a.userID]
		if ok && row.Status != StatusPending {
			continue
		}
		if !ok {
			row = Approval{Keys: ApprovalKeys(r.OrgID, r.ID, a.userID), ID: uuid.NewString(), OrgID: r.OrgID, ElevationRequestID: r.ID,
				UserID: a.userID, Status: StatusPending, Targets: len(a.targets), CreatedAt: ts, ExpiresAt: clock.Format(exp)}
			row.TTL = store.TTL(exp.Add(24 * time.Hour))
			tx.Add(store.PutNew(&row))
		}
		for _, t := range a.targets {
			msgs = append(msgs, notify.Message{Kind: notify.KindPush, To: t.Token, Platform: t.Platform, Subject: PushTitle, Text: PushText,
				Data: map[string]string{"type": "elevation.approval_requested", "elevationRequestId": r.ID, "approvalId": row.ID,
					"orgId": r.OrgID, "expiresAt": row.ExpiresAt}})
		}
		if tx.Len() == store.MaxTxItems-1 {
			if err := flush(); err != nil {
				return ignoreDecided(err)
			}
		}
	}
	if err := flush(); err != nil {
		return ignoreDecided(err)
	}
	if len(msgs) == 0 {
		return nil
	}
	return f.Queue.EnqueueAll(ctx, msgs)
}

// errDecided: the request was decided (or expired) meanwhile: nothing more to ask.
var errDecided = errors.New("push: request decided")

func ignoreDecided(err error) error {
	if errors.Is(err, errDecided) {
		return nil
	}
	return err
}

// Requests reads an elevation request (pam.Store satisfies it).
type Requests interface {
	Request(ctx context.Context, orgID, id string) (*pam.Request, error)
}

// OnEvent is the events queue's consumer of the mobile fan-out (wired into
// the webhook-worker, shared/webhook Worker.React): for elevation.requested
// of a pending request it reads the request and runs FanOut. An error leaves
// the event's message to be redelivered (and dead-lettered by the queue's
// redrive policy): the fan-out has the retries of every other side effect,
// and nothing of it runs in the ingest request.
func (f *Fanout) OnEvent(ctx context.Context, typ, orgID string, data json.RawMessage) error {
	if typ != eventtype.ElevationRequested || f.Requests == nil {
		return nil
	}
	var ev struct {
		ID     string `json:"elevationRequestId"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(data, &ev); err != nil || ev.ID == "" || ev.Status != pam.StatusPending {
		return nil // not a pending request's event: nothing to ask
	}
	r, err := f.Requests.Request(ctx, orgID, ev.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mobile fan-out of %s: %w", ev.ID, err)
	}
	return f.FanOut(ctx, r)
}

// Decided closes the pending mobile approval requests of r once it has been
// decided (or expired): the decider's own becomes decided, the siblings
// expired. Best effort: a failure is logged (the rows expire by their
// expiresAt anyway).
func (f *Fanout) Decided(ctx context.Context, r *pam.Request) {
	if err := f.close(ctx, r); err != nil {
		slog.WarnContext(ctx, "mobile approvals not closed", "elevationRequestId", r.ID, "err", err)
	}
}

func (f *Fanout) close(ctx context.Context, r *pam.Request) error {
	if r.MobileApprovals == 0 {
		return nil // none were sent: no read
	}
	as, err := f.St.Approvals(ctx, r.OrgID, r.ID)
	if err != nil {
		return err
	}
	decider := ""
	if p := authz.FromContext(ctx); p != nil && r.Status != pam.StatusExpired {
		decider = p.UserID
	}
	now := clock.Format(f.Clock.Now())
	tx := &store.Tx{}
	for i := range as {
		a := &as[i]
		if a.Status != StatusPending {
			continue
		}
		status := StatusExpired
		if a.UserID == decider {
			status = StatusDecided
		}
		tx.Add(closeWrite(a, status, now))
		if tx.Len() == store.MaxTxItems {
			if err := f.St.St.Commit(ctx, tx); err != nil {
				return err
			}
			tx = &store.Tx{}
		}
	}
	if tx.Len() > 0 {
		return f.St.St.Commit(ctx, tx)
	}
	return nil
}
