package pam

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
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/valid"
)

// ErrSignerGroupRef is a rule naming a signer group its organization lacks.
var ErrSignerGroupRef = fault.Invalid("matchSignerGroupId", "must be a signer group of the rule's organization")

// ErrOrgWideRule refuses a restricted caller a rule wider than its sites.
var ErrOrgWideRule = fault.Forbidden("Site-restricted users can only manage rules of their sites")

// RuleInput is the body of rule create and PATCH (every field optional on
// PATCH; null clears a nullable field).
type RuleInput struct {
	OrgID                   string                `json:"orgId"`
	Name                    valid.Opt[string]     `json:"name"`
	Verdict                 valid.Opt[string]     `json:"verdict"`
	Priority                valid.Opt[int]        `json:"priority"`
	Enabled                 valid.Opt[bool]       `json:"enabled"`
	SiteID                  valid.Opt[string]     `json:"siteId"`
	MatchSigner             valid.Opt[string]     `json:"matchSigner"`
	MatchSignerGroupID      valid.Opt[string]     `json:"matchSignerGroupId"`
	MatchHash               valid.Opt[string]     `json:"matchHash"`
	MatchPathGlob           valid.Opt[string]     `json:"matchPathGlob"`
	MatchParentImage        valid.Opt[string]     `json:"matchParentImage"`
	MatchCommandLine        valid.Opt[string]     `json:"matchCommandLine"`
	MatchUser               valid.Opt[string]     `json:"matchUser"`
	MatchAdGroup            valid.Opt[string]     `json:"matchAdGroup"`
	MatchToolName           valid.Opt[string]     `json:"matchToolName"`
	MatchRiskTier           valid.Opt[int]        `json:"matchRiskTier"`
	MatchNegate             valid.Opt[[]string]   `json:"matchNegate"`
	TimeWindow              valid.Opt[TimeWindow] `json:"timeWindow"`
	ApprovalDurationMinutes valid.Opt[int]        `json:"approvalDurationMinutes"`
}

// nullString is a nullable string field after a PATCH: cur when absent (or
// of the wrong type, reported at path), nil when null or blank, else the
// value, trimmed (a command line is kept as sent).
func nullString(f fault.Fields, path string, o valid.Opt[string], cur *string) *string {
	if o.Wrong(f, path, "a string or null") || !o.Set {
		return cur
	}
	if o.Value == nil {
		return nil
	}
	v := *o.Value
	if path != "matchCommandLine" {
		v = strings.TrimSpace(v)
	}
	if v == "" {
		return nil
	}
	return &v
}

// nullable is a nullable field after a PATCH: cur when absent (or of the
// wrong type, reported at path as "must be " + what), nil when null, else the
// value.
func nullable[T any](f fault.Fields, path, what string, o valid.Opt[T], cur *T) *T {
	if o.Wrong(f, path, what) || !o.Set {
		return cur
	}
	return o.Value
}

