package sso

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/valid"
)

// PatchInput is the PATCH body: each field absent (kept), null or a value.
// clientSecret and defaultRoleId take null (clear); the others refuse it.
type PatchInput struct {
	Name             valid.Opt[string]  `json:"name"`
	Issuer           valid.Opt[string]  `json:"issuer"`
	ClientID         valid.Opt[string]  `json:"clientId"`
	ClientSecret     valid.Opt[string]  `json:"clientSecret"`
	Scopes           valid.Opt[[]item]  `json:"scopes"`
	AttributeMapping valid.Opt[Mapping] `json:"attributeMapping"`
	AutoProvision    valid.Opt[bool]    `json:"autoProvision"`
	DefaultRoleID    valid.Opt[string]  `json:"defaultRoleId"`
	AllowedDomains   valid.Opt[domains] `json:"allowedDomains"`
	EnforceSSO       valid.Opt[bool]    `json:"enforceSSO"`
}

// item is a string element of a PATCH list; an element of another type is
// kept as bad rather than failing the list, so the list's check names its
// index (allowedDomains.0).
type item struct {
	s   string
	bad bool
}

// UnmarshalJSON reads a string, or marks the element bad.
func (i *item) UnmarshalJSON(b []byte) error {
	i.bad = json.Unmarshal(b, &i.s) != nil
	return nil
}

// texts are the strings of a PATCH list (never nil), an element of another
// type refused at path.<index>.
func texts(f fault.Fields, path string, items []item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		if it.bad {
			f.Add(fmt.Sprintf("%s.%d", path, i), "must be a string")
		}
		out[i] = it.s
	}
	return out
}

