package deletion

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors with the texts of docs/decisions.md#account-deletion.
var (
	ErrPending       = fault.Conflict("Deletion request already pending")
	ErrPassword      = fault.Unauthorized("Invalid password")
	ErrNotFound      = fault.NotFound("Deletion request not found")
	ErrChanged       = fault.Conflict("Deletion request was changed by another request; retry").WithCode(fault.CodeRaceLost)
	ErrTenantRemoved = fault.Conflict("Request is already approved for this tenant").WithCode(fault.CodeWrongStatus)
)

func errAlready(s Status) error {
	return fault.Conflict("Request is already " + string(s)).WithCode(fault.CodeWrongStatus)
}

// Users reads accounts and memberships; user.Store satisfies it.
type Users interface {
	Get(ctx context.Context, id string) (*user.User, error)
	Memberships(ctx context.Context, userID string) ([]user.Membership, error)
	Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]user.Membership, error)
}

// Roles resolves a role with its effective permissions; role.Store satisfies it.
type Roles interface {
	Assignee(ctx context.Context, id string) (user.RoleInfo, error)
}

// Orgs reads organizations; tenant.Store satisfies it.
type Orgs interface {
	OrgsByID(ctx context.Context, ids []string) ([]tenant.Organization, error)
}

// Mailer sends e-mail (the mail queue, notify.Queue).
type Mailer interface {
	SendEmail(ctx context.Context, e notify.Email) error
}

// Removal names one membership to end.
type Removal struct {
	UserID    string
	Scope     authz.Scope
	PartnerID string
	OrgID     string
	Actor     audit.Actor
	Reason    string
}

// MemberRemover ends a membership: it deletes it, revokes the API keys the
// user created in the tenant and ends every session and token of the user.
// Idempotent (a membership already gone is no error). Wired in shared/app.
type MemberRemover interface {
	RemoveMember(ctx context.Context, r Removal) error
}

// Service holds the account deletion rules.
type Service struct {
	St      Store
	Users   Users
	Roles   Roles
	Orgs    Orgs
	Remover MemberRemover
	Mail    Mailer
	Limits  ratelimit.Limiter
	// Verify checks a password against its hash (passhash.Verify). Only the
	// auth function sets it: the admin function never checks passwords.
	Verify func(hash, password string) bool
	Clock  clock.Clock
	// AppURL is the base of the review link e-mailed to administrators.
	AppURL string
}

// CreateInput is the body of POST /auth/account-deletion-request.
type CreateInput struct {
	Password *string `json:"password"`
	Reason   *string `json:"reason"`
}

// Current is the answer of GET /auth/account-deletion-request.
type Current struct {
	Request *View `json:"request"`
}

// Mine returns the caller's open request, if any.
func (s *Service) Mine(ctx context.Context) (*Current, error) {
	p, err := authz.SignedIn(ctx) // own account: any signed-in user
	if err != nil {
		return nil, err
	}
	r, err := s.St.OpenOf(ctx, p.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return &Current{}, nil
	}
	if err != nil {
		return nil, err
	}
	v := r.view(false)
	return &Current{Request: &v}, nil
}

