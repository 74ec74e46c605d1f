package policy

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChainInput is everything the decision chain of one organization reads.
// Rules and Policies may include disabled ones and rules of every site: the
// chain keeps what applies. Items of another organization (OrgID set and
// different from the observation's) are ignored.
type ChainInput struct {
	Policies     []SoftwarePolicy
	Rules        []Rule
	SignerGroups []SignerGroup
	// DefaultVerdict is PAM config's defaultUnmatchedVerdict; empty means
	// require_approval.
	DefaultVerdict Verdict
}

// Chain is a compiled decision chain: compile once, decide many times. It is
// immutable and safe for concurrent use.
type Chain struct {
	// The bridge's entries, indexed by their strongest field: an entry is
	// looked up by hash or signer, or tried in turn when only its path glob
	// identifies it.
	policies []SoftwarePolicy
	byHash   map[string][]policyEntry
	bySigner map[string][]policyEntry
	byPath   []policyEntry
	rules    []chainRule // enabled, in priority order
	def      Verdict
	defErr   error
}

type chainRule struct {
	c   *CompiledRule
	err error // compile error: an evaluator error when the chain reaches it
}

type policyEntry struct {
	policy int // index in Chain.policies
	e      compiledEntry
}

type compiledEntry struct {
	strength       int // 3 hash, 2 signer, 1 path glob
	hash, signer   string
	path           *glob
	hasAny, broken bool
}

// Strengths of a software policy entry.
const (
	strengthPath   = 1
	strengthSigner = 2
	strengthHash   = 3
)

// Compile prepares the chain. It never fails: a rule that cannot be compiled
// (a missing signer group) becomes an evaluator error when Decide reaches it,
// and an unknown default verdict one when Decide falls through to it.
func Compile(in ChainInput) *Chain {
	c := &Chain{def: in.DefaultVerdict}
	switch c.def {
	case "":
		c.def = VerdictRequireApproval
	case VerdictRequireApproval, VerdictAutoDeny:
	default:
		c.defErr = fmt.Errorf("policy: unknown default verdict %q", in.DefaultVerdict)
	}
	c.rules = make([]chainRule, 0, len(in.Rules))
	cc := &compileCache{}
	for _, r := range in.Rules {
		if !r.Enabled {
			continue
		}
		cr, err := compileRule(r, in.SignerGroups, cc)
		if err == nil && !r.Verdict.Valid() {
			err = fmt.Errorf("rule %s: unknown verdict %q", r.ID, r.Verdict)
		}
		if err != nil {
			cr = &CompiledRule{rule: r}
		}
		c.rules = append(c.rules, chainRule{c: cr, err: err})
	}
	slices.SortStableFunc(c.rules, func(a, b chainRule) int { return ruleCompare(&a.c.rule, &b.c.rule) })
	c.byHash, c.bySigner = map[string][]policyEntry{}, map[string][]policyEntry{}
	for _, p := range in.Policies {
		if !p.Enabled || (p.Mode != ModeAllowlist && p.Mode != ModeBlocklist) {
			continue
		}
		c.policies = append(c.policies, p)
		for _, e := range p.Executables {
			pe := policyEntry{policy: len(c.policies) - 1, e: compileEntry(e)}
			switch {
			case !pe.e.hasAny || pe.e.broken:
			case pe.e.strength == strengthHash:
				c.byHash[pe.e.hash] = append(c.byHash[pe.e.hash], pe)
			case pe.e.strength == strengthSigner:
				c.bySigner[pe.e.signer] = append(c.bySigner[pe.e.signer], pe)
			default:
				c.byPath = append(c.byPath, pe)
			}
		}
	}
	return c
}

// ruleCompare orders rules: priority ascending, then createdAt, then id.
func ruleCompare(a, b *Rule) int {
	if a.Priority != b.Priority {
		return cmp.Compare(a.Priority, b.Priority)
	}
	if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
		return c
	}
	return strings.Compare(a.ID, b.ID)
}

func compileEntry(e Executable) compiledEntry {
	ce := compiledEntry{
		hash:   fold(strings.TrimSpace(e.Hash)),
		signer: fold(strings.TrimSpace(e.Signer)),
	}
	if pg := strings.TrimSpace(e.PathGlob); pg != "" {
		g, err := compileGlob(pg)
		if err != nil {
			ce.broken = true
		}
		ce.path, ce.strength = g, strengthPath
	}
	if ce.signer != "" {
		ce.strength = strengthSigner
	}
	if ce.hash != "" {
		ce.strength = strengthHash
	}
	ce.hasAny = ce.strength > 0
	return ce
}

// match returns the entry's strength when it matches, else 0. (Entries
// that set nothing, or whose glob did not compile, are never indexed.)
func (e *compiledEntry) match(p *prepared) int {
	if e.hash != "" && (p.hash == "" || p.hash != e.hash) {
		return 0
	}
	if e.signer != "" && (p.signer == "" || p.signer != e.signer) {
		return 0
	}
	if e.path != nil && (p.path == "" || !e.path.match(p.path)) {
		return 0
	}
	return e.strength
}