// fields are the fields the body named, sorted (the audit entry lists them).
func (in PatchInput) fields() []string {
	out := []string{}
	for _, f := range []struct {
		name string
		set  bool
	}{{"allowedDomains", in.AllowedDomains.Set}, {"attributeMapping", in.AttributeMapping.Set},
		{"autoProvision", in.AutoProvision.Set}, {"clientId", in.ClientID.Set}, {"clientSecret", in.ClientSecret.Set},
		{"defaultRoleId", in.DefaultRoleID.Set}, {"enforceSSO", in.EnforceSSO.Set}, {"issuer", in.Issuer.Set},
		{"name", in.Name.Set}, {"scopes", in.Scopes.Set}} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// change is a validated PATCH. A nil field keeps the stored value.
type change struct {
	name, issuer, clientID *string
	secret, role           *string // a new client secret, a new default role id
	clearSecret, clearRole bool
	scopes, domains        []string
	mapping                *Mapping
	auto, enforce          *bool
}

// checkPatch validates a PATCH against the stored provider r; the field
// errors are its error.
func (s *Service) checkPatch(ctx context.Context, in PatchInput, r *record) (*change, error) {
	f := fault.Fields{}
	c := &change{}
	c.name = valid.PatchName(f, in.Name, MaxName)
	if c.clientID = in.ClientID.NotNull(f, "clientId", "a string"); c.clientID != nil {
		checkText(f, "clientId", *c.clientID, MaxClientID)
	}
	switch {
	case in.ClientSecret.Wrong(f, "clientSecret", "a string or null"):
	case in.ClientSecret.Set && in.ClientSecret.Value == nil:
		c.clearSecret = true
	case in.ClientSecret.Set:
		c.secret = in.ClientSecret.Value
		checkText(f, "clientSecret", *c.secret, MaxSecret)
	}
	if sc := in.Scopes.NotNull(f, "scopes", "an array"); sc != nil {
		c.scopes = checkScopes(f, texts(f, "scopes", *sc))
	}
	if ds := in.AllowedDomains.NotNull(f, "allowedDomains", "a comma-separated string or an array"); ds != nil {
		c.domains = ds.check(f)
	}
	if m := in.AttributeMapping.NotNull(f, "attributeMapping", "an object"); m != nil {
		mapping := checkMapping(f, m)
		c.mapping = &mapping
	}
	c.auto = in.AutoProvision.NotNull(f, "autoProvision", "a boolean")
	if c.enforce = in.EnforceSSO.NotNull(f, "enforceSSO", "a boolean"); c.enforce != nil && *c.enforce && r.owner().isPartner() {
		f.Add("enforceSSO", "is available for organization providers only")
	}
	switch {
	case in.DefaultRoleID.Wrong(f, "defaultRoleId", "a string or null"):
	case in.DefaultRoleID.Set && in.DefaultRoleID.Value == nil:
		c.clearRole = true
	case in.DefaultRoleID.Set:
		if c.role = in.DefaultRoleID.Value; !valid.IsUUID(*c.role) {
			f.Add("defaultRoleId", "must be a UUID")
		}
	}
	if c.autoProvision(r) && !c.hasRole(r) {
		f.Add("defaultRoleId", "is required when autoProvision is on")
	}
	if c.issuer = in.Issuer.NotNull(f, "issuer", "a string"); c.issuer != nil {
		if *c.issuer == "" {
			f.Add("issuer", "is required")
		} else {
			s.checkIssuer(ctx, f, *c.issuer)
		}
	}
	return c, f.Err()
}

// autoProvision is whether the provider provisions accounts after c.
func (c *change) autoProvision(r *record) bool {
	if c.auto != nil {
		return *c.auto
	}
	return r.AutoProvision
}

// hasRole is whether the provider has a default role after c.
func (c *change) hasRole(r *record) bool {
	return !c.clearRole && (c.role != nil || r.DefaultRoleID != "")
}

// patched diffs a change against the stored provider r: the provider after it,
// its default role resolved for p and its client secret sealed.
func (s *Service) patched(ctx context.Context, p *authz.Principal, r *record, c *change) (*record, error) {
	next := *r
	setIf(&next.Name, c.name)
	setIf(&next.Issuer, c.issuer)
	setIf(&next.ClientID, c.clientID)
	setIf(&next.AutoProvision, c.auto)
	setIf(&next.EnforceSSO, c.enforce)
	setIf(&next.Mapping, c.mapping)
	if c.scopes != nil {
		next.Scopes = c.scopes
	}
	if c.domains != nil {
		next.AllowedDomains = c.domains
	}
	switch {
	case c.clearRole:
		next.DefaultRoleID, next.DefaultRoleOwner = "", ""
	case c.role != nil:
		ri, err := s.defaultRole(ctx, p, r.owner(), *c.role)
		if err != nil {
			return nil, err
		}
		next.DefaultRoleID, next.DefaultRoleOwner = ri.ID, ri.Owner
	}
	var err error
	switch {
	case c.clearSecret:
		next.ClientSecret = ""
	case c.secret != nil:
		if next.ClientSecret, err = s.seal(r.ID, *c.secret); err != nil {
			return nil, err
		}
	}
	next.Version = r.Version + 1
	next.UpdatedAt = clock.Format(s.Clock.Now())
	// A PATCH that names both issuer and clientId re-anchors the provider's
	// trust: the ceiling becomes the writer's. Any other write can only lower it.
	if c.issuer != nil && c.clientID != nil {
		next.Ceiling = ceilingList(p.Perms)
	} else {
		next.Ceiling = ceilingList(intersect(ceilingSet(r.Ceiling), p.Perms))
	}
	return &next, nil
}

func setIf[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// patchTx is the one write of a PATCH from r to next: the row (compare-and-swap
// on version), the issuer and client id guard when the pair moves (guard, whose
// failure is a taken pair), the active-provider row of an active provider.
func patchTx(r, next *record) (tx *store.Tx, guard *store.Write) {
	tx = (&store.Tx{}).Add(replace(next, r.Version))
	if normIssuer(next.Issuer) != normIssuer(r.Issuer) || next.ClientID != r.ClientID {
		tx.Add(dropGuard(r.Issuer, r.ClientID, r.ID))
		guard = tx.Include(newGuard(next.Issuer, next.ClientID, r.ID))
	}
	if r.Status == StatusActive {
		tx.Add(activate(next))
	}
	return tx, guard
}
