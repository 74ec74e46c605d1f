package savedfilter

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/filter"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors of the filter routes.
var (
	ErrNotFound = fault.NotFound("Filter not found")
	// ErrOrgRequired is the spec's message; details name the field like every
	// validation failure.
	ErrOrgRequired = &fault.Error{Kind: fault.KindValidation, Code: fault.CodeValidation,
		Message: "orgId is required for partner scope",
		Details: map[string]any{"fieldErrors": map[string][]string{"orgId": {"is required for partner and system scope"}}}}
	ErrNoUpdates       = fault.BadRequest("No updates provided")
	ErrConcurrent      = fault.Conflict("Filter was changed concurrently").WithCode(fault.CodeRaceLost)
	ErrConditionsEmpty = fault.Invalid("conditions", "is required")
)

// Orgs resolves the organizations a caller reaches; tenant.Store satisfies it.
type Orgs interface {
	tenant.ListOrgs
	Reachable(ctx context.Context, p *authz.Principal) ([]string, error)
}

// Devices lists the devices a caller may see; device.Service satisfies it.
type Devices interface {
	Reachable(ctx context.Context, p *authz.Principal, software bool) ([]device.Device, error)
}

// Service holds the saved-filter rules.
type Service struct {
	St      Store
	Orgs    Orgs
	Devices Devices
	Clock   clock.Clock
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID       string          `json:"orgId"`
	Name        *string         `json:"name"`
	Description *string         `json:"description"`
	Conditions  json.RawMessage `json:"conditions"`
}

// PatchInput is the PATCH body: each field absent (kept), null or a value.
// description null clears it (the document marks it nullable); name and
// conditions refuse null (a filter always has both).
type PatchInput struct {
	Name        valid.Opt[string]          `json:"name"`
	Description valid.Opt[string]          `json:"description"`
	Conditions  valid.Opt[json.RawMessage] `json:"conditions"`
}

// PreviewInput is the ad-hoc preview body.
type PreviewInput struct {
	Conditions json.RawMessage `json:"conditions"`
	Limit      *int            `json:"limit"`
}

// ListFilter is the list query. Without Limit the list is every filter (the
// spec's answer); with it, page Page of Limit filters, or the page after
// Cursor (the fast path for deep pages; it wins over page).
type ListFilter struct {
	Search      string
	Page, Limit int
	Cursor      string
}

// List returns the filters of the caller's organizations, newest first (ties
// by id), optionally those whose name or description contains search
// (case-insensitively): tenant.List over the filter list indexes (GSI4 per
// organization, GSI3 per partner, merged for a system caller). Filters are
// organization-wide and keep no counter: a total the read did not reach is a
// Select COUNT of the partition(s). search is applied to the filters
// themselves (no list index attribute holds names or descriptions: projecting
// one would rebuild the deployed indexes), so a search reads every reachable
// filter, as an unpaged list does, and takes no cursor.
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Filter], error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	if len(f.Search) > MaxName {
		return nil, fault.Invalid("search", fmt.Sprintf("must be at most %d characters", MaxName))
	}
	needle := strings.ToLower(strings.TrimSpace(f.Search))
	if needle != "" && f.Cursor != "" {
		return nil, store.ErrBadCursor
	}
	q := tenant.ListQuery[Filter]{Page: f.Page, Limit: f.Limit, Cursor: f.Cursor}
	if needle != "" || f.Limit < 1 {
		q.Page, q.Limit = 1, store.MaxOffset
	}
	pg, err := tenant.List(ctx, p, tenant.Listing[Filter]{St: s.St.St, Orgs: s.Orgs, Name: "FILTERS",
		OrgPK: OrgListPK, PartnerPK: PartnerListPK, Descending: true, OrgWide: true}, q)
	if err != nil || needle == "" {
		return pg, err
	}
	out := []Filter{}
	for _, x := range pg.Items {
		if strings.Contains(strings.ToLower(x.Name), needle) || (x.Description != nil && strings.Contains(strings.ToLower(*x.Description), needle)) {
			out = append(out, x)
		}
	}
	pg.Total, pg.Items, pg.Page, pg.Limit = len(out), []Filter{}, max(f.Page, 1), f.Limit
	if f.Limit < 1 {
		pg.Items = out
	} else if start := store.Offset(max(f.Page, 1), f.Limit); start < len(out) {
		pg.Items = out[start:min(start+f.Limit, len(out))]
	}
	return pg, nil
}

