package deletion

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// admin opens every administration method: users:write, unrestricted, and
// for partner callers full organization access. It returns the tenant keys
// whose index lists what the caller sees (nil for system scope: everything).
func (s *Service) admin(ctx context.Context) (*authz.Principal, []string, error) {
	p, err := authz.Require(ctx, authz.UsersWrite)
	if err != nil {
		return nil, nil, err
	}
	if p.Scope == authz.ScopeSystem {
		return p, nil, nil
	}
	if err := p.RequireTenantContext(); err != nil {
		return nil, nil, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, nil, err
	}
	// Deletion is account-wide: restricted administrators do not decide it.
	if err := p.RequireUnrestricted(); err != nil {
		return nil, nil, err
	}
	if p.Scope == authz.ScopePartner {
		return p, []string{store.PartnerPK(p.PartnerID)}, nil
	}
	return p, []string{store.OrgPK(p.OrgID)}, nil
}

// sees reports whether p may see request r.
func sees(p *authz.Principal, r *Request) bool {
	switch p.Scope {
	case authz.ScopeSystem:
		return true
	case authz.ScopePartner:
		return slices.Contains(r.Partners, p.PartnerID)
	case authz.ScopeOrg:
		return slices.Contains(r.Tenants, store.OrgPK(p.OrgID))
	}
	return false
}

// visible lists the requests p sees, newest first.
func (s *Service) visible(ctx context.Context, p *authz.Principal, tenants []string) ([]Request, error) {
	var rs []Request
	if tenants == nil {
		all, err := s.St.All(ctx)
		if err != nil {
			return nil, err
		}
		rs = all
	} else {
		var ids []string
		for _, t := range tenants {
			got, err := s.St.TenantRequestIDs(ctx, t)
			if err != nil {
				return nil, err
			}
			ids = append(ids, got...)
		}
		got, err := s.St.Requests(ctx, ids)
		if err != nil {
			return nil, err
		}
		rs = slices.DeleteFunc(got, func(r Request) bool { return !sees(p, &r) })
	}
	sortNewest(rs)
	return rs, nil
}

// Statuses a list may filter on.
var Statuses = []string{string(StatusPending), string(StatusProcessing), string(StatusCompleted), string(StatusCancelled)}

// List returns the requests the caller administers, newest first, optionally
// of one status.
func (s *Service) List(ctx context.Context, status string) ([]View, error) {
	p, tenants, err := s.admin(ctx)
	if err != nil {
		return nil, err
	}
	if status != "" && !slices.Contains(Statuses, status) {
		return nil, fault.Invalid("status", "must be one of: "+strings.Join(Statuses, ", "))
	}
	rs, err := s.visible(ctx, p, tenants)
	if err != nil {
		return nil, err
	}
	out := []View{}
	for i := range rs {
		if status == "" || string(rs[i].Status) == status {
			out = append(out, rs[i].view(true))
		}
	}
	return out, nil
}

// Count is the answer of pending-count.
type Count struct {
	Count int `json:"count"`
}

// PendingCount counts the pending requests the caller administers.
func (s *Service) PendingCount(ctx context.Context) (*Count, error) {
	vs, err := s.List(ctx, string(StatusPending))
	if err != nil {
		return nil, err
	}
	return &Count{Count: len(vs)}, nil
}

// request reads request id for p; one p does not see is ErrNotFound.
func (s *Service) request(ctx context.Context, p *authz.Principal, id string) (*Request, error) {
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	r, err := s.St.Request(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !sees(p, r)) {
		return nil, ErrNotFound
	}
	return r, err
}

// Get returns one request.
func (s *Service) Get(ctx context.Context, id string) (*View, error) {
	p, _, err := s.admin(ctx)
	if err != nil {
		return nil, err
	}
	r, err := s.request(ctx, p, id)
	if err != nil {
		return nil, err
	}
	v := r.view(true)
	return &v, nil
}

