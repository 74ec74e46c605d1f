package policy

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

var (
	alice = Actor{UserID: "u-alice", Email: "alice@corp.example"}
	bob   = Actor{UserID: "u-bob", Email: "bob@corp.example"}
)

// rule is an enabled rule of orgA matching the UAC observation's signer.
func rule(id string, prio int, v Verdict) Rule {
	return Rule{ID: id, OrgID: orgA, Name: "rule " + id, Verdict: v, Priority: prio, Enabled: true,
		MatchSigner: "Vendor Inc.", CreatedAt: t0, CreatedBy: bob, UpdatedBy: bob}
}

func pol(id string, mode PolicyMode, prio int, e ...Executable) SoftwarePolicy {
	return SoftwarePolicy{ID: id, OrgID: orgA, Name: "policy " + id, Mode: mode, Priority: prio, Enabled: true,
		Executables: e, CreatedAt: t0, CreatedBy: bob, UpdatedBy: bob}
}

type want struct {
	verdict Verdict
	source  Source
	id      string // rule or policy id
	minutes int
	skipped []string
}

func TestDecide(t *testing.T) {
	noon := thu(12, 0, 0)
	later := func(r Rule, d time.Duration) Rule { r.CreatedAt = r.CreatedAt.Add(d); return r }
	with := func(r Rule, f func(*Rule)) Rule { f(&r); return r }
	withP := func(p SoftwarePolicy, f func(*SoftwarePolicy)) SoftwarePolicy { f(&p); return p }
	sigE := Executable{Signer: "vendor inc."}
	hashE := Executable{Hash: hashA}
	pathE := Executable{PathGlob: `C:\Program Files\Vendor\**`}
	obsAs := func(subject string) Observation { o := uacObs(); o.SubjectUsername = subject; return o }
	// groupRule matches the UAC observation's signer through the group grpID.
	groupRule := func(id string, prio int, v Verdict) Rule {
		r := rule(id, prio, v)
		r.MatchSigner, r.MatchSignerGroupID = "", &[]string{grpID}[0]
		return r
	}
	withG := func(f func(*SignerGroup)) SignerGroup {
		g := SignerGroup{ID: grpID, OrgID: orgA, Name: "vendors", Signers: []string{"Vendor Inc."}, CreatedBy: bob, UpdatedBy: bob}
		f(&g)
		return g
	}

	cases := []struct {
		name string
		in   ChainInput
		obs  Observation
		want want
	}{
		{"nothing configured: default require_approval", ChainInput{}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"default auto_deny", ChainInput{DefaultVerdict: VerdictAutoDeny}, uacObs(),
			want{VerdictAutoDeny, SourceDefault, "", 15, nil}},
		{"unknown default verdict is an evaluator error", ChainInput{DefaultVerdict: "maybe"}, uacObs(),
			want{VerdictRequireApproval, SourceError, "", 15, nil}},
		{"matching rule decides", ChainInput{Rules: []Rule{rule("r1", 100, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},
		{"ignore verdict", ChainInput{Rules: []Rule{rule("r1", 100, VerdictIgnore)}}, uacObs(),
			want{VerdictIgnore, SourceRule, "r1", 15, nil}},
		{"approval duration from the rule", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.ApprovalDurationMinutes = ptr(90) })}}, uacObs(),
			want{VerdictAutoApprove, SourceRule, "r1", 90, nil}},
		{"approval duration of a require_approval rule", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictRequireApproval), func(r *Rule) { r.ApprovalDurationMinutes = ptr(60) })}}, uacObs(),
			want{VerdictRequireApproval, SourceRule, "r1", 60, nil}},
		{"non-matching rule falls to the default", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.MatchSigner = "Other" })}, DefaultVerdict: VerdictAutoDeny}, uacObs(),
			want{VerdictAutoDeny, SourceDefault, "", 15, nil}},
		{"disabled rule skipped", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.Enabled = false }), rule("r2", 2, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r2", 15, nil}},
		{"lower priority first", ChainInput{Rules: []Rule{rule("r1", 200, VerdictAutoApprove), rule("r2", 10, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r2", 15, nil}},
		{"priority 0 runs first", ChainInput{Rules: []Rule{rule("r1", 1, VerdictAutoApprove), rule("r2", 0, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r2", 15, nil}},
		{"tie on priority: earlier createdAt", ChainInput{Rules: []Rule{later(rule("a", 5, VerdictAutoApprove), time.Second), rule("b", 5, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "b", 15, nil}},
		{"tie on priority and createdAt: smaller id", ChainInput{Rules: []Rule{rule("b", 5, VerdictAutoApprove), rule("a", 5, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "a", 15, nil}},
		{"tie: createdAt beats id", ChainInput{Rules: []Rule{later(rule("a", 5, VerdictAutoApprove), time.Millisecond), rule("b", 5, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "b", 15, nil}},
		{"site rule of the device's site applies", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoDeny), func(r *Rule) { r.SiteID = ptr(siteA) })}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},
		{"site rule of another site does not", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoDeny), func(r *Rule) { r.SiteID = ptr(siteB) }), rule("r2", 2, VerdictAutoApprove)}}, uacObs(),
			want{VerdictAutoApprove, SourceRule, "r2", 15, nil}},
		{"site rule on a device with no site does not", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoDeny), func(r *Rule) { r.SiteID = ptr(siteA) })}}, func() Observation { o := uacObs(); o.SiteID = ""; return o }(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"rule of another organization ignored", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.OrgID = "other" })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"missing signer group: evaluator error, pending", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.MatchSigner, r.MatchSignerGroupID = "", ptr(grpID) })}}, uacObs(),
			want{VerdictRequireApproval, SourceError, "", 15, nil}},
		{"a broken rule after the deciding one is not reached", ChainInput{Rules: []Rule{rule("r1", 1, VerdictAutoDeny), with(rule("r2", 2, VerdictAutoApprove), func(r *Rule) { r.MatchSigner, r.MatchSignerGroupID = "", ptr(grpID) })}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},
		{"unknown verdict: evaluator error", ChainInput{Rules: []Rule{rule("r1", 1, "allow")}}, uacObs(),
			want{VerdictRequireApproval, SourceError, "", 15, nil}},
		{"signer group resolved", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoDeny), func(r *Rule) { r.MatchSigner, r.MatchSignerGroupID = "", ptr(grpID) })}, SignerGroups: testGroups}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},

		// Software-policy bridge.
		{"blocklist denies before any rule", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeBlocklist, 0, sigE)}, Rules: []Rule{rule("r1", 0, VerdictAutoApprove)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "p1", 15, nil}},
		{"allowlist auto-approves for 15 minutes", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeAllowlist, 0, pathE)}, Rules: []Rule{rule("r1", 0, VerdictAutoDeny)}}, uacObs(),
			want{VerdictAutoApprove, SourcePolicy, "p1", 15, nil}},
		{"hash allowlist beats signer blocklist", ChainInput{Policies: []SoftwarePolicy{pol("block", ModeBlocklist, 100, sigE), pol("allow", ModeAllowlist, 0, hashE)}}, uacObs(),
			want{VerdictAutoApprove, SourcePolicy, "allow", 15, nil}},
		{"signer blocklist beats path allowlist", ChainInput{Policies: []SoftwarePolicy{pol("allow", ModeAllowlist, 100, pathE), pol("block", ModeBlocklist, 0, sigE)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "block", 15, nil}},
		{"signer allowlist beats path blocklist", ChainInput{Policies: []SoftwarePolicy{pol("block", ModeBlocklist, 100, pathE), pol("allow", ModeAllowlist, 0, sigE)}}, uacObs(),
			want{VerdictAutoApprove, SourcePolicy, "allow", 15, nil}},
		{"blocklist beats allowlist at equal strength, whatever the priority", ChainInput{Policies: []SoftwarePolicy{pol("allow", ModeAllowlist, 1000, sigE), pol("block", ModeBlocklist, 0, sigE)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "block", 15, nil}},
		{"same mode and strength: higher priority names the policy", ChainInput{Policies: []SoftwarePolicy{pol("low", ModeBlocklist, 1, sigE), pol("high", ModeBlocklist, 9, sigE)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "high", 15, nil}},
		{"same priority: smaller id", ChainInput{Policies: []SoftwarePolicy{pol("p2", ModeAllowlist, 1, sigE), pol("p1", ModeAllowlist, 1, sigE)}}, uacObs(),
			want{VerdictAutoApprove, SourcePolicy, "p1", 15, nil}},
		{"entry with hash and signer needs both", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeAllowlist, 1, Executable{Hash: hashB, Signer: "Vendor Inc."})}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"entry with hash and signer has hash strength", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeAllowlist, 1, Executable{Hash: hashA, Signer: "Vendor Inc."}), pol("p2", ModeBlocklist, 1, sigE)}}, uacObs(),
			want{VerdictAutoApprove, SourcePolicy, "p1", 15, nil}},
		{"same priority: earlier createdAt beats smaller id", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeBlocklist, 1, sigE), func(p *SoftwarePolicy) { p.CreatedAt = t0.Add(time.Hour) }), pol("p2", ModeBlocklist, 1, sigE)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "p2", 15, nil}},
		{"signer entry with a path glob needs both", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeBlocklist, 1, Executable{Signer: "Vendor Inc.", PathGlob: `C:\Windows\**`})}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"signer entry with a matching path glob", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeBlocklist, 1, Executable{Signer: "Vendor Inc.", PathGlob: `C:\Program Files\**`})}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "p1", 15, nil}},
		{"empty entry never matches", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeBlocklist, 1, Executable{})}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"disabled policy skipped", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeBlocklist, 1, sigE), func(p *SoftwarePolicy) { p.Enabled = false })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"policy of another organization ignored", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeBlocklist, 1, sigE), func(p *SoftwarePolicy) { p.OrgID = "other" })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},
		{"policy entry on an unsigned request does not match", ChainInput{Policies: []SoftwarePolicy{pol("p1", ModeBlocklist, 1, sigE)}}, Observation{OrgID: orgA, SubjectUsername: "x", TargetExecutablePath: `C:\a.exe`},
			want{VerdictRequireApproval, SourceDefault, "", 15, nil}},

		// Separation of duties.
		{"auto_approve rule created by the subject is skipped", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.CreatedBy = alice })}, DefaultVerdict: VerdictAutoDeny}, uacObs(),
			want{VerdictAutoDeny, SourceDefault, "", 15, []string{"r1"}}},
		{"auto_approve rule last edited by the subject is skipped, next rule decides", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.UpdatedBy = alice }), rule("r2", 2, VerdictRequireApproval)}}, uacObs(),
			want{VerdictRequireApproval, SourceRule, "r2", 15, []string{"r1"}}},
		{"subject by e-mail", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.CreatedBy = alice })}}, obsAs("ALICE@corp.example"),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"r1"}}},
		{"subject without domain", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.CreatedBy = alice })}}, obsAs("alice"),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"r1"}}},
		{"another subject is approved", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.CreatedBy = alice })}}, obsAs(`CORP\carol`),
			want{VerdictAutoApprove, SourceRule, "r1", 15, nil}},
		{"a deny rule by the subject still decides", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoDeny), func(r *Rule) { r.CreatedBy = alice })}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},
		{"an ignore rule by the subject still decides", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictIgnore), func(r *Rule) { r.UpdatedBy = alice })}}, uacObs(),
			want{VerdictIgnore, SourceRule, "r1", 15, nil}},
		{"the subject's allowlist is skipped, rules decide", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeAllowlist, 1, hashE), func(p *SoftwarePolicy) { p.CreatedBy = alice })}, Rules: []Rule{rule("r1", 1, VerdictRequireApproval)}}, uacObs(),
			want{VerdictRequireApproval, SourceRule, "r1", 15, []string{"p1"}}},
		{"the subject's allowlist is skipped, a weaker blocklist decides", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeAllowlist, 1, hashE), func(p *SoftwarePolicy) { p.UpdatedBy = alice }), pol("p2", ModeBlocklist, 1, pathE)}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "p2", 15, []string{"p1"}}},
		{"the subject's allowlist matched by several entries is skipped once", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeAllowlist, 1, hashE, sigE, pathE), func(p *SoftwarePolicy) { p.CreatedBy = alice })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"p1"}}},
		{"the subject's blocklist still denies", ChainInput{Policies: []SoftwarePolicy{withP(pol("p1", ModeBlocklist, 1, hashE), func(p *SoftwarePolicy) { p.CreatedBy = alice })}}, uacObs(),
			want{VerdictAutoDeny, SourcePolicy, "p1", 15, nil}},
		{"skipped allowlist and skipped rule both recorded", ChainInput{
			Policies: []SoftwarePolicy{withP(pol("p1", ModeAllowlist, 1, hashE), func(p *SoftwarePolicy) { p.CreatedBy = alice })},
			Rules:    []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.UpdatedBy = alice })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"p1", "r1"}}},
		// The signer group a rule references is part of what it rests on.
		{"auto_approve rule whose signer group the subject created is skipped", ChainInput{Rules: []Rule{groupRule("r1", 1, VerdictAutoApprove), rule("r2", 2, VerdictRequireApproval)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.CreatedBy = alice })}}, uacObs(),
			want{VerdictRequireApproval, SourceRule, "r2", 15, []string{"r1"}}},
		{"auto_approve rule whose signer group the subject last edited is skipped", ChainInput{Rules: []Rule{groupRule("r1", 1, VerdictAutoApprove)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.UpdatedBy = alice })}, DefaultVerdict: VerdictAutoDeny}, uacObs(),
			want{VerdictAutoDeny, SourceDefault, "", 15, []string{"r1"}}},
		{"the group's editor under another subject form", ChainInput{Rules: []Rule{groupRule("r1", 1, VerdictAutoApprove)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.UpdatedBy = alice })}}, obsAs("alice@corp.local"),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"r1"}}},
		{"a negated signer group rests on the group too", ChainInput{Rules: []Rule{with(groupRule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.MatchNegate = []Criterion{CriterionSignerGroup} })},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.Signers = []string{"Nobody"}; g.UpdatedBy = alice })}}, uacObs(),
			want{VerdictRequireApproval, SourceDefault, "", 15, []string{"r1"}}},
		{"a group edited by someone else approves", ChainInput{Rules: []Rule{groupRule("r1", 1, VerdictAutoApprove)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.UpdatedBy = bob })}}, uacObs(),
			want{VerdictAutoApprove, SourceRule, "r1", 15, nil}},
		{"an auto_deny rule on the subject's group still denies", ChainInput{Rules: []Rule{groupRule("r1", 1, VerdictAutoDeny), rule("r2", 2, VerdictAutoApprove)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.CreatedBy, g.UpdatedBy = alice, alice })}}, uacObs(),
			want{VerdictAutoDeny, SourceRule, "r1", 15, nil}},
		{"a group the rule does not reference is not its concern", ChainInput{Rules: []Rule{rule("r1", 1, VerdictAutoApprove)},
			SignerGroups: []SignerGroup{withG(func(g *SignerGroup) { g.CreatedBy, g.UpdatedBy = alice, alice })}}, uacObs(),
			want{VerdictAutoApprove, SourceRule, "r1", 15, nil}},
		{"an actor without e-mail is nobody", ChainInput{Rules: []Rule{with(rule("r1", 1, VerdictAutoApprove), func(r *Rule) { r.CreatedBy, r.UpdatedBy = Actor{}, Actor{} })}}, obsAs(""),
			want{VerdictAutoApprove, SourceRule, "r1", 15, nil}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Decide(c.in, c.obs, noon)
			id := d.RuleID
			if d.Source == SourcePolicy {
				id = d.PolicyID
			}
			var skipped []string
			for _, s := range d.Skipped {
				skipped = append(skipped, s.ID)
			}
			got := want{d.Verdict, d.Source, id, d.ApprovalDurationMinutes, skipped}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Decide = %+v, want %+v (err %v)", got, c.want, d.Err)
			}
			if (d.Source == SourceError) != (d.Err != nil) || (d.Err != nil && !errors.Is(d.Err, ErrEvaluator)) {
				t.Errorf("source %s with err %v", d.Source, d.Err)
			}
		})
	}
}