// Create saves a filter in the caller's organization (or the one it names).
func (s *Service) Create(ctx context.Context, in CreateInput) (*Filter, error) {
	p, err := write(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := ""
	if in.Name == nil {
		f.Add("name", "is required")
	} else {
		name = strings.TrimSpace(*in.Name)
		valid.Name(f, "name", name, MaxName)
	}
	desc := description(f, in.Description)
	if in.OrgID != "" && p.Scope != authz.ScopeOrg {
		valid.UUID(f, "orgId", in.OrgID)
	}
	if len(in.Conditions) == 0 || string(in.Conditions) == "null" {
		f.Add("conditions", "is required")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	cond, err := conditions(in.Conditions)
	if err != nil {
		return nil, err
	}
	orgID, err := s.targetOrg(ctx, p, in.OrgID)
	if err != nil {
		return nil, err
	}
	o, err := s.Orgs.Reach(ctx, p, orgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	id := uuid.NewString()
	flt := &Filter{Keys: keys(o.ID, id), ID: id, OrgID: o.ID, PartnerID: o.PartnerID, Name: name, Description: desc,
		Conditions: cond, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now, Version: 1}
	tx := (&store.Tx{}).Add(createWrite(flt), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.ID, PartnerID: o.PartnerID,
		Action: "filter.create", ResourceType: "filter", ResourceID: id, ResourceName: name}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create filter: %w", err)
	}
	return flt, nil
}

// targetOrg decides a create's organization: an organization caller's own; a
// partner or system caller's orgId, or a partner's only organization when it
// has one.
func (s *Service) targetOrg(ctx context.Context, p *authz.Principal, orgID string) (string, error) {
	if p.Scope == authz.ScopeOrg {
		return p.OrgID, nil
	}
	if orgID != "" {
		return orgID, nil
	}
	if p.Scope == authz.ScopeSystem {
		// A system caller has no organization of its own to fall back on: the
		// keys document's 403 `Organization context required` (the 400 below
		// is the partner scope's own row).
		return "", authz.ErrOrgContextRequired
	}
	if p.Scope == authz.ScopePartner {
		ids, err := s.Orgs.Reachable(ctx, p)
		if err != nil {
			return "", err
		}
		if len(ids) == 1 {
			return ids[0], nil
		}
	}
	return "", ErrOrgRequired
}

// Fields is GET /filters/fields: the filter engine's catalogue (every field
// with its type, operators and, for an enum, its values) and the shape of the
// custom fields, read from shared/filter so the answer cannot drift from what
// Parse accepts. It holds no tenant data, so any caller who may read devices
// reads it, restricted or not, in whatever tenant; the permission is still
// checked first so a key without devices:read learns nothing.
func (s *Service) Fields(ctx context.Context) (Fields, error) {
	if _, err := read(ctx); err != nil {
		return Fields{}, err
	}
	return Fields{Data: filter.Fields(), Custom: filter.Custom()}, nil
}

// Fields is the answer of GET /filters/fields.
type Fields struct {
	Data   []filter.FieldInfo `json:"data"`
	Custom filter.FieldInfo   `json:"custom"`
}

// Get returns one filter.
func (s *Service) Get(ctx context.Context, id string) (*Filter, error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	return s.filter(ctx, p, id)
}

// Patch changes name, description or conditions: decode (PatchInput),
// validate into a change, diff against the stored filter, one write.
func (s *Service) Patch(ctx context.Context, id string, in PatchInput) (*Filter, error) {
	p, err := write(ctx)
	if err != nil {
		return nil, err
	}
	c, err := checkPatch(in)
	if err != nil {
		return nil, err
	}
	cur, err := s.filter(ctx, p, id)
	if err != nil {
		return nil, err
	}
	next, changed := c.apply(cur, clock.Format(s.Clock.Now()))
	if err := s.patchWrite(ctx, p, cur, &next, changed); err != nil {
		return nil, err
	}
	return &next, nil
}

// change is a validated PATCH: a nil name and an empty conditions keep the
// stored value; description is replaced (nil clears it) when setDescription.
type change struct {
	name           *string
	setDescription bool
	description    *string
	conditions     string
}

// checkPatch validates a PATCH body into a change: field errors first, then
// an empty body is ErrNoUpdates, then the conditions are parsed.
func checkPatch(in PatchInput) (*change, error) {
	f := fault.Fields{}
	c := &change{}
	c.name = valid.PatchName(f, in.Name, MaxName)
	if !in.Description.Wrong(f, "description", "a string or null") && in.Description.Set {
		c.setDescription, c.description = true, description(f, in.Description.Value)
	}
	raw := in.Conditions.NotNull(f, "conditions", "an object")
	if err := f.Err(); err != nil {
		return nil, err
	}
	if !in.Name.Set && !in.Description.Set && !in.Conditions.Set {
		return nil, ErrNoUpdates
	}
	if raw != nil {
		cond, err := conditions(*raw)
		if err != nil {
			return nil, err
		}
		c.conditions = cond
	}
	return c, nil
}

// apply diffs the change against the stored filter cur: the filter after it
// and the fields whose value actually changed (the audit entry names them).
func (c *change) apply(cur *Filter, now string) (Filter, []string) {
	next := *cur
	changed := []string{}
	if c.name != nil {
		next.Name = *c.name
		if next.Name != cur.Name {
			changed = append(changed, "name")
		}
	}
	if c.setDescription {
		next.Description = c.description
		if !sameText(c.description, cur.Description) {
			changed = append(changed, "description")
		}
	}
	if c.conditions != "" {
		next.Conditions = c.conditions
		if c.conditions != cur.Conditions {
			changed = append(changed, "conditions")
		}
	}
	next.UpdatedAt = now
	return next, changed
}

// patchWrite is the one transaction of a PATCH: the filter as read (version)
// and its audit entry.
func (s *Service) patchWrite(ctx context.Context, p *authz.Principal, cur, next *Filter, changed []string) error {
	tx := (&store.Tx{}).Add(replaceWrite(next, cur.Version), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: cur.OrgID,
		PartnerID: cur.PartnerID, Action: "filter.update", ResourceType: "filter", ResourceID: cur.ID, ResourceName: next.Name,
		Details: map[string]any{"changed": changed}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return ErrConcurrent
		}
		return fmt.Errorf("update filter %s: %w", cur.ID, err)
	}
	return nil
}

// Delete removes a filter and returns it.
func (s *Service) Delete(ctx context.Context, id string) (*Filter, error) {
	p, err := write(ctx)
	if err != nil {
		return nil, err
	}
	cur, err := s.filter(ctx, p, id)
	if err != nil {
		return nil, err
	}
	tx := (&store.Tx{}).Add(deleteWrite(cur), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: cur.OrgID,
		PartnerID: cur.PartnerID, Action: "filter.delete", ResourceType: "filter", ResourceID: cur.ID, ResourceName: cur.Name}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("delete filter %s: %w", id, err)
	}
	return cur, nil
}