// apply merges in into r and checks the field shapes (types, names; name,
// verdict, priority and enabled refuse null); the rule's own validation
// (policy.Validate) runs on the merged result.
func (in *RuleInput) apply(f fault.Fields, r *Rule) {
	if v := in.Name.NotNull(f, "name", "a string"); v != nil {
		r.Name = strings.TrimSpace(*v)
	}
	if v := in.Verdict.NotNull(f, "verdict", "one of auto_approve, auto_deny, require_approval, ignore"); v != nil {
		r.Verdict = *v
	}
	if v := in.Priority.NotNull(f, "priority", "an integer"); v != nil {
		r.Priority = *v
	}
	if v := in.Enabled.NotNull(f, "enabled", "a boolean"); v != nil {
		r.Enabled = *v
	}
	r.SiteID = nullString(f, "siteId", in.SiteID, r.SiteID)
	r.MatchSigner = nullString(f, "matchSigner", in.MatchSigner, r.MatchSigner)
	r.MatchSignerGroupID = nullString(f, "matchSignerGroupId", in.MatchSignerGroupID, r.MatchSignerGroupID)
	r.MatchHash = nullString(f, "matchHash", in.MatchHash, r.MatchHash)
	r.MatchPathGlob = nullString(f, "matchPathGlob", in.MatchPathGlob, r.MatchPathGlob)
	r.MatchParentImage = nullString(f, "matchParentImage", in.MatchParentImage, r.MatchParentImage)
	r.MatchCommandLine = nullString(f, "matchCommandLine", in.MatchCommandLine, r.MatchCommandLine)
	r.MatchUser = nullString(f, "matchUser", in.MatchUser, r.MatchUser)
	r.MatchAdGroup = nullString(f, "matchAdGroup", in.MatchAdGroup, r.MatchAdGroup)
	r.MatchToolName = nullString(f, "matchToolName", in.MatchToolName, r.MatchToolName)
	r.MatchRiskTier = nullable(f, "matchRiskTier", "an integer or null", in.MatchRiskTier, r.MatchRiskTier)
	r.ApprovalDurationMinutes = nullable(f, "approvalDurationMinutes", "an integer or null", in.ApprovalDurationMinutes, r.ApprovalDurationMinutes)
	r.TimeWindow = nullable(f, "timeWindow", "an object {start, end, days?, timezone?} or null", in.TimeWindow, r.TimeWindow)
	if !in.MatchNegate.Wrong(f, "matchNegate", "an array of criterion names or null") && in.MatchNegate.Set {
		r.MatchNegate = in.MatchNegate.OrZero()
	}
	if r.SiteID != nil {
		valid.UUID(f, "siteId", *r.SiteID)
	}
	if r.MatchSignerGroupID != nil {
		valid.UUID(f, "matchSignerGroupId", *r.MatchSignerGroupID)
	}
}

// ruleWriter is the preamble of rule, signer-group, software-policy and
// config writes: devices:write (the route adds MFA).
func ruleWriter(ctx context.Context) (*authz.Principal, error) {
	return actor(ctx, authz.DevicesWrite)
}

// RuleList is the rules answer.
type RuleList struct {
	Success bool   `json:"success"`
	Rules   []Rule `json:"rules"`
}

// RuleReply is the create, PATCH and delete answer of a rule.
type RuleReply struct {
	Success bool  `json:"success"`
	Rule    *Rule `json:"rule"`
}

// ruleVisible: restricted callers see organization-wide rules and the rules
// of their sites. The rule's organization is decided before, by the read
// that found it (tenant.Find, or the organizations listPolicies reached).
func ruleVisible(p *authz.Principal, r *Rule) bool {
	return r.SiteID == nil || p.CanAccessSite(*r.SiteID)
}

// Rules lists the rules the caller can see in priority order (lower first;
// ties by createdAt, then id).
func (s *Service) Rules(ctx context.Context, orgID string) ([]Rule, error) {
	out, err := listPolicies(ctx, s, orgID, s.St.rules().All, ruleVisible)
	if err != nil {
		return nil, err
	}
	SortRules(out)
	return out, nil
}

// SortRules orders rules by priority, then createdAt, then id.
func SortRules(rs []Rule) {
	slices.SortFunc(rs, func(a, b Rule) int {
		return cmp.Or(cmp.Compare(a.Priority, b.Priority), strings.Compare(a.CreatedAt, b.CreatedAt), strings.Compare(a.ID, b.ID))
	})
}

