package pam

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// Errors of the PAM routes, with the spec's texts where it gives one.
var (
	ErrRequestNotFound     = fault.NotFound("Elevation request not found")
	ErrRuleNotFound        = fault.NotFound("PAM rule not found")
	ErrSignerGroupNotFound = fault.NotFound("Signer group not found")
	ErrPolicyNotFound      = fault.NotFound("Software policy not found")
	ErrSiteAccess          = fault.Forbidden("Site access denied")
	ErrSelfApproval        = fault.Forbidden("Requester cannot approve their own elevation request")
	ErrNotRevocable        = fault.Conflict("Only approved, auto_approved or actuating elevations can be revoked").WithCode(fault.CodeWrongStatus)
	ErrChanged             = fault.Conflict("Changed concurrently; read it again").WithCode(fault.CodeRaceLost)
)

func notPending(status string) error {
	return fault.Conflict(fmt.Sprintf("Request is not pending (current status: %s)", status)).WithCode(fault.CodeWrongStatus)
}

// Orgs resolves the organizations a caller reaches (and those the lists
// read, tenant.ListOrgs); tenant.Store satisfies it.
type Orgs interface {
	tenant.ListOrgs
	Reachable(ctx context.Context, p *authz.Principal) ([]string, error)
	Site(ctx context.Context, orgID, id string) (*tenant.Site, error)
	Group(ctx context.Context, orgID, id string) (*tenant.DeviceGroup, error)
	SiteByID(ctx context.Context, id string) (*tenant.Site, error)
	GroupByID(ctx context.Context, id string) (*tenant.DeviceGroup, error)
}

// Service holds the PAM control-plane rules.
type Service struct {
	St     Store
	Orgs   Orgs
	Clock  clock.Clock
	Events *event.Publisher
	// PendingTTL is PAM_PENDING_TTL_MINUTES.
	PendingTTL time.Duration
	// Retention is PAM_REQUEST_RETENTION_DAYS: how long a request is kept
	// once it is final (denied, expired, revoked); DefaultRetention when zero.
	Retention time.Duration
	// ActuatorEnabled is PAM_ACTUATOR_ENABLED.
	ActuatorEnabled bool
	// Decided is told about each human decision (mobile approvals expire
	// their siblings); nil does nothing.
	Decided func(ctx context.Context, r *Request)
	// Channel pushes decisions and commands to the device (channel.go).
	Channel Channel
}

func reader(ctx context.Context) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, authz.DevicesRead)
}

func actor(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, perm)
}

// visible applies tenancy and the site and device-group restrictions to r.
func visible(p *authz.Principal, r *Request) bool {
	return p.CanAccessDevice(r.Owner(), r.site(), r.GroupIDs)
}

// displayName is how an audit trail and a request name the caller.
func displayName(p *authz.Principal) string {
	switch {
	case p.Name != "":
		return p.Name
	case p.Email != "":
		return p.Email
	case p.KeyPrefix != "":
		return "API key " + p.KeyPrefix
	}
	return p.UserID
}

// ---- elevation requests -----------------------------------------------------

// ListFilter is the list query: page and limit, or the cursor of the page
// before (it wins over page).
type ListFilter struct {
	OrgID, Status, FlowType, DeviceID, SiteID, From, To string
	Page, Limit                                         int
	Cursor                                              string
}

// ListPage is one page of elevation requests. Total is exact when the read
// reached the list's end, else a lower bound (tenant.ListQuery.Uncounted).
type ListPage struct {
	Requests           []Request
	Page, Limit, Total int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}

// List returns one page of the requests the caller may see, newest first
// (ties by id): tenant.List over the list partitions of the list indexes
// (the package doc says which filter reads what), then the page's requests.
func (s *Service) List(ctx context.Context, f ListFilter) (*ListPage, error) {
	p, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.Status != "" {
		valid.OneOf(fe, "status", f.Status, Statuses...)
	}
	if f.FlowType != "" {
		valid.OneOf(fe, "flowType", f.FlowType, FlowTypes...)
	}
	if f.DeviceID != "" {
		valid.UUID(fe, "deviceId", f.DeviceID)
	}
	if f.SiteID != "" {
		valid.UUID(fe, "siteId", f.SiteID)
	}
	var from, to time.Time
	if f.From != "" {
		from = valid.Time(fe, "from", f.From)
	}
	if f.To != "" {
		to = valid.Time(fe, "to", f.To)
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		fe.Add("to", "must not be before from")
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	if f.SiteID != "" && !p.CanAccessSite(f.SiteID) {
		return nil, ErrSiteAccess
	}
	fromS, toS := "", ""
	if !from.IsZero() {
		fromS = clock.Format(from)
	}
	if !to.IsZero() {
		toS = clock.Format(to)
	}
	parts := listParts
	if f.Status != "" {
		parts = []string{listPart(f.Status)}
	}
	pg, err := tenant.List(ctx, p, s.listing(), tenant.ListQuery[Request]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor,
		Parts: parts, Uncounted: true, Filtered: true,
		Keep: func(r *Request) bool {
			at, flow := listFields(r)
			return visible(p, r) && (f.Status == "" || r.Status == f.Status) && (f.FlowType == "" || flow == f.FlowType) && (f.DeviceID == "" || r.DeviceID == f.DeviceID) &&
				(f.SiteID == "" || r.site() == f.SiteID) && (fromS == "" || at >= fromS) && (toS == "" || at <= toS)
		}})
	if err != nil {
		return nil, err
	}
	if err := s.Describe(ctx, pg.Items); err != nil {
		return nil, err
	}
	return &ListPage{Requests: pg.Items, Page: pg.Page, Limit: pg.Limit, Total: pg.Total, Next: pg.Next}, nil
}

