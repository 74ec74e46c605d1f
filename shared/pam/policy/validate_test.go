package policy

import (
	"reflect"
	"sort"
	"strings"
	"testing"
)

func keys(f map[string][]string) []string {
	k := make([]string, 0, len(f))
	for p := range f {
		k = append(k, p)
	}
	sort.Strings(k)
	return k
}

func TestValidate(t *testing.T) {
	ok := func() Rule {
		return Rule{Name: "Vendor installers", Verdict: VerdictAutoApprove, Priority: DefaultPriority, Enabled: true, MatchSigner: "Vendor Inc."}
	}
	with := func(f func(*Rule)) Rule { r := ok(); f(&r); return r }
	cases := []struct {
		name string
		rule Rule
		want []string // failing paths
	}{
		{"valid", ok(), nil},
		{"valid tool-action rule", Rule{Name: "t", Verdict: VerdictAutoDeny, MatchToolName: "shell.exec", MatchRiskTier: ptr(4), MatchUser: "alice"}, nil},
		{"valid everything executable", with(func(r *Rule) {
			r.MatchSigner, r.MatchHash, r.MatchPathGlob, r.MatchParentImage, r.MatchCommandLine = "", hashA, `C:\**`, `C:\*.exe`, "/s"
			r.MatchSignerGroupID, r.MatchUser, r.MatchAdGroup = ptr(grpID), "alice", "Eng"
			r.MatchNegate = []Criterion{CriterionHash, CriterionAdGroup}
			r.TimeWindow = win("22:00", "06:00", []int{0, 6}, "Europe/Berlin")
			r.SiteID, r.ApprovalDurationMinutes, r.Priority = ptr(siteA), ptr(1440), 0
		}), nil},
		{"priority 100000", with(func(r *Rule) { r.Priority = MaxPriority }), nil},
		// Bounds.
		{"name required", with(func(r *Rule) { r.Name = "  " }), []string{"name"}},
		{"name too long", with(func(r *Rule) { r.Name = strings.Repeat("n", 256) }), []string{"name"}},
		{"unknown verdict", with(func(r *Rule) { r.Verdict = "allow" }), []string{"verdict"}},
		{"priority negative", with(func(r *Rule) { r.Priority = -1 }), []string{"priority"}},
		{"priority too high", with(func(r *Rule) { r.Priority = 100001 }), []string{"priority"}},
		{"siteId not a UUID", with(func(r *Rule) { r.SiteID = ptr("site-1") }), []string{"siteId"}},
		{"approvalDurationMinutes 0", with(func(r *Rule) { r.ApprovalDurationMinutes = ptr(0) }), []string{"approvalDurationMinutes"}},
		{"approvalDurationMinutes 1441", with(func(r *Rule) { r.ApprovalDurationMinutes = ptr(1441) }), []string{"approvalDurationMinutes"}},
		{"hash not hex", with(func(r *Rule) { r.MatchHash = strings.Repeat("z", 64) }), []string{"matchHash"}},
		{"hash short", with(func(r *Rule) { r.MatchHash = "abc" }), []string{"matchHash"}},
		{"signer group id not a UUID", with(func(r *Rule) { r.MatchSigner, r.MatchSignerGroupID = "", ptr("g1") }), []string{"matchSignerGroupId"}},
		{"risk tier 5", Rule{Name: "t", Verdict: VerdictAutoDeny, MatchRiskTier: ptr(5)}, []string{"matchRiskTier"}},
		{"risk tier -1", Rule{Name: "t", Verdict: VerdictAutoDeny, MatchRiskTier: ptr(-1)}, []string{"matchRiskTier"}},
		{"criterion too long", with(func(r *Rule) { r.MatchPathGlob = strings.Repeat("a", MaxCriterionLen+1) }), []string{"matchPathGlob"}},
		{"criterion with NUL", with(func(r *Rule) { r.MatchCommandLine = "a\x00b" }), []string{"matchCommandLine"}},
		{"criterion not UTF-8", with(func(r *Rule) { r.MatchUser = "\xff" }), []string{"matchUser"}},
		{"window start malformed", with(func(r *Rule) { r.TimeWindow = win("9:00", "17:00", nil, "") }), []string{"timeWindow.start"}},
		{"window end malformed", with(func(r *Rule) { r.TimeWindow = win("09:00", "24:00", nil, "") }), []string{"timeWindow.end"}},
		{"window day out of range", with(func(r *Rule) { r.TimeWindow = win("09:00", "17:00", []int{1, 7}, "") }), []string{"timeWindow.days.1"}},
		{"window unknown zone", with(func(r *Rule) { r.TimeWindow = win("09:00", "17:00", nil, "Nowhere/City") }), []string{"timeWindow.timezone"}},
		// Rule 1.
		{"rule 1: no criterion", Rule{Name: "x", Verdict: VerdictAutoDeny}, []string{PathCriteria}},
		{"rule 1: a time window alone", Rule{Name: "x", Verdict: VerdictAutoDeny, TimeWindow: win("09:00", "17:00", nil, "")}, []string{PathCriteria}},
		{"rule 1: blank strings are not criteria", Rule{Name: "x", Verdict: VerdictAutoDeny, MatchSigner: "  "}, []string{PathCriteria}},
		// Rule 2.
		{"rule 2: signer with tool", with(func(r *Rule) { r.MatchToolName = "shell" }), []string{"matchToolName"}},
		{"rule 2: path with tier", with(func(r *Rule) { r.MatchSigner, r.MatchPathGlob, r.MatchRiskTier = "", `C:\*`, ptr(1) }), []string{"matchRiskTier"}},
		{"rule 2: command line with tool and tier", with(func(r *Rule) { r.MatchCommandLine, r.MatchToolName, r.MatchRiskTier = "x", "t", ptr(0) }), []string{"matchRiskTier", "matchToolName"}},
		{"rule 2: user and group mix with either", Rule{Name: "x", Verdict: VerdictAutoDeny, MatchUser: "u", MatchAdGroup: "g", MatchToolName: "t"}, nil},
		// Rule 3.
		{"rule 3: signer and signer group", with(func(r *Rule) { r.MatchSignerGroupID = ptr(grpID) }), []string{"matchSignerGroupId"}},
		// Rule 4.
		{"rule 4: unknown negate key", with(func(r *Rule) { r.MatchNegate = []Criterion{"publisher"} }), []string{"matchNegate.0"}},
		{"rule 4: negate a criterion not set", with(func(r *Rule) { r.MatchNegate = []Criterion{CriterionSigner, CriterionHash} }), []string{"matchNegate.1"}},
		{"rule 4: negate twice", with(func(r *Rule) { r.MatchNegate = []Criterion{CriterionSigner, CriterionSigner} }), []string{"matchNegate.1"}},
		// Rule 5.
		{"rule 5: ignore for a tool-action rule", Rule{Name: "t", Verdict: VerdictIgnore, MatchToolName: "shell"}, []string{"verdict"}},
		{"rule 5: ignore for a tier rule", Rule{Name: "t", Verdict: VerdictIgnore, MatchRiskTier: ptr(0)}, []string{"verdict"}},
		{"rule 5: ignore for an executable rule is fine", with(func(r *Rule) { r.Verdict = VerdictIgnore }), nil},
		{"several failures at once", Rule{Verdict: "x", Priority: -5, MatchSigner: "a", MatchSignerGroupID: ptr(grpID), MatchToolName: "t"},
			[]string{"matchSignerGroupId", "matchToolName", "name", "priority", "verdict"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Validate(c.rule)
			got := keys(f)
			if len(got) == 0 {
				got = nil
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("Validate paths = %v, want %v (%v)", got, c.want, map[string][]string(f))
			}
			if (f.Err() != nil) != (len(c.want) > 0) {
				t.Errorf("Err() = %v", f.Err())
			}
		})
	}
}