// CreateRule stores a new rule (pam.rule.create).
func (s *Service) CreateRule(ctx context.Context, in RuleInput) (*Rule, error) {
	p, err := ruleWriter(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	r := &Rule{Priority: DefaultPriority, Enabled: true}
	in.apply(f, r)
	if !in.Name.Set {
		f.Add("name", "is required")
	}
	if !in.Verdict.Set {
		f.Add("verdict", "is required")
	}
	o, err := s.createOrg(ctx, p, f, in.OrgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	r.ID, r.OrgID, r.PartnerID = uuid.NewString(), o.ID, o.PartnerID
	r.CreatedBy, r.UpdatedBy, r.CreatedByEmail, r.UpdatedByEmail = p.UserID, p.UserID, p.Email, p.Email
	r.CreatedAt, r.UpdatedAt = now, now
	r.Keys = RuleKeys(o.ID, r.ID)
	if err := s.checkRule(ctx, p, r); err != nil {
		return nil, err
	}
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.PutNew(r), Refs: s.ruleRefs(r), Org: r.Owner(), ID: r.ID, Name: r.Name,
		Action: "pam.rule.create", Resource: "pam_rule", Details: map[string]any{"verdict": r.Verdict, "priority": r.Priority, "siteId": r.SiteID},
		Conflict: ErrChanged, What: "create pam rule"}); err != nil {
		return nil, err
	}
	return r, nil
}

// ruleRefs asserts, in the rule's transaction, that the signer group it
// names still exists (a concurrent delete cannot leave a dangling reference).
func (s *Service) ruleRefs(r *Rule) *store.Write {
	if r.MatchSignerGroupID == nil {
		return nil
	}
	k := SignerGroupKeys(r.OrgID, *r.MatchSignerGroupID)
	return store.Assert(k.PK, k.SK, store.Present())
}

// checkRule validates the merged rule r: its site and signer group in its
// organization and within p's sites, then the engine's rules (policy.Validate).
func (s *Service) checkRule(ctx context.Context, p *authz.Principal, r *Rule) error {
	f := fault.Fields{}
	validateRule(f, r)
	if err := f.Err(); err != nil {
		return err
	}
	if r.SiteID == nil {
		if p.SiteRestricted() || p.RequireUnrestricted() != nil {
			return ErrOrgWideRule
		}
	} else {
		if _, err := s.Orgs.Site(ctx, r.OrgID, *r.SiteID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return fault.Invalid("siteId", "must be a site of the rule's organization")
			}
			return err
		}
		if !p.CanAccessSite(*r.SiteID) {
			return ErrSiteAccess
		}
	}
	if r.MatchSignerGroupID != nil {
		if _, err := s.St.SignerGroup(ctx, r.OrgID, *r.MatchSignerGroupID); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return ErrSignerGroupRef
			}
			return err
		}
	}
	return nil
}

func (s *Service) rule(ctx context.Context, p *authz.Principal, id string) (*Rule, error) {
	r, err := tenant.Find(ctx, p, id, s.St.rules().Get, s.St.rules().ByID, ErrRuleNotFound)
	if err != nil {
		return nil, err
	}
	if !ruleVisible(p, r) {
		return nil, ErrRuleNotFound
	}
	return r, nil
}

// UpdateRule applies a PATCH; the merged rule is validated (pam.rule.update).
func (s *Service) UpdateRule(ctx context.Context, id string, in RuleInput) (*Rule, error) {
	p, r, err := policyTarget(ctx, ruleWriter, id, in.OrgID, s.rule)
	if err != nil {
		return nil, err
	}
	if r.SiteID == nil && p.RequireUnrestricted() != nil {
		return nil, ErrOrgWideRule
	}
	before := *r
	f := fault.Fields{}
	in.apply(f, r)
	if err := f.Err(); err != nil {
		return nil, err
	}
	if err := s.checkRule(ctx, p, r); err != nil {
		return nil, err
	}
	r.UpdatedBy, r.UpdatedByEmail, r.UpdatedAt = p.UserID, p.Email, clock.Format(s.Clock.Now())
	if err := s.commitPolicy(ctx, p, policyChange{Row: replaceWrite(r, before.UpdatedAt), Refs: s.ruleRefs(r), Org: r.Owner(), ID: r.ID, Name: r.Name,
		Action: "pam.rule.update", Resource: "pam_rule", Details: map[string]any{"changed": changedRuleFields(&before, r)},
		Conflict: ErrChanged, What: "update pam rule"}); err != nil {
		return nil, err
	}
	return r, nil
}

