package script

import (
	"context"
	"errors"
	"fmt"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// Errors of the script routes.
var (
	ErrNotFound   = fault.NotFound("Script not found")
	ErrNoUpdates  = fault.BadRequest("No updates provided")
	ErrConcurrent = fault.Conflict("Script was changed concurrently").WithCode(fault.CodeRaceLost)
)

// Orgs resolves the organizations a caller reaches; tenant.Store satisfies it.
type Orgs interface {
	tenant.ListOrgs
}

// Service holds the script rules.
type Service struct {
	St    Store
	Orgs  Orgs
	Clock clock.Clock
}

// CreateInput is the create body.
type CreateInput struct {
	OrgID       string  `json:"orgId"`
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Language    *string `json:"language"`
	Content     *string `json:"content"`
}

// PatchInput is the PATCH body: each field absent (kept), null or a value.
// description null clears it (the document marks it nullable); name,
// language and content refuse null.
type PatchInput struct {
	Name        valid.Opt[string] `json:"name"`
	Description valid.Opt[string] `json:"description"`
	Language    valid.Opt[string] `json:"language"`
	Content     valid.Opt[string] `json:"content"`
}

// ListFilter is the list query: page and limit, or the cursor of the page
// before (the fast path for deep pages; it wins over page).
type ListFilter struct {
	OrgID       string
	Page, Limit int
	Cursor      string
}

// List returns one page of the scripts of the caller's organizations (orgID
// narrows), by name (case-insensitively), then id: tenant.List over the script
// list indexes (GSI4 per organization, GSI3 per partner, merged for a system
// caller without orgId). Scripts are organization-wide: a site- or
// device-group-restricted caller sees all of its organization's. The total is
// the read's own when it reached the end, else a Select COUNT of the
// partition(s) (a count of the kept index rows for a partner caller with
// selected organizations).
func (s *Service) List(ctx context.Context, f ListFilter) (*tenant.Page[Script], error) {
	p, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	if f.OrgID != "" && !valid.IsUUID(f.OrgID) {
		return nil, fault.Invalid("orgId", "must be a UUID")
	}
	return tenant.List(ctx, p, tenant.Listing[Script]{St: s.St.St, Orgs: s.Orgs, Name: "SCRIPTS",
		OrgPK: OrgListPK, PartnerPK: PartnerListPK, OrgWide: true},
		tenant.ListQuery[Script]{OrgID: f.OrgID, Page: f.Page, Limit: f.Limit, Cursor: f.Cursor})
}

// Visible lists the scripts p may read, for search; nil when it may not.
func (s *Service) Visible(ctx context.Context, p *authz.Principal, orgIDs []string) ([]Script, error) {
	if !p.Holds(authz.ScriptsRead) {
		return nil, nil
	}
	return tenant.Collect(ctx, orgIDs, s.St.OrgScripts, nil)
}

// Create adds a script.
func (s *Service) Create(ctx context.Context, in CreateInput) (*Script, error) {
	p, err := s.write(ctx, authz.ScriptsWrite)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	name := valid.Required(f, "name", in.Name)
	valid.Name(f, "name", name, MaxName)
	checkDescription(f, in.Description)
	lang := valid.Required(f, "language", in.Language)
	if in.Language != nil {
		valid.OneOf(f, "language", lang, Languages...)
	}
	content := valid.Required(f, "content", in.Content)
	checkContent(f, content)
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
	sc := &Script{Keys: keys(o.ID, id), ID: id, OrgID: o.ID, PartnerID: o.PartnerID, Name: name, Description: in.Description,
		Language: lang, Content: content, CreatedBy: p.UserID, CreatedAt: now, UpdatedAt: now, Version: 1}
	tx := (&store.Tx{}).Add(createWrite(sc), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.ID, PartnerID: o.PartnerID,
		Action: "script.create", ResourceType: "script", ResourceID: id, ResourceName: name, Details: map[string]any{"language": lang}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("create script: %w", err)
	}
	return sc, nil
}

// Get returns one script.
func (s *Service) Get(ctx context.Context, id string) (*Script, error) {
	p, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	return s.script(ctx, p, id)
}

// Patch changes a script: decode (PatchInput), validate into a change, diff
// against the stored script, one write.
func (s *Service) Patch(ctx context.Context, id string, in PatchInput) (*Script, error) {
	p, err := s.write(ctx, authz.ScriptsWrite)
	if err != nil {
		return nil, err
	}
	c, err := checkPatch(in)
	if err != nil {
		return nil, err
	}
	cur, err := s.script(ctx, p, id)
	if err != nil {
		return nil, err
	}
	next := c.apply(cur, clock.Format(s.Clock.Now()))
	tx := (&store.Tx{}).Add(replaceWrite(&next, cur.Version), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: cur.OrgID,
		PartnerID: cur.PartnerID, Action: "script.update", ResourceType: "script", ResourceID: cur.ID, ResourceName: next.Name,
		Details: map[string]any{"changed": c.fields}}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return nil, ErrConcurrent
		}
		return nil, fmt.Errorf("update script %s: %w", id, err)
	}
	return &next, nil
}