// Create records the caller's request after the password re-entry (5
// attempts per 5 minutes per user; every attempt counts) and e-mails the
// administrators of the account's tenants a review link. A wrong password is
// audited as a denied user.account_deletion.requested.
func (s *Service) Create(ctx context.Context, in CreateInput) (*View, error) {
	p, err := authz.AccountOwner(ctx) // own account: signed in with its own credential (MFA is the route's)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if in.Password == nil || *in.Password == "" {
		f.Add("password", "is required")
	} else if len(*in.Password) > 1024 {
		f.Add("password", "must be at most 1024 bytes")
	}
	var reason *string
	if in.Reason != nil {
		r := strings.TrimSpace(*in.Reason)
		if len([]rune(r)) > MaxReason {
			f.Addf("reason", "must be at most %d characters", MaxReason)
		}
		reason = &r
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if s.Verify == nil {
		return nil, fmt.Errorf("deletion: no password verifier configured")
	}
	if err := s.Limits.Allow(ctx, ratelimit.DeletionPassword, p.UserID); err != nil {
		return nil, err
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if !s.Verify(u.PasswordHash, *in.Password) {
		rec := audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "user.account_deletion.requested",
			ResourceType: "user", ResourceID: u.ID, Denied: true, Details: map[string]any{"reason": "invalid_password"}})
		if err := s.St.St.Do(ctx, rec); err != nil {
			return nil, fmt.Errorf("audit denied deletion request: %w", err)
		}
		return nil, ErrPassword
	}
	ms, err := s.Users.Memberships(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	tenants, partners, orgID, err := s.tenantsOf(ctx, ms)
	if err != nil {
		return nil, err
	}
	now := s.Clock.Now()
	at := clock.Format(now)
	r := &Request{ID: uuid.NewString(), UserID: u.ID, UserEmail: u.Email, UserName: u.Name, OrgID: orgID, Reason: reason,
		Status: StatusPending, RequestedAt: at, ProcessBy: clock.Format(now.Add(Grace * time.Second)), Tenants: tenants,
		Partners: partners, CreatedAt: at, UpdatedAt: at}
	tx := &store.Tx{}
	ws := createWrites(r)
	guard := tx.Include(ws[0])
	tx.Add(ws[1:]...)
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "user.account_deletion.requested",
		ResourceType: "account_deletion_request", ResourceID: r.ID, Details: map[string]any{"userId": u.ID, "processBy": r.ProcessBy}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) && te.FailedOn(guard) {
			if cur, err := s.St.OpenOf(ctx, u.ID); err == nil {
				return nil, ErrPending.WithDetails(map[string]any{"requestId": cur.ID, "status": cur.Status})
			}
			return nil, ErrPending
		}
		return nil, fmt.Errorf("create deletion request: %w", err)
	}
	s.notifyAdmins(ctx, r)
	v := r.view(false)
	return &v, nil
}

// tenantsOf names the tenants of memberships (active or suspended; an
// invitation never accepted is not the account's), the partners reaching
// them, and the first organization (the request's orgId).
func (s *Service) tenantsOf(ctx context.Context, ms []user.Membership) (tenants, partners []string, orgID *string, err error) {
	var orgIDs []string
	for _, m := range ms {
		if m.Status == user.MemberInvited {
			continue
		}
		switch m.Scope {
		case authz.ScopeOrg:
			tenants = append(tenants, store.OrgPK(m.OrgID))
			orgIDs = append(orgIDs, m.OrgID)
		case authz.ScopePartner:
			tenants = append(tenants, store.PartnerPK(m.PartnerID))
			partners = append(partners, m.PartnerID)
		}
	}
	if len(orgIDs) > 0 {
		slices.Sort(orgIDs)
		first := orgIDs[0]
		orgID = &first
		orgs, err := s.Orgs.OrgsByID(ctx, orgIDs)
		if err != nil {
			return nil, nil, nil, err
		}
		for _, o := range orgs {
			if o.PartnerID != "" && !slices.Contains(partners, o.PartnerID) {
				partners = append(partners, o.PartnerID)
			}
		}
	}
	slices.Sort(tenants)
	slices.Sort(partners)
	return tenants, partners, orgID, nil
}

// CancelInput is the body of PATCH /auth/account-deletion-request/:id.
type CancelInput struct {
	Status *string `json:"status"`
}