func changedRuleFields(a, b *Rule) []string {
	var out []string
	x, y := ruleFields(a), ruleFields(b)
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range x {
			if !yield(k) {
				return
			}
		}
	}) {
		if x[k] != y[k] {
			out = append(out, k)
		}
	}
	return out
}

func ruleFields(r *Rule) map[string]string {
	s := func(p *string) string {
		if p == nil {
			return "<nil>"
		}
		return *p
	}
	i := func(p *int) string {
		if p == nil {
			return "<nil>"
		}
		return fmt.Sprint(*p)
	}
	tw := "<nil>"
	if r.TimeWindow != nil {
		tw = fmt.Sprint(*r.TimeWindow)
	}
	return map[string]string{"name": r.Name, "verdict": r.Verdict, "priority": fmt.Sprint(r.Priority), "enabled": fmt.Sprint(r.Enabled),
		"siteId": s(r.SiteID), "matchSigner": s(r.MatchSigner), "matchSignerGroupId": s(r.MatchSignerGroupID), "matchHash": s(r.MatchHash),
		"matchPathGlob": s(r.MatchPathGlob), "matchParentImage": s(r.MatchParentImage), "matchCommandLine": s(r.MatchCommandLine),
		"matchUser": s(r.MatchUser), "matchAdGroup": s(r.MatchAdGroup), "matchToolName": s(r.MatchToolName), "matchRiskTier": i(r.MatchRiskTier),
		"matchNegate": fmt.Sprint(r.MatchNegate), "timeWindow": tw, "approvalDurationMinutes": i(r.ApprovalDurationMinutes)}
}

// DeleteRule removes a rule (pam.rule.delete).
func (s *Service) DeleteRule(ctx context.Context, id string) (*Rule, error) {
	p, r, err := policyTarget(ctx, ruleWriter, id, "", s.rule)
	if err != nil {
		return nil, err
	}
	if r.SiteID == nil && p.RequireUnrestricted() != nil {
		return nil, ErrOrgWideRule
	}
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.Delete(r.PK, r.SK).Exists(), Org: r.Owner(), ID: r.ID, Name: r.Name,
		Action: "pam.rule.delete", Resource: "pam_rule", Conflict: ErrRuleNotFound, What: "delete pam rule " + id}); err != nil {
		return nil, err
	}
	return r, nil
}

// ---- signer groups --------------------------------------------------------

// SignerGroupInput is the body of signer-group create and PATCH.
type SignerGroupInput struct {
	OrgID       string              `json:"orgId"`
	Name        valid.Opt[string]   `json:"name"`
	Description valid.Opt[string]   `json:"description"`
	Signers     valid.Opt[[]string] `json:"signers"`
}

func (in *SignerGroupInput) apply(f fault.Fields, g *SignerGroup) {
	if v := in.Name.NotNull(f, "name", "a string"); v != nil {
		g.Name = strings.TrimSpace(*v)
	}
	g.Description = nullable(f, "description", "a string or null", in.Description, g.Description)
	if g.Description != nil {
		valid.Len(f, "description", *g.Description, 0, MaxDescription)
	}
	if v := in.Signers.NotNull(f, "signers", "an array of strings"); v != nil {
		g.Signers = NormalizeSigners(f, *v)
	}
	valid.Name(f, "name", g.Name, MaxName)
}

// NormalizeSigners trims, de-duplicates and bounds signers
// (policy.NormalizeSigners), adding its errors to f.
func NormalizeSigners(f fault.Fields, in []string) []string {
	out, fe := policy.NormalizeSigners(in)
	f.Merge("", fe)
	return out
}

