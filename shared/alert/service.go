package alert

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

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

// Errors of the alert routes.
var (
	ErrNotFound     = fault.NotFound("Alert not found")
	ErrDevice       = fault.Invalid("deviceId", "must be a device of the organization you can see")
	ErrNotActive    = fault.Conflict("Only an active alert can be acknowledged").WithCode(fault.CodeWrongStatus)
	ErrResolved     = fault.Conflict("Alert is already resolved").WithCode(fault.CodeWrongStatus)
	ErrOrgWideAlert = fault.Forbidden("Site- or device-group-restricted users can only raise alerts about their devices")
)

// Orgs resolves the organizations a caller reaches; tenant.Store satisfies it.
type Orgs interface {
	tenant.ListOrgs
	Reachable(ctx context.Context, p *authz.Principal) ([]string, error)
}

// Devices reads a device; device.Store satisfies it.
type Devices interface {
	Get(ctx context.Context, orgID, id string) (*device.Device, error)
}

// Service holds the alert rules.
type Service struct {
	St      Store
	Orgs    Orgs
	Devices Devices
	Clock   clock.Clock
	Events  *event.Publisher
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID    string  `json:"orgId"`
	DeviceID *string `json:"deviceId"`
	Severity *string `json:"severity"`
	Title    *string `json:"title"`
	Message  *string `json:"message"`
}

// ListFilter is the list query: page and limit, or the cursor of the page
// before (the fast path for deep pages; it wins over page).
type ListFilter struct {
	OrgID, Status, Severity string
	Page, Limit             int
	Cursor                  string
}

// ListPage is one page of alerts with the list's total.
type ListPage struct {
	Alerts             []Alert
	Page, Limit, Total int
	// Next is the cursor of the following page, "" on the last page.
	Next string
}

// List returns one page of the alerts the caller may see, newest first (ties
// by id): tenant.List over the alert list indexes (GSI4 per organization, GSI3
// per partner; every partner's merged for a system caller without orgId;
// status, severity and the caller's restriction applied to the index rows),
// then the page's alerts. Alerts keep no counter: the total is the read's own
// when it reached the end, else a count of the partition's index rows (Select
// COUNT when nothing is filtered).
func (s *Service) List(ctx context.Context, f ListFilter) (*ListPage, error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	if f.OrgID != "" {
		valid.UUID(fe, "orgId", f.OrgID)
	}
	if f.Status != "" {
		valid.OneOf(fe, "status", f.Status, StatusActive, StatusAcknowledged, StatusResolved)
	}
	if f.Severity != "" {
		valid.OneOf(fe, "severity", f.Severity, Severities...)
	}
	if err := fe.Err(); err != nil {
		return nil, err
	}
	pg, err := tenant.List(ctx, p, s.listing(), tenant.ListQuery[Alert]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor,
		Keep: func(a *Alert) bool {
			return (f.Status == "" || a.Status == f.Status) && (f.Severity == "" || a.Severity == f.Severity) && visible(p, a)
		},
		Filtered: f.Status != "" || f.Severity != ""})
	if err != nil {
		return nil, err
	}
	return &ListPage{Alerts: pg.Items, Page: pg.Page, Limit: pg.Limit, Total: pg.Total, Next: pg.Next}, nil
}

// listing is the alert list of the list indexes.
func (s *Service) listing() tenant.Listing[Alert] {
	return tenant.Listing[Alert]{St: s.St.St, Orgs: s.Orgs, Name: "ALERTS", OrgPK: OrgListPK, PartnerPK: PartnerListPK, Descending: true}
}

// Visible lists the alerts of orgIDs that p may see (for lists and search);
// nil when p may not read alerts.
func (s *Service) Visible(ctx context.Context, p *authz.Principal, orgIDs []string) ([]Alert, error) {
	if !p.Holds(authz.AlertsRead) {
		return nil, nil
	}
	return tenant.Collect(ctx, orgIDs, s.St.OrgAlerts, func(a *Alert) bool { return visible(p, a) })
}

