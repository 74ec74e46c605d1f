package review

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors with the spec's texts.
var (
	ErrNotFound         = fault.NotFound("Access review not found")
	ErrPendingItems     = fault.BadRequest("Cannot complete review with pending items")
	ErrAlreadyCompleted = fault.BadRequest("Review is already completed")
	ErrCompleted        = fault.BadRequest("Cannot modify completed review")
	ErrChanged          = fault.Conflict("Access review was changed by another request; retry").WithCode(fault.CodeRaceLost)
	ErrAboveLevel       = fault.Forbidden("Cannot manage a user who holds permissions you do not hold")
)

// Members lists the memberships of a tenant; user.Store satisfies it.
type Members interface {
	Members(ctx context.Context, scope authz.Scope, partnerID, orgID string) ([]user.Membership, error)
}

// Roles resolves a role with its effective permissions; role.Store satisfies it.
type Roles interface {
	Assignee(ctx context.Context, id string) (user.RoleInfo, error)
}

// Removal names one membership to end.
type Removal struct {
	UserID string
	// MembershipID is the membership's id when it was reviewed: a membership
	// replaced since (removed and invited again) is not removed.
	MembershipID string
	// RoleID is the role the item reviewed: a member re-roled since is kept
	// (user.ErrRoleChanged), since the decision was about another role.
	RoleID    string
	Scope     authz.Scope
	PartnerID string
	OrgID     string
	Actor     audit.Actor
	// Reason is the audit context (access_review:<id>, account_deletion:<id>).
	Reason string
}

// MemberRemover ends a membership: it deletes it, revokes the API keys the
// user created in the tenant and ends every session and token of the user.
// It is idempotent: a membership already gone is no error, and a second call
// changes nothing more. Wired in shared/app to what shared/user offers.
type MemberRemover interface {
	RemoveMember(ctx context.Context, r Removal) error
}

// Service holds the access review rules.
type Service struct {
	St      Store
	Members Members
	Roles   Roles
	Remover MemberRemover
	Clock   clock.Clock
}

// tenant is where a caller reviews.
type tenant struct {
	Scope     authz.Scope
	PartnerID string
	OrgID     string
}

func (t tenant) pk() string { return tenantPK(t.Scope, t.PartnerID, t.OrgID) }

// open authorizes perm and resolves the caller's own tenant: partner callers
// with full organization access, organization callers; system scope and
// callers without a tenant are refused.
func (s *Service) open(ctx context.Context, perm authz.Permission) (*authz.Principal, tenant, error) {
	p, err := authz.Require(ctx, perm)
	if err != nil {
		return nil, tenant{}, err
	}
	if err := p.RequireTenantContext(); err != nil {
		return nil, tenant{}, err
	}
	if err := p.RequireFullPartnerAccess(); err != nil {
		return nil, tenant{}, err
	}
	// A review acts on the whole tenant: site- and device-group-restricted
	// callers read it but do not change it.
	if perm != authz.UsersRead {
		if err := p.RequireUnrestricted(); err != nil {
			return nil, tenant{}, err
		}
	}
	if p.Scope == authz.ScopePartner {
		return p, tenant{Scope: authz.ScopePartner, PartnerID: p.PartnerID}, nil
	}
	return p, tenant{Scope: authz.ScopeOrg, PartnerID: p.PartnerID, OrgID: p.OrgID}, nil
}

// View is a review as the list and the detail show it.
type View struct {
	ID           string  `json:"id"`
	Name         string  `json:"name"`
	Description  *string `json:"description"`
	Status       Status  `json:"status"`
	ReviewerID   string  `json:"reviewerId"`
	ReviewerName string  `json:"reviewerName"`
	DueDate      *string `json:"dueDate"`
	ItemCount    int     `json:"itemCount"`
	RevokedCount *int    `json:"revokedCount,omitempty"`
	CreatedAt    string  `json:"createdAt"`
	UpdatedAt    string  `json:"updatedAt"`
	CompletedAt  *string `json:"completedAt"`
}