// listing is the elevation request list of the list indexes.
func (s *Service) listing() tenant.Listing[Request] {
	return tenant.Listing[Request]{St: s.St.St, Orgs: s.Orgs, Name: "ELEV", OrgPK: OrgListPK, PartnerPK: PartnerListPK, Descending: true}
}

// Active returns up to MaxActive approved, auto_approved or actuating
// elevations whose window has not ended, soonest to end first: one read of
// the live list partition (tenant.List, newest requested first; pending
// requests and the ended ones the sweeper has not moved yet dropped on the
// index rows), then sorted. The partition holds only requests the sweeper has
// not expired yet, so the read is bounded by the live requests, never by
// history.
func (s *Service) Active(ctx context.Context) ([]Request, error) {
	p, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	pg, err := tenant.List(ctx, p, s.listing(), tenant.ListQuery[Request]{Limit: MaxActive, Parts: []string{partLive}, Uncounted: true, Filtered: true,
		Keep: func(r *Request) bool {
			return r.Status != StatusPending && r.ExpiresAt != nil && *r.ExpiresAt > now && visible(p, r)
		}})
	if err != nil {
		return nil, err
	}
	out := pg.Items
	slices.SortFunc(out, func(a, b Request) int {
		return cmp.Or(strings.Compare(*a.ExpiresAt, *b.ExpiresAt), strings.Compare(a.ID, b.ID))
	})
	if err := s.Describe(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// DefaultRetention is how long a final request is kept when
// PAM_REQUEST_RETENTION_DAYS is not set.
const DefaultRetention = 400 * 24 * time.Hour

// retainUntil is the ttl (epoch seconds) of a request that becomes final at now.
func (s *Service) retainUntil(now time.Time) int64 {
	d := s.Retention
	if d <= 0 {
		d = DefaultRetention
	}
	return now.Add(d).Unix()
}

// orgs is the organization named by orgID (when given) or every one p reaches.
func (s *Service) orgs(ctx context.Context, p *authz.Principal, orgID string) ([]string, error) {
	if orgID != "" {
		o, err := s.Orgs.Reach(ctx, p, orgID)
		if err != nil {
			return nil, err
		}
		return []string{o.ID}, nil
	}
	return s.Orgs.Reachable(ctx, p)
}

// Describe fills the hostname and site name of rs with one BatchGetItem per
// 100 distinct devices and sites.
func (s *Service) Describe(ctx context.Context, rs []Request) error {
	if len(rs) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var refs []store.KeyRef
	add := func(k store.KeyRef) {
		if !seen[k.PK+"|"+k.SK] {
			seen[k.PK+"|"+k.SK] = true
			refs = append(refs, k)
		}
	}
	for _, r := range rs {
		dk := device.Keys(r.OrgID, r.DeviceID)
		add(store.KeyRef{PK: dk.PK, SK: dk.SK})
		if r.SiteID != nil {
			sk := tenant.SiteKeys(r.OrgID, *r.SiteID)
			add(store.KeyRef{PK: sk.PK, SK: sk.SK})
		}
	}
	items, err := s.St.St.BatchGet(ctx, refs...)
	if err != nil {
		return fmt.Errorf("describe elevation requests: %w", err)
	}
	for i := range rs {
		r := &rs[i]
		dk := device.Keys(r.OrgID, r.DeviceID)
		if it, ok := items[dk.PK+"|"+dk.SK]; ok {
			var d struct {
				Hostname string `dynamodbav:"hostname"`
			}
			if err := store.Unmarshal(it, &d); err == nil {
				r.DeviceHostname = d.Hostname
			}
		}
		if r.SiteID != nil {
			sk := tenant.SiteKeys(r.OrgID, *r.SiteID)
			if it, ok := items[sk.PK+"|"+sk.SK]; ok {
				var st struct {
					Name string `dynamodbav:"name"`
				}
				if err := store.Unmarshal(it, &st); err == nil {
					r.SiteName = &st.Name
				}
			}
		}
	}
	return nil
}

// request finds request id for p (404 beyond its tenants). A request of its
// organization outside its sites or groups is 403 for writes (write true)
// and 404 for reads.
func (s *Service) request(ctx context.Context, p *authz.Principal, id string, write bool) (*Request, error) {
	r, err := tenant.Find(ctx, p, id, s.St.Request, s.St.RequestByID, ErrRequestNotFound)
	if err != nil {
		return nil, err
	}
	if !visible(p, r) {
		if write {
			return nil, ErrSiteAccess
		}
		return nil, ErrRequestNotFound
	}
	return r, nil
}

// RespondInput is the respond body.
type RespondInput struct {
	Decision        *string `json:"decision"`
	Reason          *string `json:"reason"`
	DurationMinutes *int    `json:"durationMinutes"`
}

// Decided is the respond and revoke answer.
type Decided struct {
	Success bool   `json:"success"`
	ID      string `json:"id"`
	Status  string `json:"status"`
}

// Respond approves or denies a pending request: compare-and-swap on pending,
// so of concurrent decisions exactly one wins.
func (s *Service) Respond(ctx context.Context, id string, in RespondInput) (*Decided, error) {
	p, err := actor(ctx, authz.DevicesExecute)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	decision := ""
	if in.Decision == nil {
		f.Add("decision", "is required")
	} else {
		decision = *in.Decision
		valid.OneOf(f, "decision", decision, "approve", "deny")
	}
	if in.Reason != nil {
		valid.Len(f, "reason", *in.Reason, 0, MaxReason)
	}
	if in.DurationMinutes != nil {
		valid.Range(f, "durationMinutes", *in.DurationMinutes, 1, MaxDuration)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	r, err := s.request(ctx, p, id, true)
	if err != nil {
		return nil, err
	}
	if r.Status != StatusPending {
		return nil, notPending(r.Status)
	}
	to := StatusDenied
	if decision == "approve" {
		to = StatusApproved
		if IsSubject(r.SubjectUsername, p.Email) {
			return nil, ErrSelfApproval
		}
	}
	now := s.Clock.Now()
	ts := clock.Format(now)
	var expiresAt *string
	minutes := DefaultDuration
	if to == StatusApproved {
		// The spec's default (15), not the deciding rule's approvalDurationMinutes:
		// that window is the rule's own auto-approval (docs/decisions.md#where-gale-follows-the-documents).
		if in.DurationMinutes != nil {
			minutes = *in.DurationMinutes
		}
		e := clock.Format(now.Add(time.Duration(minutes) * time.Minute))
		expiresAt = &e
	}
	name := displayName(p)
	typ, action := eventtype.ElevationDenied, "pam.elevation_request.deny"
	details := map[string]any{"reason": in.Reason}
	if to == StatusApproved {
		typ, action = eventtype.ElevationApproved, "pam.elevation_request.approve"
		details["durationMinutes"] = minutes
	}
	ev, err := event.New(s.Clock, typ, r.OrgID, s.eventData(r, to, map[string]any{"decidedBy": p.UserID, "expiresAt": expiresAt}))
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(decisionWrite(r, to, p.UserID, name, ts, expiresAt, in.Reason, s.retainUntil(now)),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, PartnerID: r.PartnerID, Action: action,
			ResourceType: "elevation_request", ResourceID: r.ID, ResourceName: r.TargetExecutablePath, Details: details}))
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, s.lost(ctx, r, notPending)
		}
		return nil, fmt.Errorf("respond to elevation request %s: %w", id, err)
	}
	r.Status, r.ExpiresAt = to, expiresAt
	if s.Decided != nil {
		s.Decided(ctx, r)
	}
	s.tell(ctx, r)
	return &Decided{Success: true, ID: r.ID, Status: to}, nil
}