// A rule edited between two decisions: the chain compiled after the edit
// applies the new owner's separation of duties.
func TestDecideRuleEditedBetweenDecisions(t *testing.T) {
	r := rule("r1", 1, VerdictAutoApprove)
	if d := Decide(ChainInput{Rules: []Rule{r}}, uacObs(), thu(12, 0, 0)); d.Verdict != VerdictAutoApprove {
		t.Fatalf("before the edit: %+v", d)
	}
	r.UpdatedBy = alice // alice edits the rule that approves her own requests
	if d := Decide(ChainInput{Rules: []Rule{r}}, uacObs(), thu(12, 0, 0)); d.Verdict != VerdictRequireApproval || len(d.Skipped) != 1 {
		t.Fatalf("after the edit: %+v", d)
	}
}

func TestDecisionStatus(t *testing.T) {
	for v, s := range map[Verdict]string{
		VerdictAutoApprove: StatusAutoApproved, VerdictAutoDeny: StatusDenied,
		VerdictRequireApproval: StatusPending, VerdictIgnore: StatusIgnored, "": StatusPending,
	} {
		if got := (Decision{Verdict: v}).Status(); got != s {
			t.Errorf("%q.Status() = %q, want %q", v, got, s)
		}
	}
}

// A compiled chain is reusable and does not depend on its input slices.
func TestChainCompiledOnce(t *testing.T) {
	in := ChainInput{Rules: []Rule{rule("r1", 1, VerdictAutoDeny)}}
	c := Compile(in)
	in.Rules[0].Verdict = VerdictAutoApprove
	in.Rules[0].MatchSigner = "nobody"
	for i := 0; i < 3; i++ {
		if d := c.Decide(uacObs(), thu(12, 0, 0)); d.Verdict != VerdictAutoDeny || d.RuleID != "r1" {
			t.Fatalf("decision %d: %+v", i, d)
		}
	}
}

