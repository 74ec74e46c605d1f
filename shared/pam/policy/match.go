package policy

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrSignerGroupMissing is returned when a rule references a signer group
// that was not supplied: an evaluator error (the request is recorded pending).
var ErrSignerGroupMissing = errors.New("policy: rule references a signer group that was not supplied")

// CompiledRule is a rule prepared for matching: globs compiled, strings
// folded, its time window parsed. It is immutable and safe for concurrent use.
type CompiledRule struct {
	rule Rule
	set  uint16 // criteria the rule sets, by bit of Criteria
	neg  uint16 // negated criteria

	signer, hash, user, adGroup, tool, cmd string
	signers                                map[string]struct{}
	path, parent                           *glob
	tier                                   int
	win                                    *window
	// authors are the actors a decision by the rule rests on: the rule's
	// creator and last editor, and those of the signer group it references
	// (separation of duties).
	authors []Actor
}

const (
	bitSigner uint16 = 1 << iota
	bitSignerGroup
	bitHash
	bitPathGlob
	bitParentImage
	bitCommandLine
	bitUser
	bitAdGroup
	bitToolName
	bitRiskTier
)

func criterionBit(c Criterion) uint16 {
	for i, k := range Criteria {
		if k == c {
			return 1 << i
		}
	}
	return 0
}

// setCriteria returns the criteria r sets, as bits.
func setCriteria(r *Rule) uint16 {
	var b uint16
	if strings.TrimSpace(r.MatchSigner) != "" {
		b |= bitSigner
	}
	if r.MatchSignerGroupID != nil && strings.TrimSpace(*r.MatchSignerGroupID) != "" {
		b |= bitSignerGroup
	}
	if strings.TrimSpace(r.MatchHash) != "" {
		b |= bitHash
	}
	if strings.TrimSpace(r.MatchPathGlob) != "" {
		b |= bitPathGlob
	}
	if strings.TrimSpace(r.MatchParentImage) != "" {
		b |= bitParentImage
	}
	if r.MatchCommandLine != "" {
		b |= bitCommandLine
	}
	if strings.TrimSpace(r.MatchUser) != "" {
		b |= bitUser
	}
	if strings.TrimSpace(r.MatchAdGroup) != "" {
		b |= bitAdGroup
	}
	if strings.TrimSpace(r.MatchToolName) != "" {
		b |= bitToolName
	}
	if r.MatchRiskTier != nil {
		b |= bitRiskTier
	}
	return b
}

// CompileRule prepares r for matching. groups must hold the signer group r
// references (others are ignored); a missing one is ErrSignerGroupMissing.
// A rule that would fail Validate still compiles: a malformed window is
// never active, a rule without criteria never matches.
func CompileRule(r Rule, groups []SignerGroup) (*CompiledRule, error) {
	return compileRule(r, groups, &compileCache{})
}

// compileCache shares what one compilation builds for several rules: loaded
// zones and signer groups' folded sets (a group of 500 signers is folded
// once, however many rules reference it).
type compileCache struct {
	zones   zones
	signers map[string]compiledGroup
}

// compiledGroup is a signer group's folded signers and its authors.
type compiledGroup struct {
	set     map[string]struct{}
	authors [2]Actor
}

// signerSet returns group id compiled, or false when groups does not hold it.
func (cc *compileCache) signerSet(groups []SignerGroup, id string) (compiledGroup, bool) {
	if g, ok := cc.signers[id]; ok {
		return g, true
	}
	for _, g := range groups {
		if g.ID != id {
			continue
		}
		set := make(map[string]struct{}, len(g.Signers))
		for _, s := range g.Signers {
			if s = strings.TrimSpace(s); s != "" {
				set[fold(s)] = struct{}{}
			}
		}
		if cc.signers == nil {
			cc.signers = map[string]compiledGroup{}
		}
		cg := compiledGroup{set: set, authors: [2]Actor{g.CreatedBy, g.UpdatedBy}}
		cc.signers[id] = cg
		return cg, true
	}
	return compiledGroup{}, false
}

