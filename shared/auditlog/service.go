// Package auditlog serves the audit log (GET /audit-logs and
// /audit-logs/export, docs/decisions.md#audit-log). The rows are
// shared/audit's; this package reads them for a caller.
//
// Whose log: one tenant's partition (AUDIT#<tenant>) per request.
//
//   - an organization caller: its organization (orgId, if given, must be it);
//   - a partner caller: its partner's own rows, or with orgId one of the
//     organizations it reaches (tenant.Store.Reach: 404 Organization not found
//     otherwise); partnerId may only name its own partner;
//   - a system caller: orgId or partnerId, and without either the SYSTEM
//     log (the platform's own rows: bootstrap, sweeps, sign-ups before a
//     tenant exists), so no row is unreachable and no tenant is implied;
//   - a site- or device-group-restricted caller: only the entries it acted
//     itself (actorId forced to its own id). Audit rows carry no site, and most
//     of what an organization's log holds (users, roles, keys, settings) has
//     none; showing a restricted administrator other people's organization-wide
//     changes would reach past its restriction, so none of them is shown.
//
// The cursor is the store's, bound to the partition: another tenant's cursor
// is 400 naming cursor. Cost: see shared/audit's Read (a page is one query of
// at most limit rows; an export response reads at most 5,000 rows in at most
// ExportReads queries of up to 1 MB each).
package auditlog