// A panic inside the evaluator is an evaluator error: pending.
func TestDecidePanicIsAnEvaluatorError(t *testing.T) {
	c := &Chain{def: VerdictAutoDeny, rules: []chainRule{{c: nil}}}
	d := c.Decide(uacObs(), thu(12, 0, 0))
	if d.Verdict != VerdictRequireApproval || d.Source != SourceError || !errors.Is(d.Err, ErrEvaluator) || d.Status() != StatusPending {
		t.Fatalf("Decide = %+v", d)
	}
}

// One compiled chain serves concurrent requests (run with -race).
func TestChainConcurrentUse(t *testing.T) {
	in := benchChain()
	in.Rules = append(in.Rules, Rule{ID: "last", OrgID: orgA, Enabled: true, Verdict: VerdictAutoDeny, Priority: MaxPriority,
		MatchUser: `corp\alice`, TimeWindow: win("00:00", "23:59", nil, "Asia/Tokyo")})
	c := Compile(in)
	done := make(chan Decision)
	for i := 0; i < 8; i++ {
		go func() {
			var d Decision
			for j := 0; j < 50; j++ {
				d = c.Decide(uacObs(), thu(12, j, 0))
			}
			done <- d
		}()
	}
	for i := 0; i < 8; i++ {
		if d := <-done; d.RuleID != "last" || d.Verdict != VerdictAutoDeny {
			t.Errorf("decision %+v", d)
		}
	}
}

func TestCompiledRuleKeepsItsRule(t *testing.T) {
	r := Rule{ID: "r1", MatchSigner: "x"}
	c, err := CompileRule(r, nil)
	if err != nil || c.Rule().ID != "r1" {
		t.Fatalf("CompileRule = %v, %v", c, err)
	}
	if Criterion("publisher").Field() != "" {
		t.Error("unknown criterion has a field")
	}
}