// ItemView is an item of the detail.
type ItemView struct {
	ID           string   `json:"id"`
	UserID       string   `json:"userId"`
	UserName     string   `json:"userName"`
	UserEmail    string   `json:"userEmail"`
	LastActiveAt *string  `json:"lastActiveAt"`
	RoleID       string   `json:"roleId"`
	RoleName     string   `json:"roleName"`
	Decision     Decision `json:"decision"`
	Notes        *string  `json:"notes"`
	ReviewedAt   *string  `json:"reviewedAt"`
	ReviewedBy   *string  `json:"reviewedBy"`
	Permissions  []string `json:"permissions"`
}

// Detail is a review with its items.
type Detail struct {
	View
	Items []ItemView `json:"items"`
}

func view(r *Review, reviewerName string) View {
	v := View{ID: r.ID, Name: r.Name, Description: r.Description, Status: r.Status, ReviewerID: r.ReviewerID,
		ReviewerName: reviewerName, DueDate: r.DueDate, ItemCount: r.ItemCount, CreatedAt: r.CreatedAt,
		UpdatedAt: r.UpdatedAt, CompletedAt: r.CompletedAt}
	if r.Status == StatusCompleted {
		n := r.RevokedCount
		v.RevokedCount = &n
	}
	return v
}

// List returns the reviews of the caller's tenant, oldest first.
func (s *Service) List(ctx context.Context) ([]View, error) {
	_, t, err := s.open(ctx, authz.UsersRead)
	if err != nil {
		return nil, err
	}
	rs, err := s.St.Reviews(ctx, t.pk())
	if err != nil {
		return nil, err
	}
	slices.SortFunc(rs, func(a, b Review) int { return cmp.Or(cmp.Compare(a.CreatedAt, b.CreatedAt), cmp.Compare(a.ID, b.ID)) })
	ids := make([]string, 0, len(rs))
	for _, r := range rs {
		ids = append(ids, r.ReviewerID)
	}
	users, err := s.St.Profiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rs))
	for i := range rs {
		u := users[rs[i].ReviewerID]
		out = append(out, view(&rs[i], u.Name))
	}
	return out, nil
}

// CreateInput is the create body.
type CreateInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	DueDate     *string `json:"dueDate"`
	ReviewerID  *string `json:"reviewerId"`
}

// Created is the 201 answer of create.
type Created struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Status    Status `json:"status"`
	ItemCount int    `json:"itemCount"`
}