import (
	"context"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// DefaultLimit, MaxLimit and ExportLimit bound the rows of a response.
const (
	DefaultLimit = 50
	MaxLimit     = 200
	ExportLimit  = 5000
)

// Orgs finds an organization the caller reaches; tenant.Store satisfies it.
type Orgs interface {
	Reach(ctx context.Context, p *authz.Principal, id string) (*tenant.Organization, error)
}

// Service reads the audit log.
type Service struct {
	St   *store.Store
	Orgs Orgs
}

// Query is one request's filters (the query string, unparsed).
type Query struct {
	OrgID, PartnerID, ActorID, Action, ResourceType, ResourceID, From, To string
	Limit                                                                 int
	Cursor                                                                string
}

// Page is one page of entries.
type Page struct {
	Entries []Entry
	Limit   int
	Next    string
}

// List answers GET /audit-logs.
func (s *Service) List(ctx context.Context, q Query) (*Page, error) {
	p, err := authz.RequireTenant(ctx, authz.AuditRead)
	if err != nil {
		return nil, err
	}
	return s.read(ctx, p, q)
}

// Export answers GET /audit-logs/export and records it (audit.export, in the
// tenant read, with the filters and the rows answered).
func (s *Service) Export(ctx context.Context, q Query, format string) (*Page, error) {
	p, err := authz.RequireTenant(ctx, authz.AuditExport)
	if err != nil {
		return nil, err
	}
	if err := p.RequireMFA(); err != nil {
		return nil, err
	}
	fe := fault.Fields{}
	valid.OneOf(fe, "format", format, "ndjson", "csv")
	if err := fe.Err(); err != nil {
		return nil, err
	}
	pg, err := s.exportRows(ctx, p, q)
	if err != nil {
		return nil, err
	}
	orgID, partnerID := s.owner(p, q)
	details := map[string]any{"format": format, "rows": len(pg.Entries)}
	for k, v := range map[string]string{"actorId": q.ActorID, "action": q.Action, "resourceType": q.ResourceType,
		"resourceId": q.ResourceID, "from": q.From, "to": q.To, "cursor": q.Cursor} {
		if v != "" {
			details[k] = v
		}
	}
	if err := audit.Log(ctx, s.St, audit.Entry{Actor: p.Actor(), OrgID: orgID, PartnerID: partnerID,
		Action: "audit.export", ResourceType: "audit_log", Details: details}); err != nil {
		return nil, err
	}
	return pg, nil
}

// ExportReads bounds the queries of one export response: a query returns at
// most 1 MB, which holds fewer than 5,000 rows, so a response reads on until
// it has ExportLimit rows, the log ends, or ExportReads queries were made.
const ExportReads = 5

// exportRows reads up to ExportLimit entries in at most ExportReads queries,
// each reading at most the rows still wanted.
func (s *Service) exportRows(ctx context.Context, p *authz.Principal, q Query) (*Page, error) {
	sc, err := s.scope(ctx, p, q)
	if err != nil {
		return nil, err
	}
	out := &Page{Entries: []Entry{}, Limit: ExportLimit}
	for cursor, reads := q.Cursor, 0; !sc.none && reads < ExportReads && len(out.Entries) < ExportLimit; reads++ {
		recs, next, err := audit.Read(ctx, s.St, sc.tenant, sc.filter, int32(ExportLimit-len(out.Entries)), cursor)
		if err != nil {
			return nil, err
		}
		out.Entries, out.Next, cursor = appendView(out.Entries, recs), next, next
		if next == "" {
			break
		}
	}
	return out, nil
}

// read reads one page of q for p.
func (s *Service) read(ctx context.Context, p *authz.Principal, q Query) (*Page, error) {
	sc, err := s.scope(ctx, p, q)
	if err != nil || sc.none {
		return &Page{Entries: []Entry{}, Limit: q.Limit}, err
	}
	recs, next, err := audit.Read(ctx, s.St, sc.tenant, sc.filter, int32(q.Limit), q.Cursor)
	if err != nil {
		return nil, err
	}
	return &Page{Entries: appendView([]Entry{}, recs), Limit: q.Limit, Next: next}, nil
}

// scope is what a request reads: a tenant's log through a filter (none: a
// restricted caller asking for someone else's entries).
type scope struct {
	tenant string
	filter audit.Filter
	none   bool
}

// scope validates q and picks the tenant and filter p may read.
func (s *Service) scope(ctx context.Context, p *authz.Principal, q Query) (scope, error) {
	f, err := parse(q)
	if err != nil {
		return scope{}, err
	}
	if err := s.reach(ctx, p, q); err != nil {
		return scope{}, err
	}
	if restricted(p) {
		if f.ActorID != "" && f.ActorID != p.UserID {
			return scope{none: true}, nil
		}
		f.ActorID = p.UserID
	}
	orgID, partnerID := s.owner(p, q)
	return scope{tenant: audit.Tenant(orgID, partnerID), filter: f}, nil
}

func appendView(out []Entry, recs []audit.Record) []Entry {
	for _, r := range recs {
		out = append(out, view(r))
	}
	return out
}

// restricted callers see their own entries only (package doc).
func restricted(p *authz.Principal) bool {
	return p.Scope == authz.ScopeOrg && (len(p.SiteIDs) > 0 || len(p.DeviceGroupIDs) > 0)
}

// reach refuses an orgId or partnerId the caller may not read.
func (s *Service) reach(ctx context.Context, p *authz.Principal, q Query) error {
	switch {
	case q.OrgID != "" && p.Scope == authz.ScopeOrg:
		if q.OrgID != p.OrgID {
			return tenant.ErrOrgNotFound
		}
	case q.OrgID != "":
		_, err := s.Orgs.Reach(ctx, p, q.OrgID)
		return err
	case q.PartnerID != "" && !p.CanAccessPartner(q.PartnerID):
		return tenant.ErrPartnerNotFound
	}
	return nil
}

// owner is the tenant read: the orgId, the partnerId, or the caller's own.
func (s *Service) owner(p *authz.Principal, q Query) (orgID, partnerID string) {
	switch {
	case q.OrgID != "":
		return q.OrgID, ""
	case q.PartnerID != "":
		return "", q.PartnerID
	case p.Scope == authz.ScopeSystem:
		return "", ""
	}
	return p.OrgID, p.PartnerID
}

// parse validates the filters, 400 naming each field that is wrong.
func parse(q Query) (audit.Filter, error) {
	fe := fault.Fields{}
	if q.OrgID != "" {
		valid.UUID(fe, "orgId", q.OrgID)
	}
	if q.PartnerID != "" {
		valid.UUID(fe, "partnerId", q.PartnerID)
		if q.OrgID != "" {
			fe.Add("partnerId", "cannot be combined with orgId")
		}
	}
	f := audit.Filter{ActorID: q.ActorID, Action: q.Action, ResourceType: q.ResourceType, ResourceID: q.ResourceID}
	for name, v := range map[string]string{"actorId": q.ActorID, "action": q.Action, "resourceType": q.ResourceType, "resourceId": q.ResourceID} {
		valid.Len(fe, name, v, 0, 200)
	}
	if q.From != "" {
		f.From = valid.Time(fe, "from", q.From)
	}
	if q.To != "" {
		f.To = valid.Time(fe, "to", q.To)
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To) {
		fe.Add("from", "must not be after to")
	}
	return f, fe.Err()
}

// Entry is one audit log entry as the API answers it.
type Entry struct {
	ID           string         `json:"id"`
	Timestamp    string         `json:"timestamp"`
	Actor        Actor          `json:"actor"`
	Action       string         `json:"action"`
	ResourceType string         `json:"resourceType,omitempty"`
	ResourceID   string         `json:"resourceId,omitempty"`
	ResourceName string         `json:"resourceName,omitempty"`
	OrgID        string         `json:"orgId,omitempty"`
	PartnerID    string         `json:"partnerId,omitempty"`
	Details      map[string]any `json:"details,omitempty"`
	IP           string         `json:"ip,omitempty"`
	UserAgent    string         `json:"userAgent,omitempty"`
	RequestID    string         `json:"requestId,omitempty"`
}

// Actor is who acted.
type Actor struct {
	ID    string `json:"id"`
	Email string `json:"email,omitempty"`
	Type  string `json:"type"`
}

func view(r audit.Record) Entry {
	return Entry{ID: r.ID, Timestamp: r.At, Actor: Actor{ID: r.Actor.ID, Email: r.Email, Type: r.Type},
		Action: r.Action, ResourceType: r.ResourceType, ResourceID: r.ResourceID, ResourceName: r.ResourceName,
		OrgID: r.OrgID, PartnerID: r.PartnerID, Details: r.Details, IP: r.IP, UserAgent: r.UserAgent, RequestID: r.RequestID}
}