// ProcessInput is the body of POST .../process.
type ProcessInput struct {
	Action    *string `json:"action"`
	AdminNote *string `json:"adminNote"`
}

// Process approves or rejects a pending request (see the package doc: an
// approval by an administrator of only some of the account's tenants removes
// only those memberships and leaves the request pending).
func (s *Service) Process(ctx context.Context, id string, in ProcessInput) (*View, error) {
	p, _, err := s.admin(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.RequireMFA(); err != nil {
		return nil, err
	}
	action, note, err := validateProcess(id, in)
	if err != nil {
		return nil, err
	}
	r, err := s.request(ctx, p, id)
	if err != nil {
		return nil, err
	}
	if r.Status != StatusPending {
		return nil, errAlready(r.Status)
	}
	now := clock.Format(s.Clock.Now())
	next := *r
	next.ProcessedAt, next.ProcessedBy, next.AdminNote, next.UpdatedAt = &now, &p.UserID, note, now
	rec := s.recorder(p, r, note)
	if action == "reject" {
		return s.reject(ctx, r, &next, rec, *note)
	}
	ms, err := s.Users.Memberships(ctx, r.UserID)
	if err != nil {
		return nil, err
	}
	whole, mine, err := s.holds(ctx, p, ms)
	if err != nil {
		return nil, err
	}
	if whole {
		next.Status = StatusProcessing
		tx := (&store.Tx{}).Add(moveWrite(&next, r.Version, StatusPending),
			rec("user.account_deletion.approved", map[string]any{"scope": "account"}))
		return s.moved(ctx, tx, &next)
	}
	return s.approveTenant(ctx, p, r, &next, mine, rec)
}

// validateProcess answers the action of in and its note (trimmed; nil when
// empty, which a rejection may not be), or the fields at fault.
func validateProcess(id string, in ProcessInput) (string, *string, error) {
	f := fault.Fields{}
	if !valid.IsUUID(id) {
		f.Add("id", "must be a UUID")
	}
	action := valid.Required(f, "action", in.Action)
	if in.Action != nil {
		valid.OneOf(f, "action", action, "approve", "reject")
	}
	var note *string
	if in.AdminNote != nil {
		n := strings.TrimSpace(*in.AdminNote)
		if len([]rune(n)) > MaxAdminNote {
			f.Addf("adminNote", "must be at most %d characters", MaxAdminNote)
		}
		if n != "" {
			note = &n
		}
	}
	if action == "reject" && note == nil && f["adminNote"] == nil {
		f.Add("adminNote", "is required to reject a request")
	}
	return action, note, f.Err()
}

// recordFn is the audit record of one processing of a request.
type recordFn func(action string, details map[string]any) *store.Write

// recorder records p's processing of r, naming the account and the note.
func (s *Service) recorder(p *authz.Principal, r *Request, note *string) recordFn {
	return func(action string, details map[string]any) *store.Write {
		details["userId"] = r.UserID
		if note != nil {
			details["adminNote"] = *note
		}
		return audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: action,
			ResourceType: "account_deletion_request", ResourceID: r.ID, Details: details})
	}
}

// reject cancels r (next is its processed state) and releases the account,
// then mails the account the note.
func (s *Service) reject(ctx context.Context, r, next *Request, rec recordFn, note string) (*View, error) {
	next.Status = StatusCancelled
	tx := (&store.Tx{}).Add(moveWrite(next, r.Version, StatusPending), releaseWrite(r.UserID, r.ID),
		rec("user.account_deletion.rejected", map[string]any{}))
	v, err := s.moved(ctx, tx, next)
	if err != nil {
		return nil, err
	}
	s.mailRejection(ctx, r, note)
	return v, nil
}