// Preview evaluates ad-hoc conditions over every device the caller can see.
func (s *Service) Preview(ctx context.Context, in PreviewInput) (*Preview, error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	limit := DefaultPreview
	if in.Limit != nil {
		limit = *in.Limit
		valid.Range(f, "limit", limit, 1, MaxPreviewLimit)
	}
	if len(in.Conditions) == 0 || string(in.Conditions) == "null" {
		f.Add("conditions", "is required")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	g, err := filter.Parse(in.Conditions, "conditions")
	if err != nil {
		return nil, err
	}
	res, err := s.evaluate(ctx, p, g, limit)
	if err != nil {
		return nil, err
	}
	err = audit.Log(ctx, s.St.St, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "filter.preview",
		ResourceType: "filter", Details: map[string]any{"totalCount": res.TotalCount, "limit": limit}})
	return res, err
}

// PreviewSaved evaluates a saved filter.
func (s *Service) PreviewSaved(ctx context.Context, id string, limit int) (*Preview, error) {
	p, err := read(ctx)
	if err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxPreviewLimit {
		return nil, fault.Invalid("limit", fmt.Sprintf("must be between 1 and %d", MaxPreviewLimit))
	}
	flt, err := s.filter(ctx, p, id)
	if err != nil {
		return nil, err
	}
	g, err := filter.Parse(json.RawMessage(flt.Conditions), "conditions")
	if err != nil {
		return nil, err
	}
	res, err := s.evaluate(ctx, p, g, limit)
	if err != nil {
		return nil, err
	}
	err = audit.Log(ctx, s.St.St, audit.Entry{Actor: p.Actor(), OrgID: flt.OrgID, PartnerID: flt.PartnerID, Action: "filter.saved.preview",
		ResourceType: "filter", ResourceID: flt.ID, ResourceName: flt.Name, Details: map[string]any{"totalCount": res.TotalCount, "limit": limit}})
	return res, err
}

