package push

import (
	"context"
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
func (f *Fanout) FanOut(ctx context.Context, r *pam.Request) error {
	if r.Status != pam.StatusPending {
		return nil
	}
	as, err := f.approvers(ctx, r)
	if err != nil || len(as) == 0 {
		return err
	}
	now := f.Clock.Now()
	ts, exp := clock.Format(now), now.Add(MobileLifetime)
	var msgs []notify.Message
	tx := &store.Tx{}
	for i, a := range as {
		row := &Approval{Keys: ApprovalKeys(r.OrgID, r.ID, a.userID), ID: uuid.NewString(), OrgID: r.OrgID, ElevationRequestID: r.ID,
			UserID: a.userID, Status: StatusPending, Targets: len(a.targets), CreatedAt: ts, ExpiresAt: clock.Format(exp)}
		row.TTL = store.TTL(exp.Add(24 * time.Hour))
		tx.Add(store.PutNew(row))
		for _, t := range a.targets {
			msgs = append(msgs, notify.Message{Kind: notify.KindPush, To: t.Token, Platform: t.Platform, Subject: PushTitle, Text: PushText,
				Data: map[string]string{"type": "elevation.approval_requested", "elevationRequestId": r.ID, "approvalId": row.ID,
					"orgId": r.OrgID, "expiresAt": row.ExpiresAt}})
		}
		if tx.Len() == store.MaxTxItems-1 || i == len(as)-1 {
			tx.Add(countWrite(r, tx.Len()))
			if err := f.St.St.Commit(ctx, tx); err != nil {
				if errors.Is(err, store.ErrConditionFailed) {
					return nil // decided (or expired) meanwhile: nothing more to ask
				}
				return fmt.Errorf("mobile approvals of %s: %w", r.ID, err)
			}
			tx = &store.Tx{}
		}
	}
	return f.Queue.EnqueueAll(ctx, msgs)
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