func compileRule(r Rule, groups []SignerGroup, cc *compileCache) (*CompiledRule, error) {
	c := &CompiledRule{rule: r, set: setCriteria(&r), authors: []Actor{r.CreatedBy, r.UpdatedBy}}
	for _, n := range r.MatchNegate {
		c.neg |= criterionBit(n)
	}
	c.neg &= c.set
	c.signer = fold(strings.TrimSpace(r.MatchSigner))
	c.hash = fold(strings.TrimSpace(r.MatchHash))
	c.user = fold(strings.TrimSpace(r.MatchUser))
	c.adGroup = fold(strings.TrimSpace(r.MatchAdGroup))
	c.tool = fold(strings.TrimSpace(r.MatchToolName))
	c.cmd = fold(r.MatchCommandLine)
	if r.MatchRiskTier != nil {
		c.tier = *r.MatchRiskTier
	}
	if c.set&bitSignerGroup != 0 {
		id := strings.TrimSpace(*r.MatchSignerGroupID)
		g, ok := cc.signerSet(groups, id)
		if !ok {
			return nil, fmt.Errorf("rule %s, signer group %s: %w", r.ID, id, ErrSignerGroupMissing)
		}
		c.signers = g.set
		c.authors = append(c.authors, g.authors[:]...)
	}
	var err error
	if c.set&bitPathGlob != 0 {
		if c.path, err = compileGlob(strings.TrimSpace(r.MatchPathGlob)); err != nil {
			return nil, fmt.Errorf("rule %s, matchPathGlob: %w", r.ID, err)
		}
	}
	if c.set&bitParentImage != 0 {
		if c.parent, err = compileGlob(strings.TrimSpace(r.MatchParentImage)); err != nil {
			return nil, fmt.Errorf("rule %s, matchParentImage: %w", r.ID, err)
		}
	}
	if cc.zones == nil {
		cc.zones = zones{}
	}
	c.win = compileWindow(r.TimeWindow, cc.zones)
	return c, nil
}

// Rule returns the rule c was compiled from.
func (c *CompiledRule) Rule() Rule { return c.rule }

// Match reports whether the rule matches obs at now (the package doc gives
// the semantics). Enabled, verdict and site are not considered: the chain
// filters on them.
func (c *CompiledRule) Match(obs Observation, now time.Time) bool {
	p := prepare(&obs)
	return c.match(&p, &clock{now: now})
}

// Match compiles r and matches it against obs at now.
func Match(r Rule, groups []SignerGroup, obs Observation, now time.Time) (bool, error) {
	c, err := CompileRule(r, groups)
	if err != nil {
		return false, err
	}
	return c.Match(obs, now), nil
}

// prepared is an observation folded once for every rule of a chain.
type prepared struct {
	signer, hash, user, tool, cmd, path, parent string
	adGroups                                    []string
	tier                                        int
	hasTier                                     bool
}

func prepare(o *Observation) prepared {
	p := prepared{
		signer: fold(strings.TrimSpace(o.TargetExecutableSigner)),
		hash:   fold(strings.TrimSpace(o.TargetExecutableHash)),
		user:   fold(strings.TrimSpace(o.SubjectUsername)),
		tool:   fold(strings.TrimSpace(o.ToolName)),
		cmd:    fold(o.CommandLine),
		path:   normPath(strings.TrimSpace(o.TargetExecutablePath)),
		parent: normPath(strings.TrimSpace(o.ParentImage)),
	}
	for _, g := range o.AdGroups {
		if g = strings.TrimSpace(g); g != "" {
			p.adGroups = append(p.adGroups, fold(g))
		}
	}
	if o.RiskTier != nil {
		p.tier, p.hasTier = *o.RiskTier, true
	}
	return p
}

// match is Match on a prepared observation. Criteria run cheapest first.
func (c *CompiledRule) match(p *prepared, clk *clock) bool {
	if c.set == 0 {
		return false
	}
	s := c.set
	if s&bitHash != 0 && !c.test(bitHash, p.hash != "", p.hash == c.hash) {
		return false
	}
	if s&bitSigner != 0 && !c.test(bitSigner, p.signer != "", p.signer == c.signer) {
		return false
	}
	if s&bitUser != 0 && !c.test(bitUser, p.user != "", p.user == c.user) {
		return false
	}
	if s&bitToolName != 0 && !c.test(bitToolName, p.tool != "", p.tool == c.tool) {
		return false
	}
	if s&bitRiskTier != 0 && !c.test(bitRiskTier, p.hasTier, p.tier == c.tier) {
		return false
	}
	if s&bitAdGroup != 0 && !c.test(bitAdGroup, len(p.adGroups) > 0, contains(p.adGroups, c.adGroup)) {
		return false
	}
	if s&bitSignerGroup != 0 {
		_, in := c.signers[p.signer]
		if !c.test(bitSignerGroup, p.signer != "", in) {
			return false
		}
	}
	if s&bitPathGlob != 0 && !c.test(bitPathGlob, p.path != "", p.path != "" && c.path.match(p.path)) {
		return false
	}
	if s&bitParentImage != 0 && !c.test(bitParentImage, p.parent != "", p.parent != "" && c.parent.match(p.parent)) {
		return false
	}
	if s&bitCommandLine != 0 && !c.test(bitCommandLine, p.cmd != "", strings.Contains(p.cmd, c.cmd)) {
		return false
	}
	return c.win.active(clk)
}

// test applies negation: a lacking value never matches; a negated criterion
// matches when the value is there and does not match.
func (c *CompiledRule) test(bit uint16, present, hit bool) bool {
	if !present {
		return false
	}
	return hit != (c.neg&bit != 0)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