// SignerGroupList is the signer-group answer of list, and of create, PATCH
// and delete with the one group written.
type SignerGroupList struct {
	Success      bool          `json:"success"`
	SignerGroups []SignerGroup `json:"signerGroups"`
}

// SignerGroups lists the signer groups the caller reaches, by name.
func (s *Service) SignerGroups(ctx context.Context, orgID string) ([]SignerGroup, error) {
	out, err := listPolicies(ctx, s, orgID, s.St.signerGroups().All, nil)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b SignerGroup) int {
		return cmp.Or(strings.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name)), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// orgWideWriter is the preamble of writes to organization-wide PAM objects
// (signer groups, software policies, config): restricted callers are refused.
func orgWideWriter(ctx context.Context) (*authz.Principal, error) {
	p, err := ruleWriter(ctx)
	if err != nil {
		return nil, err
	}
	if err := p.RequireUnrestricted(); err != nil {
		return nil, err
	}
	return p, nil
}

// CreateSignerGroup stores a signer group (pam.signer_group.create).
func (s *Service) CreateSignerGroup(ctx context.Context, in SignerGroupInput) (*SignerGroup, error) {
	p, err := orgWideWriter(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	g := &SignerGroup{Signers: []string{}}
	in.apply(f, g)
	o, err := s.createOrg(ctx, p, f, in.OrgID)
	if err != nil {
		return nil, err
	}
	now := clock.Format(s.Clock.Now())
	g.ID, g.OrgID, g.PartnerID, g.CreatedAt, g.UpdatedAt = uuid.NewString(), o.ID, o.PartnerID, now, now
	g.CreatedBy, g.UpdatedBy, g.CreatedByEmail, g.UpdatedByEmail = p.UserID, p.UserID, p.Email, p.Email
	g.Keys = SignerGroupKeys(o.ID, g.ID)
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.PutNew(g), Org: g.Owner(), ID: g.ID, Name: g.Name,
		Action: "pam.signer_group.create", Resource: "pam_signer_group", Details: map[string]any{"signers": len(g.Signers)},
		What: "create signer group"}); err != nil {
		return nil, err
	}
	return g, nil
}

func (s *Service) signerGroup(ctx context.Context, p *authz.Principal, id string) (*SignerGroup, error) {
	return tenant.Find(ctx, p, id, s.St.signerGroups().Get, s.St.signerGroups().ByID, ErrSignerGroupNotFound)
}

// UpdateSignerGroup applies a PATCH (pam.signer_group.update).
func (s *Service) UpdateSignerGroup(ctx context.Context, id string, in SignerGroupInput) (*SignerGroup, error) {
	p, g, err := policyTarget(ctx, orgWideWriter, id, in.OrgID, s.signerGroup)
	if err != nil {
		return nil, err
	}
	was := g.UpdatedAt
	f := fault.Fields{}
	in.apply(f, g)
	if err := f.Err(); err != nil {
		return nil, err
	}
	g.UpdatedBy, g.UpdatedByEmail, g.UpdatedAt = p.UserID, p.Email, clock.Format(s.Clock.Now())
	if err := s.commitPolicy(ctx, p, policyChange{Row: replaceWrite(g, was), Org: g.Owner(), ID: g.ID, Name: g.Name,
		Action: "pam.signer_group.update", Resource: "pam_signer_group", Details: map[string]any{"signers": len(g.Signers)},
		Conflict: ErrChanged, What: "update signer group"}); err != nil {
		return nil, err
	}
	return g, nil
}