// evaluate runs g over the caller's devices; the devices answered are the
// first limit matches by hostname.
func (s *Service) evaluate(ctx context.Context, p *authz.Principal, g *filter.Group, limit int) (*Preview, error) {
	now := s.Clock.Now()
	match, err := g.Compile(now)
	if err != nil {
		return nil, err
	}
	devs, err := s.Devices.Reachable(ctx, p, g.UsesSoftware())
	if err != nil {
		return nil, err
	}
	var hits []device.Device
	for i := range devs {
		v := devs[i].View()
		if match(&v) {
			hits = append(hits, devs[i])
		}
	}
	slices.SortFunc(hits, func(a, b device.Device) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Hostname), strings.ToLower(b.Hostname)), strings.Compare(a.ID, b.ID))
	})
	res := &Preview{TotalCount: len(hits), Devices: []PreviewDevice{}, EvaluatedAt: clock.Format(now)}
	for _, d := range hits[:min(limit, len(hits))] {
		res.Devices = append(res.Devices, PreviewDevice{ID: d.ID, Hostname: d.Hostname, DisplayName: d.DisplayName,
			OSType: d.OSType, Status: d.Status, LastSeenAt: d.LastSeenAt})
	}
	return res, nil
}

// filter reads filter id if the caller can reach its organization.
func (s *Service) filter(ctx context.Context, p *authz.Principal, id string) (*Filter, error) {
	return tenant.Find(ctx, p, id, s.St.Get, s.St.ByID, ErrNotFound)
}

// read and write are the preambles: devices:read (user or key), and
// devices:write from a user session (MFA is the route's).
func read(ctx context.Context) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, authz.DevicesRead)
}

// A saved filter is the whole organization's: a restricted caller reads and
// previews (within its restriction) but does not change them.
func write(ctx context.Context) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, authz.DevicesWrite, authz.NeedUserSession, authz.NeedUnrestricted)
}

// conditions parses a ConditionGroup and returns it re-encoded compactly.
func conditions(raw json.RawMessage) (string, error) {
	g, err := filter.Parse(raw, "conditions")
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(g)
	if err != nil {
		return "", err
	}
	return string(b), nil
}

// description validates an optional description (nil stays nil).
func description(f fault.Fields, d *string) *string {
	if d == nil {
		return nil
	}
	if n := len([]rune(*d)); n > MaxDescription {
		f.Add("description", fmt.Sprintf("must be at most %d characters", MaxDescription))
	}
	return d
}

func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