// approveTenant is an approval by p of only some of the account's tenants:
// it removes the memberships mine of p's tenant and leaves the account and
// the still pending request to the others.
func (s *Service) approveTenant(ctx context.Context, p *authz.Principal, r, next *Request, mine []user.Membership, rec recordFn) (*View, error) {
	tenant := tenantOf(p)
	if len(mine) == 0 || slices.Contains(r.RemovedFrom, tenant) {
		return nil, ErrTenantRemoved
	}
	for _, m := range mine {
		rm := Removal{UserID: r.UserID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, Actor: p.Actor(),
			Reason: "account_deletion:" + r.ID}
		if err := s.Remover.RemoveMember(ctx, rm); err != nil {
			return nil, fmt.Errorf("approve deletion request %s: %w", r.ID, err)
		}
	}
	next.Status = StatusPending
	next.ProcessedAt, next.ProcessedBy, next.AdminNote = r.ProcessedAt, r.ProcessedBy, r.AdminNote
	next.RemovedFrom = append(slices.Clone(r.RemovedFrom), tenant)
	tx := (&store.Tx{}).Add(moveWrite(next, r.Version, StatusPending),
		rec("user.account_deletion.approved", map[string]any{"scope": "tenant", "tenant": tenant, "removedMemberships": len(mine)}))
	return s.moved(ctx, tx, next)
}

// moved commits tx, which moves the request to next, and answers next.
func (s *Service) moved(ctx context.Context, tx *store.Tx, next *Request) (*View, error) {
	if err := s.commit(ctx, tx, next.ID); err != nil {
		return nil, err
	}
	v := next.view(true)
	return &v, nil
}

func tenantOf(p *authz.Principal) string {
	if p.Scope == authz.ScopePartner {
		return store.PartnerPK(p.PartnerID)
	}
	return store.OrgPK(p.OrgID)
}

// holds reports whether p's authority covers every membership of the account
// (the account-wide rule of shared/user), and which memberships are p's own
// tenant's (its organization; for a partner, the partner's and its
// organizations').
func (s *Service) holds(ctx context.Context, p *authz.Principal, ms []user.Membership) (bool, []user.Membership, error) {
	if p.Scope == authz.ScopeSystem {
		return true, ms, nil
	}
	var mine []user.Membership
	var orgIDs []string
	for _, m := range ms {
		switch {
		case m.Scope == authz.ScopeOrg && p.Scope == authz.ScopeOrg && m.OrgID == p.OrgID,
			m.Scope == authz.ScopePartner && p.Scope == authz.ScopePartner && m.PartnerID == p.PartnerID:
			mine = append(mine, m)
		case m.Scope == authz.ScopeOrg && p.Scope == authz.ScopePartner:
			orgIDs = append(orgIDs, m.OrgID)
		}
	}
	if len(orgIDs) > 0 {
		orgs, err := s.Orgs.OrgsByID(ctx, orgIDs)
		if err != nil {
			return false, nil, err
		}
		ours := map[string]bool{}
		for _, o := range orgs {
			if o.PartnerID == p.PartnerID {
				ours[o.ID] = true
			}
		}
		for _, m := range ms {
			if m.Scope == authz.ScopeOrg && ours[m.OrgID] {
				mine = append(mine, m)
			}
		}
	}
	// An account that has left every tenant is the system administrators' to delete.
	return len(mine) > 0 && len(mine) == len(ms), mine, nil
}

// mailRejection e-mails the administrator's note to the requester (through
// the mail queue); a failure is logged.
func (s *Service) mailRejection(ctx context.Context, r *Request, note string) {
	if s.Mail == nil {
		return
	}
	err := s.Mail.SendEmail(ctx, notify.Email{To: r.UserEmail, Subject: "Your account deletion request was not approved",
		Text: "Hello,\n\nYour request to delete your Gale account was rejected; your account stays active.\n\n" +
			"The administrator's note:\n\n" + plainNote(note) + "\n"})
	if err != nil {
		slog.ErrorContext(ctx, "deletion request: rejection e-mail not sent", "err", err)
	}
}