// Create raises an alert (alert.triggered).
func (s *Service) Create(ctx context.Context, in CreateInput) (*Alert, error) {
	p, err := authz.RequireTenant(ctx, authz.AlertsWrite, authz.NeedUserSession)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	sev := valid.Required(f, "severity", in.Severity)
	if in.Severity != nil {
		valid.OneOf(f, "severity", sev, Severities...)
	}
	title := valid.Required(f, "title", in.Title)
	valid.Name(f, "title", title, MaxTitle)
	msg := ""
	if in.Message != nil {
		msg = *in.Message
		if len([]rune(msg)) > MaxMessage {
			f.Add("message", fmt.Sprintf("must be at most %d characters", MaxMessage))
		}
	}
	if in.DeviceID != nil {
		valid.UUID(f, "deviceId", *in.DeviceID)
	}
	orgID := tenant.CreateOrg(f, p, in.OrgID)
	if err := f.Err(); err != nil {
		return nil, err
	}
	o, err := s.Orgs.Reach(ctx, p, orgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	id := uuid.NewString()
	a := &Alert{Keys: keys(o.ID, id), ID: id, OrgID: o.ID, PartnerID: o.PartnerID, Severity: sev, Title: title, Message: msg,
		Status: StatusActive, CreatedBy: p.UserID, CreatedAt: now}
	if in.DeviceID != nil {
		d, err := s.Devices.Get(ctx, o.ID, *in.DeviceID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrDevice
		}
		if err != nil {
			return nil, err
		}
		site := ""
		if d.SiteID != nil {
			site = *d.SiteID
		}
		if !p.CanAccessDevice(authz.Org{ID: o.ID, PartnerID: o.PartnerID}, site, d.GroupIDs) {
			return nil, ErrDevice
		}
		a.DeviceID, a.SiteID, a.GroupIDs = &d.ID, site, d.GroupIDs
	} else if p.RequireUnrestricted() != nil {
		return nil, ErrOrgWideAlert
	}
	ev, err := event.New(s.Clock, eventtype.AlertTriggered, o.ID, map[string]any{"alertId": id, "severity": sev, "title": title, "deviceId": a.DeviceID})
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(createWrite(a), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.ID, PartnerID: o.PartnerID,
		Action: "alert.create", ResourceType: "alert", ResourceID: id, ResourceName: title, Details: map[string]any{"severity": sev}}))
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		return nil, fmt.Errorf("create alert: %w", err)
	}
	return a, nil
}

// Get returns one alert.
func (s *Service) Get(ctx context.Context, id string) (*Alert, error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	return s.alert(ctx, p, id)
}

// Acknowledge moves an active alert to acknowledged (alert.acknowledged).
func (s *Service) Acknowledge(ctx context.Context, id string) (*Alert, error) {
	p, err := authz.RequireTenant(ctx, authz.AlertsAck, authz.NeedUserSession)
	if err != nil {
		return nil, err
	}
	return s.move(ctx, p, id, StatusAcknowledged)
}

// Resolve moves an active or acknowledged alert to resolved (alert.resolved).
func (s *Service) Resolve(ctx context.Context, id string) (*Alert, error) {
	p, err := authz.RequireTenant(ctx, authz.AlertsWrite, authz.NeedUserSession)
	if err != nil {
		return nil, err
	}
	return s.move(ctx, p, id, StatusResolved)
}

func (s *Service) move(ctx context.Context, p *authz.Principal, id, to string) (*Alert, error) {
	a, err := s.alert(ctx, p, id)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	var w *store.Write
	var typ string
	var refused error
	switch to {
	case StatusAcknowledged:
		w, typ, refused = moveWrite(a, to, "acknowledgedAt", "acknowledgedBy", now, p.UserID, StatusActive), eventtype.AlertAcknowledged, ErrNotActive
	default:
		w, typ, refused = moveWrite(a, to, "resolvedAt", "resolvedBy", now, p.UserID, StatusActive, StatusAcknowledged), eventtype.AlertResolved, ErrResolved
	}
	ev, err := event.New(s.Clock, typ, a.OrgID, map[string]any{"alertId": a.ID, "severity": a.Severity, "title": a.Title, "by": p.UserID})
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(w, audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: a.OrgID, PartnerID: a.PartnerID,
		Action: "alert." + to, ResourceType: "alert", ResourceID: a.ID, ResourceName: a.Title, Details: map[string]any{"previousStatus": a.Status}}))
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, refused
		}
		return nil, fmt.Errorf("%s alert %s: %w", to, id, err)
	}
	a.Status = to
	if to == StatusAcknowledged {
		a.AcknowledgedAt, a.AcknowledgedBy = &now, &p.UserID
	} else {
		a.ResolvedAt, a.ResolvedBy = &now, &p.UserID
	}
	return a, nil
}

func (s *Service) alert(ctx context.Context, p *authz.Principal, id string) (*Alert, error) {
	a, err := tenant.Find(ctx, p, id, s.St.Get, s.St.ByID, ErrNotFound)
	if err != nil {
		return nil, err
	}
	if !visible(p, a) { // device alerts also follow site and group restrictions
		return nil, ErrNotFound
	}
	return a, nil
}

// visible applies the restrictions to an alert of an organization p reaches
// (tenant.Find and tenant.List decided that): an organization-wide alert is
// hidden from restricted callers.
func visible(p *authz.Principal, a *Alert) bool {
	if a.DeviceID == nil {
		return p.RequireUnrestricted() == nil
	}
	return p.CanAccessDevice(a.Owner(), a.SiteID, a.GroupIDs)
}

func read(ctx context.Context) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, authz.AlertsRead)
}