// lost answers a compare-and-swap that lost: the request's status now.
func (s *Service) lost(ctx context.Context, r *Request, conflict func(string) error) error {
	now, err := s.St.Request(ctx, r.OrgID, r.ID)
	if err != nil {
		return err
	}
	return conflict(now.Status)
}

// RevokeInput is the revoke body.
type RevokeInput struct {
	Reason *string `json:"reason"`
}

// Revoke ends an approved, auto_approved or actuating elevation early.
func (s *Service) Revoke(ctx context.Context, id string, in RevokeInput) (*Decided, error) {
	p, err := actor(ctx, authz.DevicesExecute)
	if err != nil {
		return nil, err
	}
	if err := valid.PathID("id", id); err != nil {
		return nil, err
	}
	f := fault.Fields{}
	reason := valid.Required(f, "reason", in.Reason)
	if in.Reason != nil {
		valid.Len(f, "reason", reason, 1, MaxReason)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	r, err := s.request(ctx, p, id, true)
	if err != nil {
		return nil, err
	}
	// Compare-and-swap on the status read; a concurrent actuation (approved
	// -> actuating) makes it read again, so the command it queued is taken
	// off the device's queue with the revocation.
	var end device.Command
	for attempt := 0; ; attempt++ {
		if !revocable(r.Status) {
			return nil, ErrNotRevocable
		}
		// The device may be running the elevation already (auto-approved,
		// or approved and actuated or about to be): a command ends it.
		end = endCommand(r, s.Clock.Now())
		ev, err := event.New(s.Clock, eventtype.ElevationRevoked, r.OrgID, EventData(r, StatusRevoked, map[string]any{"revokedBy": p.UserID, "previousStatus": r.Status}))
		if err != nil {
			return nil, err
		}
		tx := (&store.Tx{}).Add(revokeWrite(r, displayName(p), reason, clock.Format(s.Clock.Now()), s.retainUntil(s.Clock.Now())), revokeQueueWrite(r, end),
			audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: r.OrgID, PartnerID: r.PartnerID, Action: "pam.elevation_request.revoke",
				ResourceType: "elevation_request", ResourceID: r.ID, ResourceName: r.TargetExecutablePath,
				Details: map[string]any{"reason": reason, "previousStatus": r.Status}}))
		err = s.Events.Commit(ctx, tx, ev)
		if err == nil {
			break
		}
		if !errors.Is(err, store.ErrConditionFailed) {
			return nil, fmt.Errorf("revoke elevation request %s: %w", id, err)
		}
		if attempt == 2 {
			return nil, ErrChanged
		}
		if r, err = s.St.Request(ctx, r.OrgID, r.ID); err != nil {
			return nil, err
		}
	}
	r.Status = StatusRevoked
	s.tell(ctx, r, end)
	return &Decided{Success: true, ID: r.ID, Status: StatusRevoked}, nil
}