// Create opens a review of every user-role mapping of the caller's tenant,
// one pending item each. Items are written in transactions of up to 100, the
// review and its audit record with the last: until then the items belong to
// no visible review.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Created, error) {
	p, t, err := s.open(ctx, authz.UsersWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := valid.Required(f, "name", in.Name)
	if in.Name != nil {
		valid.Name(f, "name", name, MaxName)
	}
	var desc *string
	if in.Description != nil {
		d := strings.TrimSpace(*in.Description)
		if n := len([]rune(d)); n > MaxDescription {
			f.Addf("description", "must be at most %d characters", MaxDescription)
		}
		desc = &d
	}
	var due *string
	if in.DueDate != nil {
		at := valid.Time(f, "dueDate", *in.DueDate)
		d := clock.Format(at)
		due = &d
	}
	reviewer := p.UserID
	if in.ReviewerID != nil {
		valid.UUID(f, "reviewerId", *in.ReviewerID)
		reviewer = *in.ReviewerID
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	ms, err := s.Members.Members(ctx, t.Scope, t.PartnerID, t.OrgID)
	if err != nil {
		return nil, err
	}
	if reviewer == "" || !slices.ContainsFunc(ms, func(m user.Membership) bool { return m.UserID == reviewer && m.Active() }) {
		if in.ReviewerID != nil || reviewer == "" {
			return nil, fault.Invalid("reviewerId", "must be an active member of this scope")
		}
		// An API key's creator or a caller whose membership is not listed
		// (system roles never are) reviews as itself only when it is a member.
		return nil, fault.Invalid("reviewerId", "is required when the caller is not a member of this scope")
	}
	now := clock.Format(s.Clock.Now())
	id := uuid.NewString()
	r := &Review{Keys: reviewKeys(t.Scope, t.PartnerID, t.OrgID, id), ID: id, Scope: t.Scope, PartnerID: t.PartnerID,
		OrgID: t.OrgID, Name: name, Description: desc, Status: StatusPending, ReviewerID: reviewer, DueDate: due,
		ItemCount: len(ms), CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now}
	slices.SortFunc(ms, func(a, b user.Membership) int { return cmp.Compare(a.UserID, b.UserID) })
	writes := make([]*store.Write, 0, len(ms))
	for _, m := range ms {
		iid := uuid.NewString()
		it := &Item{Keys: itemKeys(id, iid), ID: iid, ReviewID: id, UserID: m.UserID, RoleID: m.RoleID, MemberID: m.ID,
			Decision: DecisionPending, CreatedAt: now}
		writes = append(writes, createItemWrite(it))
	}
	// Room for the review and its audit record in the last transaction.
	for len(writes) > store.MaxTxItems-2 {
		n := min(len(writes)-(store.MaxTxItems-2), store.MaxTxItems)
		if err := s.St.St.Commit(ctx, (&store.Tx{}).Add(writes[:n]...)); err != nil {
			return nil, fmt.Errorf("create review %s items: %w", id, err)
		}
		writes = writes[n:]
	}
	tx := (&store.Tx{}).Add(writes...).Add(createReviewWrite(r), s.record(p, t, "access_review.create", r,
		map[string]any{"itemCount": r.ItemCount, "reviewerId": reviewer}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create review %s: %w", id, err)
	}
	return &Created{ID: id, Name: name, Status: StatusPending, ItemCount: r.ItemCount}, nil
}

// record is the audit write of a change of review r.
func (s *Service) record(p *authz.Principal, t tenant, action string, r *Review, details map[string]any) *store.Write {
	return audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: t.OrgID, PartnerID: t.PartnerID, Action: action,
		ResourceType: "access_review", ResourceID: r.ID, ResourceName: r.Name, Details: details})
}

