package pam

import (
	"sync"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/shared/store"
)

// This file adapts the stored records to the pure engine (shared/pam/policy):
// validation, the decision chain, the preview and the subject matcher
// are the engine's; nothing here matches.

// IsSubject reports whether the platform user with e-mail email is the
// request's subject: policy.SubjectIsUser, the matcher separation of duties
// uses too (platform users have no separate username).
func IsSubject(subject, email string) bool { return policy.SubjectIsUser(subject, email) }

// validateRule checks the merged rule r with policy.Validate (bounds and the
// spec's validation rules 1-5).
func validateRule(f fault.Fields, r *Rule) {
	f.Merge("", policy.Validate(toPolicyRule(r)))
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func parseTime(s string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func toPolicyRule(r *Rule) policy.Rule {
	out := policy.Rule{ID: r.ID, OrgID: r.OrgID, SiteID: r.SiteID, Name: r.Name, Verdict: policy.Verdict(r.Verdict),
		Priority: r.Priority, Enabled: r.Enabled, MatchSigner: deref(r.MatchSigner), MatchSignerGroupID: r.MatchSignerGroupID,
		MatchHash: deref(r.MatchHash), MatchPathGlob: deref(r.MatchPathGlob), MatchParentImage: deref(r.MatchParentImage),
		MatchCommandLine: deref(r.MatchCommandLine), MatchUser: deref(r.MatchUser), MatchAdGroup: deref(r.MatchAdGroup),
		MatchToolName: deref(r.MatchToolName), MatchRiskTier: r.MatchRiskTier, ApprovalDurationMinutes: r.ApprovalDurationMinutes,
		CreatedAt: parseTime(r.CreatedAt), UpdatedAt: parseTime(r.UpdatedAt),
		CreatedBy: policy.Actor{UserID: r.CreatedBy, Email: r.CreatedByEmail}, UpdatedBy: policy.Actor{UserID: r.UpdatedBy, Email: r.UpdatedByEmail}}
	for _, n := range r.MatchNegate {
		out.MatchNegate = append(out.MatchNegate, policy.Criterion(n))
	}
	if r.TimeWindow != nil {
		out.TimeWindow = &policy.TimeWindow{Start: r.TimeWindow.Start, End: r.TimeWindow.End, Days: r.TimeWindow.Days, Timezone: r.TimeWindow.Timezone}
	}
	return out
}

func toPolicyGroups(gs []SignerGroup) []policy.SignerGroup {
	out := make([]policy.SignerGroup, 0, len(gs))
	for _, g := range gs {
		out = append(out, policy.SignerGroup{ID: g.ID, OrgID: g.OrgID, Name: g.Name, Description: g.Description, Signers: g.Signers,
			CreatedAt: parseTime(g.CreatedAt), UpdatedAt: parseTime(g.UpdatedAt),
			CreatedBy: policy.Actor{UserID: g.CreatedBy, Email: g.CreatedByEmail}, UpdatedBy: policy.Actor{UserID: g.UpdatedBy, Email: g.UpdatedByEmail}})
	}
	return out
}

func toPolicySoftware(p *SoftwarePolicy) policy.SoftwarePolicy {
	out := policy.SoftwarePolicy{ID: p.ID, OrgID: p.OrgID, Name: p.Name, Mode: policy.PolicyMode(p.Mode), Priority: p.Priority,
		Enabled: p.Enabled, CreatedAt: parseTime(p.CreatedAt), UpdatedAt: parseTime(p.UpdatedAt),
		CreatedBy: policy.Actor{UserID: p.CreatedBy, Email: p.CreatedByEmail}, UpdatedBy: policy.Actor{UserID: p.UpdatedBy, Email: p.UpdatedByEmail}}
	for _, e := range p.Executables {
		out.Executables = append(out.Executables, policy.Executable{Hash: deref(e.Hash), Signer: deref(e.Signer), PathGlob: deref(e.PathGlob)})
	}
	return out
}

// Observation is what the decision chain judges.
type Observation = policy.Observation

// StatusIgnored is the ingest answer of an ignore verdict (no row).
const StatusIgnored = policy.StatusIgnored

// decision is the chain's outcome as the store records it.
type decision struct {
	Status, Source, RuleID, RuleName, PolicyName string
	Minutes                                      int
	Skipped                                      []policy.Skipped
	Err                                          string
}

// chainInput is the engine's view of an organization's PAM rows.
func chainInput(pol *Policies) policy.ChainInput {
	in := policy.ChainInput{SignerGroups: toPolicyGroups(pol.SignerGroups)}
	for i := range pol.Rules {
		in.Rules = append(in.Rules, toPolicyRule(&pol.Rules[i]))
	}
	for i := range pol.SoftwarePolicies {
		in.Policies = append(in.Policies, toPolicySoftware(&pol.SoftwarePolicies[i]))
	}
	if pol.Config != nil {
		in.DefaultVerdict = policy.Verdict(pol.Config.DefaultUnmatchedVerdict)
	}
	return in
}

// chainCache holds the compiled decision chain of each organization under
// the policies version it was compiled from (Store.PoliciesChanged): the
// ingest still reads the PAM# rows in its one Query, and compiles them only
// when their version is not the one cached. A change of any rule, signer
// group, software policy or the config moves the version in the change's own
// transaction, so the next Query sees the new version and the chain is
// compiled again: a decision never uses a chain older than the rows its
// Query read. The version row is read first (it sorts first), so a chain
// cached under version N was compiled from rows at least as new as N. An
// organization whose version row does not exist yet (no change since the
// version was introduced) is never cached. The cache is per process (one
// Lambda execution environment), bounded to maxChains organizations (a chain
// of 200 rules holds about 300 KB); a full cache drops an arbitrary entry.
type chainCache struct {
	mu sync.Mutex
	m  map[string]cachedChain
}

type cachedChain struct {
	version int64
	chain   *policy.Chain
}

const maxChains = 256

var chains = &chainCache{m: map[string]cachedChain{}}

func (c *chainCache) get(key string, version int64) *policy.Chain {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.version == version {
		return e.chain
	}
	return nil
}

func (c *chainCache) put(key string, version int64, ch *policy.Chain) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok && e.version > version {
		return // a newer version is cached already
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= maxChains {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = cachedChain{version: version, chain: ch}
}

// chain is orgID's compiled decision chain, from its PAM# rows items as read
// now at version v (Store.policyRows), compiled again only when v is not the
// cached version.
func (s *Service) chain(orgID string, items []store.Item, v int64) (*policy.Chain, error) {
	key := s.St.St.Table + "|" + orgID
	if v > 0 {
		if c := chains.get(key, v); c != nil {
			return c, nil
		}
	}
	pol, err := decodePolicies(items, v)
	if err != nil {
		return nil, err
	}
	c := policy.Compile(chainInput(pol))
	if v > 0 {
		chains.put(key, v, c)
	}
	return c, nil
}

// decide runs the compiled decision chain c for obs at now. The chain keeps
// the organization-wide rules and those of the device's site.
func decide(c *policy.Chain, obs Observation, now time.Time) decision {
	d := c.Decide(obs, now)
	out := decision{Status: d.Status(), RuleID: d.RuleID, RuleName: d.RuleName, PolicyName: d.PolicyName,
		Minutes: d.ApprovalDurationMinutes, Skipped: d.Skipped}
	switch d.Source {
	case policy.SourcePolicy:
		out.Source = SourceSoftwarePolicy
	case policy.SourceRule:
		out.Source = SourceRule
	case policy.SourceDefault:
		out.Source = SourceDefault
	case policy.SourceError:
		// An evaluator error records the request pending (spec 3).
		out.Status, out.Source = StatusPending, ""
		if d.Err != nil {
			out.Err = d.Err.Error()
		}
	}
	return out
}