// Decide runs the chain for obs at now. It never fails: an evaluator error
// (or a panic) yields require_approval with SourceError.
func (c *Chain) Decide(obs Observation, now time.Time) (d Decision) {
	defer func() {
		if v := recover(); v != nil {
			d = errorDecision(fmt.Errorf("policy: decide panicked: %v", v), d.Skipped)
		}
	}()
	p := prepare(&obs)
	subject := strings.TrimSpace(obs.SubjectUsername)

	// 1. The software-policy bridge.
	if best := c.bestPolicy(&obs, &p, subject, &d); best != nil {
		d.Source, d.PolicyID, d.PolicyName = SourcePolicy, best.ID, best.Name
		d.ApprovalDurationMinutes = DefaultApprovalMinutes
		d.Verdict = VerdictAutoDeny
		if best.Mode == ModeAllowlist {
			d.Verdict = VerdictAutoApprove
		}
		return d
	}

	// 2. Enabled rules of the organization and the device's site.
	if c.ruleDecides(&obs, &p, &clock{now: now}, subject, &d) {
		return d
	}

	// 3. The organization default verdict.
	if c.defErr != nil {
		return errorDecision(c.defErr, d.Skipped)
	}
	d.Verdict, d.Source, d.ApprovalDurationMinutes = c.def, SourceDefault, DefaultApprovalMinutes
	return d
}

// bestPolicy answers the software policy that decides p (the strongest match,
// by hash, signer or path, of obs's organization), nil when none does. An
// allowlist entry made by the subject itself is skipped and noted on d.
func (c *Chain) bestPolicy(obs *Observation, p *prepared, subject string, d *Decision) *SoftwarePolicy {
	var best *SoftwarePolicy
	bestStrength := 0
	consider := func(list []policyEntry) {
		for i := range list {
			pe := &list[i]
			s := pe.e.match(p)
			if s == 0 {
				continue
			}
			sp := &c.policies[pe.policy]
			if sp.OrgID != "" && obs.OrgID != "" && sp.OrgID != obs.OrgID {
				continue
			}
			if sp.Mode == ModeAllowlist && actorIsSubject(subject, sp.CreatedBy, sp.UpdatedBy) {
				d.Skipped = skip(d.Skipped, Skipped{Source: SourcePolicy, ID: sp.ID, Name: sp.Name})
				continue
			}
			if best == nil || policyBefore(sp, s, best, bestStrength) {
				best, bestStrength = sp, s
			}
		}
	}
	if p.hash != "" {
		consider(c.byHash[p.hash])
	}
	if p.signer != "" {
		consider(c.bySigner[p.signer])
	}
	if p.path != "" {
		consider(c.byPath)
	}
	return best
}

// ruleDecides sets d from the first rule of obs's organization and site that
// matches p at clk, or from a rule that failed to compile (an error decision),
// and reports whether one did. An auto-approve rule written by the subject
// itself is skipped and noted on d.
func (c *Chain) ruleDecides(obs *Observation, p *prepared, clk *clock, subject string, d *Decision) bool {
	for i := range c.rules {
		cr := &c.rules[i]
		r := &cr.c.rule
		if r.OrgID != "" && obs.OrgID != "" && r.OrgID != obs.OrgID {
			continue
		}
		if r.SiteID != nil && *r.SiteID != "" && *r.SiteID != obs.SiteID {
			continue
		}
		if cr.err != nil {
			*d = errorDecision(cr.err, d.Skipped)
			return true
		}
		if !cr.c.match(p, clk) {
			continue
		}
		if r.Verdict == VerdictAutoApprove && actorIsSubject(subject, cr.c.authors...) {
			d.Skipped = append(d.Skipped, Skipped{Source: SourceRule, ID: r.ID, Name: r.Name})
			continue
		}
		d.Verdict, d.Source, d.RuleID, d.RuleName = r.Verdict, SourceRule, r.ID, r.Name
		d.ApprovalDurationMinutes = DefaultApprovalMinutes
		if m := r.ApprovalDurationMinutes; m != nil && *m >= MinApprovalMinutes && *m <= MaxApprovalMinutes {
			d.ApprovalDurationMinutes = *m
		}
		return true
	}
	return false
}

// Decide compiles in and decides obs at now: for one-off decisions; a caller
// deciding many requests compiles once.
func Decide(in ChainInput, obs Observation, now time.Time) Decision {
	return Compile(in).Decide(obs, now)
}

// policyBefore reports whether policy a, matched with strength sa, wins over
// b matched with sb: stronger, then blocklist, then higher priority, then
// earlier createdAt, then smaller id.
func policyBefore(a *SoftwarePolicy, sa int, b *SoftwarePolicy, sb int) bool {
	if sa != sb {
		return sa > sb
	}
	if a.Mode != b.Mode {
		return a.Mode == ModeBlocklist
	}
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if !a.CreatedAt.Equal(b.CreatedAt) {
		return a.CreatedAt.Before(b.CreatedAt)
	}
	return a.ID < b.ID
}

// skip appends s unless the list already names it.
func skip(list []Skipped, s Skipped) []Skipped {
	for _, v := range list {
		if v == s {
			return list
		}
	}
	return append(list, s)
}

// actorIsSubject reports whether the request's subject is one of the
// actors: the creators and last editors of what a decision rests on.
func actorIsSubject(subject string, actors ...Actor) bool {
	for _, a := range actors {
		if SubjectIsUser(subject, a.Email) {
			return true
		}
	}
	return false
}

// ErrEvaluator wraps every evaluator error a Decision carries.
var ErrEvaluator = errors.New("policy: evaluator error")

func errorDecision(err error, skipped []Skipped) Decision {
	return Decision{
		Verdict: VerdictRequireApproval, Source: SourceError,
		ApprovalDurationMinutes: DefaultApprovalMinutes,
		Skipped:                 skipped,
		Err:                     fmt.Errorf("%w: %w", ErrEvaluator, err),
	}
}