func revocable(status string) bool {
	return status == StatusApproved || status == StatusAutoApproved || status == StatusActuating
}

// eventData is the data of an elevation.* event.
func (s *Service) eventData(r *Request, status string, extra map[string]any) map[string]any {
	return EventData(r, status, extra)
}

// ---- expiry (the sweeper) -----------------------------------------------------

// Expire moves approved, auto_approved and actuating requests past expiresAt,
// and pending ones older than the pending TTL, to expired (one transaction
// each, with audit and elevation.expired). It is the elevation-expiry job.
func (s *Service) Expire(ctx context.Context) (int, error) {
	now := s.Clock.Now()
	ttl := s.PendingTTL
	if ttl <= 0 {
		ttl = 30 * time.Minute
	}
	n := 0
	for i := range shards {
		due, err := s.St.DueApproved(ctx, i, now)
		if err != nil {
			return n, err
		}
		stale, err := s.St.StalePending(ctx, i, now.Add(-ttl))
		if err != nil {
			return n, err
		}
		for _, r := range append(due, stale...) {
			ok, err := s.expire(ctx, &r, now)
			if err != nil {
				return n, err
			}
			if ok {
				n++
			}
		}
	}
	return n, nil
}

func (s *Service) expire(ctx context.Context, r *Request, now time.Time) (bool, error) {
	ev, err := event.New(s.Clock, eventtype.ElevationExpired, r.OrgID, EventData(r, StatusExpired, map[string]any{"previousStatus": r.Status}))
	if err != nil {
		return false, err
	}
	tx := (&store.Tx{}).Add(expireWrite(r, r.Status, clock.Format(now), s.retainUntil(now)), dropCommandWrite(r),
		audit.Put(s.Clock, audit.Entry{Actor: audit.Actor{ID: "system", Type: "system"}, OrgID: r.OrgID, PartnerID: r.PartnerID,
			Action: "pam.elevation_request.expire", ResourceType: "elevation_request", ResourceID: r.ID,
			ResourceName: r.TargetExecutablePath, Details: map[string]any{"previousStatus": r.Status}}))
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return false, nil // decided, revoked or expired meanwhile
		}
		return false, fmt.Errorf("expire elevation request %s: %w", r.ID, err)
	}
	r.Status = StatusExpired
	if s.Decided != nil {
		s.Decided(ctx, r)
	}
	r.ExpiresAt = nil
	s.tell(ctx, r)
	return true, nil
}