// review reads review id of t; another tenant's is ErrNotFound.
func (s *Service) review(ctx context.Context, t tenant, id string) (*Review, error) {
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	r, err := s.St.Review(ctx, t.pk(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	return r, err
}

// Get returns a review with its items (users by e-mail).
func (s *Service) Get(ctx context.Context, id string) (*Detail, error) {
	_, t, err := s.open(ctx, authz.UsersRead)
	if err != nil {
		return nil, err
	}
	r, err := s.review(ctx, t, id)
	if err != nil {
		return nil, err
	}
	items, err := s.St.Items(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	ids := []string{r.ReviewerID}
	for _, it := range items {
		ids = append(ids, it.UserID)
	}
	users, err := s.St.Profiles(ctx, ids)
	if err != nil {
		return nil, err
	}
	// Memberships as they are now, for what the tenant may see of each
	// account (an invitation not accepted shows only what the tenant sent).
	ms, err := s.Members.Members(ctx, t.Scope, t.PartnerID, t.OrgID)
	if err != nil {
		return nil, err
	}
	member := map[string]*user.Membership{}
	for i := range ms {
		member[ms[i].UserID] = &ms[i]
	}
	roles := map[string]user.RoleInfo{}
	for _, it := range items {
		if _, ok := roles[it.RoleID]; ok {
			continue
		}
		ri, err := s.Roles.Assignee(ctx, it.RoleID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		roles[it.RoleID] = ri
	}
	d := &Detail{View: view(r, users[r.ReviewerID].Name), Items: make([]ItemView, 0, len(items))}
	for _, it := range items {
		u := users[it.UserID]
		iv := ItemView{ID: it.ID, UserID: it.UserID, UserName: u.Name, UserEmail: u.Email, RoleID: it.RoleID,
			RoleName: roles[it.RoleID].Name, Decision: it.Decision, Notes: it.Notes, ReviewedAt: it.ReviewedAt,
			ReviewedBy: it.ReviewedBy, Permissions: permissions(roles[it.RoleID].Effective)}
		if m := member[it.UserID]; m != nil && u.ID != "" {
			v := user.NewMember(&u, m)
			iv.UserName = v.Name
			if v.LastLoginAt != "" {
				iv.LastActiveAt = &v.LastLoginAt
			}
		} else {
			// No membership of this tenant any more: what the account is
			// (its own name, its last sign-in) is not the tenant's to see.
			iv.UserName, iv.LastActiveAt = u.Email, nil
		}
		d.Items = append(d.Items, iv)
	}
	slices.SortFunc(d.Items, func(a, b ItemView) int { return cmp.Or(cmp.Compare(a.UserEmail, b.UserEmail), cmp.Compare(a.ID, b.ID)) })
	return d, nil
}

func permissions(set authz.Set) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p.String())
	}
	slices.Sort(out)
	return out
}

// DecisionInput is the item update body.
type DecisionInput struct {
	Decision *string `json:"decision"`
	Notes    *string `json:"notes"`
}

// DecisionView is the item update answer.
type DecisionView struct {
	ID         string   `json:"id"`
	Decision   Decision `json:"decision"`
	Notes      *string  `json:"notes"`
	ReviewedAt *string  `json:"reviewedAt"`
}

// Decide records a decision on an item. The first decision moves a pending
// review to in_progress. The item changes by compare-and-swap on its version,
// so of concurrent decisions on one item exactly one is recorded (the others
// 409 race_lost); every decision moves the review's version, which the
// completion's freeze checks.
func (s *Service) Decide(ctx context.Context, id, itemID string, in DecisionInput) (*DecisionView, error) {
	p, t, err := s.open(ctx, authz.UsersWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	if !valid.IsUUID(id) {
		f.Add("id", "must be a UUID")
	}
	if !valid.IsUUID(itemID) {
		f.Add("itemId", "must be a UUID")
	}
	dec := valid.Required(f, "decision", in.Decision)
	if in.Decision != nil {
		valid.OneOf(f, "decision", dec, string(DecisionApproved), string(DecisionRevoked), string(DecisionPending))
	}
	if in.Notes != nil && len([]rune(*in.Notes)) > MaxNotes {
		f.Addf("notes", "must be at most %d characters", MaxNotes)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	r, it, err := s.St.ReviewAndItem(ctx, t.pk(), id, itemID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if r.Status == StatusCompleted || r.Completing() {
		return nil, ErrCompleted
	}
	if Decision(dec) == DecisionRevoked {
		ri, err := s.Roles.Assignee(ctx, it.RoleID)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
		if !user.HoldsAll(p, ri.Effective) {
			return nil, ErrAboveLevel
		}
	}
	now := clock.Format(s.Clock.Now())
	prev := it.Version
	next := *it
	next.Decision = Decision(dec)
	if in.Notes != nil {
		n := *in.Notes
		next.Notes = &n
	}
	next.ReviewedAt, next.ReviewedBy = &now, &p.UserID
	if p.Kind == authz.KindAPIKey && p.UserID == "" {
		by := "api_key:" + p.APIKeyID
		next.ReviewedBy = &by
	}
	tx := (&store.Tx{}).Add(decisionWrite(&next, prev), touchWrite(r, StatusInProgress, now),
		s.record(p, t, "access_review.item.update", r, map[string]any{"reviewId": r.ID, "itemId": it.ID,
			"userId": it.UserID, "decision": dec, "previousDecision": it.Decision}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if !errors.As(err, &te) {
			return nil, fmt.Errorf("decide item %s of review %s: %w", itemID, id, err)
		}
		if cur, err := s.St.Review(ctx, t.pk(), id); err == nil && (cur.Status == StatusCompleted || cur.Completing()) {
			return nil, ErrCompleted
		}
		return nil, ErrChanged
	}
	return &DecisionView{ID: it.ID, Decision: next.Decision, Notes: next.Notes, ReviewedAt: next.ReviewedAt}, nil
}