// change is a validated PATCH: a nil field keeps the stored value;
// description is replaced (nil clears it) when setDescription; fields are the
// names the body set, in the audit entry's order.
type change struct {
	name, language, content *string
	setDescription          bool
	description             *string
	fields                  []string
}

// checkPatch validates a PATCH body into a change: field errors first, then
// an empty body is ErrNoUpdates.
func checkPatch(in PatchInput) (*change, error) {
	f := fault.Fields{}
	c := &change{}
	if c.name = valid.PatchName(f, in.Name, MaxName); c.name != nil {
		c.fields = append(c.fields, "name")
	}
	if !in.Description.Wrong(f, "description", "a string or null") && in.Description.Set {
		checkDescription(f, in.Description.Value)
		c.setDescription, c.description, c.fields = true, in.Description.Value, append(c.fields, "description")
	}
	if l := in.Language.NotNull(f, "language", "a string"); l != nil {
		valid.OneOf(f, "language", *l, Languages...)
		c.language, c.fields = l, append(c.fields, "language")
	}
	if ct := in.Content.NotNull(f, "content", "a string"); ct != nil {
		if *ct == "" {
			f.Add("content", "must not be empty")
		}
		checkContent(f, *ct)
		c.content, c.fields = ct, append(c.fields, "content")
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	if len(c.fields) == 0 {
		return nil, ErrNoUpdates
	}
	return c, nil
}

// apply diffs the change onto the stored script cur: the script after it.
func (c *change) apply(cur *Script, now string) Script {
	next := *cur
	if c.name != nil {
		next.Name = *c.name
	}
	if c.setDescription {
		next.Description = c.description
	}
	if c.language != nil {
		next.Language = *c.language
	}
	if c.content != nil {
		next.Content = *c.content
	}
	next.UpdatedAt = now
	return next
}

// Delete removes a script.
func (s *Service) Delete(ctx context.Context, id string) error {
	p, err := s.write(ctx, authz.ScriptsDelete)
	if err != nil {
		return err
	}
	cur, err := s.script(ctx, p, id)
	if err != nil {
		return err
	}
	tx := (&store.Tx{}).Add(deleteWrite(cur), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: cur.OrgID,
		PartnerID: cur.PartnerID, Action: "script.delete", ResourceType: "script", ResourceID: cur.ID, ResourceName: cur.Name}))
	if err := s.St.St.Commit(ctx, tx); err != nil {
		if errors.Is(err, store.ErrConditionFailed) {
			return ErrConcurrent
		}
		return fmt.Errorf("delete script %s: %w", id, err)
	}
	return nil
}

func (s *Service) read(ctx context.Context) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, authz.ScriptsRead)
}

func (s *Service) write(ctx context.Context, perm authz.Permission) (*authz.Principal, error) {
	return authz.RequireTenant(ctx, perm, authz.NeedUserSession, authz.NeedUnrestricted)
}

func (s *Service) script(ctx context.Context, p *authz.Principal, id string) (*Script, error) {
	return tenant.Find(ctx, p, id, s.St.Get, s.St.ByID, ErrNotFound)
}

func checkDescription(f fault.Fields, d *string) {
	if d != nil && len([]rune(*d)) > MaxDescription {
		f.Add("description", fmt.Sprintf("must be at most %d characters", MaxDescription))
	}
}

func checkContent(f fault.Fields, c string) {
	if len(c) > MaxContent {
		f.Add("content", fmt.Sprintf("must be at most %d bytes", MaxContent))
	}
}