// DeleteSignerGroup removes a signer group no rule references (409 naming
// the count otherwise; pam.signer_group.delete). The delete requires the
// rules it saw to be the rules there are: a rule created meanwhile carries an
// assertion on the group, so one of the two transactions fails.
func (s *Service) DeleteSignerGroup(ctx context.Context, id string) (*SignerGroup, error) {
	p, g, err := policyTarget(ctx, orgWideWriter, id, "", s.signerGroup)
	if err != nil {
		return nil, err
	}
	rules, err := s.St.Rules(ctx, g.OrgID)
	if err != nil {
		return nil, err
	}
	refs := 0
	for _, r := range rules {
		if r.MatchSignerGroupID != nil && *r.MatchSignerGroupID == g.ID {
			refs++
		}
	}
	if refs > 0 {
		noun := "rules reference"
		if refs == 1 {
			noun = "rule references"
		}
		return nil, fault.Conflict(fmt.Sprintf("Signer group is still referenced: %d %s it", refs, noun)).
			WithDetails(map[string]any{"ruleCount": refs})
	}
	if err := s.commitPolicy(ctx, p, policyChange{Row: store.Delete(g.PK, g.SK).When(store.Is("updatedAt", g.UpdatedAt)), Org: g.Owner(), ID: g.ID, Name: g.Name,
		Action: "pam.signer_group.delete", Resource: "pam_signer_group", Conflict: ErrChanged, What: "delete signer group"}); err != nil {
		return nil, err
	}
	return g, nil
}

// ---- config ---------------------------------------------------------------

// ConfigInput is the PUT /pam/config body.
type ConfigInput struct {
	OrgID                   string  `json:"orgId"`
	DefaultUnmatchedVerdict *string `json:"defaultUnmatchedVerdict"`
}

// ConfigReply is the config answer.
type ConfigReply struct {
	Success bool    `json:"success"`
	Config  *Config `json:"config"`
}

// createOrg is the organization of a create (or of a config read or write)
// once the body's fields are checked into f: the caller's own, or orgID
// (required for partner and system callers; tenant.CreateOrg), answered with
// f's errors first, then those checks add, then the organization within
// the caller's reach.
func (s *Service) createOrg(ctx context.Context, p *authz.Principal, f fault.Fields, orgID string, checks ...func(fault.Fields)) (*tenant.Organization, error) {
	id := tenant.CreateOrg(f, p, orgID)
	if err := f.Err(); err != nil {
		return nil, err
	}
	for _, check := range checks {
		if check(f); f.Err() != nil {
			return nil, f.Err()
		}
	}
	return s.Orgs.Reach(ctx, p, id)
}

// Config returns an organization's config (require_approval when unset).
func (s *Service) Config(ctx context.Context, orgID string) (*Config, error) {
	p, err := reader(ctx)
	if err != nil {
		return nil, err
	}
	o, err := s.createOrg(ctx, p, fault.Fields{}, orgID)
	if err != nil {
		return nil, err
	}
	return s.St.Config(ctx, o.ID)
}

// PutConfig sets the default verdict (pam.config.update).
func (s *Service) PutConfig(ctx context.Context, in ConfigInput) (*Config, error) {
	p, err := orgWideWriter(ctx)
	if err != nil {
		return nil, err
	}
	f := fault.Fields{}
	v := valid.Required(f, "defaultUnmatchedVerdict", in.DefaultUnmatchedVerdict)
	if in.DefaultUnmatchedVerdict != nil {
		valid.OneOf(f, "defaultUnmatchedVerdict", v, VerdictRequireApproval, VerdictAutoDeny)
	}
	if err := f.Err(); err != nil {
		return nil, err
	}
	o, err := s.createOrg(ctx, p, fault.Fields{}, in.OrgID)
	if err != nil {
		return nil, err
	}
	c := &Config{Keys: ConfigKeys(o.ID), OrgID: o.ID, DefaultUnmatchedVerdict: v, UpdatedAt: clock.Format(s.Clock.Now())}
	tx := (&store.Tx{}).Add(store.Put(c), PoliciesChanged(o.ID), audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: o.ID, PartnerID: o.PartnerID,
		Action: "pam.config.update", ResourceType: "pam_config", ResourceID: o.ID, ResourceName: o.Name,
		Details: map[string]any{"defaultUnmatchedVerdict": v}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		return nil, fmt.Errorf("put pam config: %w", err)
	}
	return c, nil
}