// Cancel withdraws the caller's own pending request. Another user's request
// is 404, whatever its state.
func (s *Service) Cancel(ctx context.Context, id string, in CancelInput) (*View, error) {
	p, err := authz.AccountOwner(ctx) // own request only, signed in with the account's own credential
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if !valid.IsUUID(id) {
		f.Add("id", "must be a UUID")
	}
	st := valid.Required(f, "status", in.Status)
	if in.Status != nil {
		valid.OneOf(f, "status", st, string(StatusCancelled))
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	r, err := s.St.Request(ctx, id)
	if errors.Is(err, store.ErrNotFound) || (err == nil && r.UserID != p.UserID) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if r.Status != StatusPending {
		return nil, errAlready(r.Status)
	}
	next := *r
	next.Status, next.UpdatedAt = StatusCancelled, clock.Format(s.Clock.Now())
	tx := (&store.Tx{}).Add(moveWrite(&next, r.Version, StatusPending), releaseWrite(r.UserID, r.ID),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "user.account_deletion.cancelled",
			ResourceType: "account_deletion_request", ResourceID: r.ID, Details: map[string]any{"userId": r.UserID}}))
	if err := s.commit(ctx, tx, r.ID); err != nil {
		return nil, err
	}
	next.Version++
	v := next.view(false)
	return &v, nil
}

// commit runs tx for request id; a failed condition answers the request's
// current state (409 Request is already <status>, or race_lost).
func (s *Service) commit(ctx context.Context, tx *store.Tx, id string) error {
	err := s.St.St.Commit(ctx, tx)
	var te *store.TxError
	if !errors.As(err, &te) {
		return err
	}
	if cur, gerr := s.St.Request(ctx, id); gerr == nil && cur.Status != StatusPending {
		return errAlready(cur.Status)
	}
	return ErrChanged
}

// notifyAdmins e-mails a review link to the administrators (users:write) of
// the request's tenants, or to the system administrators when it has none; at
// most 20 addresses. Failures are logged: the request stands.
func (s *Service) notifyAdmins(ctx context.Context, r *Request) {
	if s.Mail == nil {
		return
	}
	type scope struct {
		s          authz.Scope
		pid, oid   string
		needsWrite bool
	}
	var scopes []scope
	for _, t := range r.Tenants {
		if id, ok := store.OrgOf(t); ok {
			scopes = append(scopes, scope{s: authz.ScopeOrg, oid: id})
		} else if id, ok := store.PartnerOf(t); ok {
			scopes = append(scopes, scope{s: authz.ScopePartner, pid: id})
		}
	}
	if len(scopes) == 0 {
		scopes = append(scopes, scope{s: authz.ScopeSystem})
	}
	var refs []string
	for _, sc := range scopes {
		ms, err := s.Users.Members(ctx, sc.s, sc.pid, sc.oid)
		if err != nil {
			slog.ErrorContext(ctx, "deletion request: administrators not read", "err", err)
			continue
		}
		for _, m := range ms {
			if m.UserID == r.UserID || !m.Active() || len(refs) >= 20 {
				continue
			}
			ri, err := s.Roles.Assignee(ctx, m.RoleID)
			if err != nil || !ri.Effective.Has(authz.UsersWrite) {
				continue
			}
			refs = append(refs, m.UserID)
		}
	}
	link := strings.TrimRight(s.AppURL, "/") + "/admin/account-deletion-requests/" + r.ID
	for _, id := range refs {
		u, err := s.Users.Get(ctx, id)
		if err != nil || u.Status != user.StatusActive {
			continue
		}
		// A fixed template: nothing the requester typed reaches the mail.
		err = s.Mail.SendEmail(ctx, notify.Email{To: u.Email, Subject: "An account deletion request awaits your review",
			Text: "Hello,\n\nA user of a tenant you administer on Gale asked for their account to be deleted.\n" +
				"Review the request (approve or reject) here:\n\n" + link + "\n\n" +
				"Unless it is cancelled or rejected, the account is deleted after 30 days.\n"})
		if err != nil {
			slog.ErrorContext(ctx, "deletion request: review e-mail not sent", "err", err)
		}
	}
}

// plainNote keeps an administrator's note printable in an e-mail: control
// characters other than line breaks are dropped.
func plainNote(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || !unicode.IsControl(r) {
			return r
		}
		return -1
	}, s)
}

// sortNewest orders requests newest first.
func sortNewest(rs []Request) {
	slices.SortFunc(rs, func(a, b Request) int {
		return cmp.Or(cmp.Compare(b.RequestedAt, a.RequestedAt), cmp.Compare(b.ID, a.ID))
	})
}