func TestValidateErrIsValidationFailed(t *testing.T) {
	err := Validate(Rule{}).Err()
	if err == nil || err.Error() != "Validation failed" {
		t.Fatalf("Err() = %v", err)
	}
}

func TestValidateCriteriaIgnoresNameAndVerdict(t *testing.T) {
	if f := ValidateCriteria(Rule{MatchSigner: "x"}); len(f) != 0 {
		t.Errorf("draft = %v", f)
	}
	if f := ValidateCriteria(Rule{}); !reflect.DeepEqual(keys(f), []string{PathCriteria}) {
		t.Errorf("empty draft = %v", f)
	}
}

func TestValidatePolicy(t *testing.T) {
	ok := func() SoftwarePolicy {
		return SoftwarePolicy{Name: "p", Mode: ModeAllowlist, Priority: 10, Executables: []Executable{{Hash: hashA}, {Signer: "S", PathGlob: `C:\*`}}}
	}
	with := func(f func(*SoftwarePolicy)) SoftwarePolicy { p := ok(); f(&p); return p }
	cases := []struct {
		name string
		p    SoftwarePolicy
		want []string
	}{
		{"valid", ok(), nil},
		{"name", with(func(p *SoftwarePolicy) { p.Name = "" }), []string{"name"}},
		{"mode", with(func(p *SoftwarePolicy) { p.Mode = "denylist" }), []string{"mode"}},
		{"priority", with(func(p *SoftwarePolicy) { p.Priority = 100001 }), []string{"priority"}},
		{"no executables", with(func(p *SoftwarePolicy) { p.Executables = nil }), []string{"executables"}},
		{"too many executables", with(func(p *SoftwarePolicy) { p.Executables = make([]Executable, 501); p.Executables[0].Hash = hashA }), nil},
		{"empty entry", with(func(p *SoftwarePolicy) { p.Executables = []Executable{{Hash: " "}} }), []string{"executables.0"}},
		{"bad hash", with(func(p *SoftwarePolicy) { p.Executables[0].Hash = "xyz" }), []string{"executables.0.hash"}},
		{"long signer", with(func(p *SoftwarePolicy) { p.Executables[1].Signer = strings.Repeat("s", 256) }), []string{"executables.1.signer"}},
	}
	for _, c := range cases {
		f := ValidatePolicy(c.p)
		got := keys(f)
		if c.name == "too many executables" {
			if len(f["executables"]) == 0 {
				t.Errorf("%s: %v", c.name, got)
			}
			continue
		}
		if len(got) == 0 {
			got = nil
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: paths = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestNormalizeSigners(t *testing.T) {
	out, f := NormalizeSigners([]string{" Microsoft Corporation ", "microsoft corporation", "Vendor", "VENDOR "})
	if len(f) != 0 || !reflect.DeepEqual(out, []string{"Microsoft Corporation", "Vendor"}) {
		t.Fatalf("NormalizeSigners = %q, %v", out, f)
	}
	_, f = NormalizeSigners([]string{"a", " ", strings.Repeat("x", 256)})
	if !reflect.DeepEqual(keys(f), []string{"signers.1", "signers.2"}) {
		t.Fatalf("fields = %v", f)
	}
	many := make([]string, 0, 502)
	for i := 0; i < 501; i++ {
		many = append(many, strings.Repeat("s", i%200+1)+string(rune('a'+i/200)))
	}
	if _, f = NormalizeSigners(many); !reflect.DeepEqual(keys(f), []string{"signers"}) {
		t.Fatalf("501 signers: %v", f)
	}
	// 600 entries that fold to 500 are fine.
	dup := append([]string{}, many[:500]...)
	for _, s := range many[:100] {
		dup = append(dup, strings.ToUpper(s))
	}
	if out, f = NormalizeSigners(dup); len(f) != 0 || len(out) != 500 {
		t.Fatalf("600 folding to 500: %d, %v", len(out), f)
	}
}
