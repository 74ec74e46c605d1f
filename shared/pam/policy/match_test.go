package policy

import (
	"errors"
	"testing"
	"time"
)

func ptr[T any](v T) *T { return &v }

const (
	hashA = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
	hashB = "60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752"
	orgA  = "0b6c3f4e-5a8e-4a52-9d1e-000000000001"
	siteA = "0b6c3f4e-5a8e-4a52-9d1e-0000000000a1"
	siteB = "0b6c3f4e-5a8e-4a52-9d1e-0000000000b1"
	grpID = "0b6c3f4e-5a8e-4a52-9d1e-0000000000c1"
)

// thu is Thursday 2026-11-26 at hh:mm:ss UTC.
func thu(hh, mm, ss int) time.Time { return time.Date(2026, 11, 26, hh, mm, ss, 0, time.UTC) }

// fri is Friday 2026-11-27 at hh:mm UTC.
func fri(hh, mm int) time.Time { return time.Date(2026, 11, 27, hh, mm, 0, 0, time.UTC) }

func uacObs() Observation {
	return Observation{
		OrgID: orgA, SiteID: siteA, FlowType: FlowUACIntercept,
		SubjectUsername:        `CORP\alice`,
		TargetExecutablePath:   `C:\Program Files\Vendor\App\setup.exe`,
		TargetExecutableHash:   hashA,
		TargetExecutableSigner: "Vendor Inc.",
		ParentImage:            `C:\Windows\explorer.exe`,
		CommandLine:            `"C:\Program Files\Vendor\App\setup.exe" /S /Install`,
		AdGroups:               []string{"Engineering", "Domain Users"},
	}
}

func toolObs() Observation {
	return Observation{OrgID: orgA, FlowType: FlowAIToolAction, SubjectUsername: "alice", ToolName: "shell.exec", RiskTier: ptr(3)}
}

var testGroups = []SignerGroup{{ID: grpID, OrgID: orgA, Name: "vendors", Signers: []string{"Other Corp", " Vendor Inc. "}}}

func neg(cs ...Criterion) []Criterion { return cs }

func win(start, end string, days []int, tz string) *TimeWindow {
	return &TimeWindow{Start: start, End: end, Days: days, Timezone: tz}
}

func TestMatch(t *testing.T) {
	uac, tool := uacObs(), toolObs()
	bare := Observation{OrgID: orgA, FlowType: FlowUACIntercept, SubjectUsername: `CORP\alice`}
	noGroups := uacObs()
	noGroups.AdGroups = nil
	tier0 := toolObs()
	tier0.RiskTier = ptr(0)
	noon := thu(12, 0, 0)
	vendor := func(w *TimeWindow) Rule { return Rule{MatchSigner: "Vendor Inc.", TimeWindow: w} }

	cases := []struct {
		name string
		rule Rule
		obs  Observation
		at   time.Time
		want bool
	}{
		// signer
		{"signer equal", Rule{MatchSigner: "Vendor Inc."}, uac, noon, true},
		{"signer case-insensitive", Rule{MatchSigner: "VENDOR INC."}, uac, noon, true},
		{"signer different", Rule{MatchSigner: "Other Corp"}, uac, noon, false},
		{"signer is whole-string, not prefix", Rule{MatchSigner: "Vendor"}, uac, noon, false},
		{"signer trimmed", Rule{MatchSigner: "  Vendor Inc.  "}, uac, noon, true},
		{"signer lacking in observation", Rule{MatchSigner: "Vendor Inc."}, bare, noon, false},
		{"negated signer, different", Rule{MatchSigner: "Other Corp", MatchNegate: neg(CriterionSigner)}, uac, noon, true},
		{"negated signer, equal", Rule{MatchSigner: "vendor inc.", MatchNegate: neg(CriterionSigner)}, uac, noon, false},
		{"negated signer, lacking", Rule{MatchSigner: "Other Corp", MatchNegate: neg(CriterionSigner)}, bare, noon, false},
		// signer group
		{"signer group holds the signer", Rule{MatchSignerGroupID: ptr(grpID)}, uac, noon, true},
		{"signer group, case-insensitive", Rule{MatchSignerGroupID: ptr(grpID)}, func() Observation { o := uacObs(); o.TargetExecutableSigner = "VENDOR inc."; return o }(), noon, true},
		{"signer group lacks the signer", Rule{MatchSignerGroupID: ptr(grpID)}, func() Observation { o := uacObs(); o.TargetExecutableSigner = "Evil Ltd"; return o }(), noon, false},
		{"negated signer group, not in group", Rule{MatchSignerGroupID: ptr(grpID), MatchNegate: neg(CriterionSignerGroup)}, func() Observation { o := uacObs(); o.TargetExecutableSigner = "Evil Ltd"; return o }(), noon, true},
		{"negated signer group, in group", Rule{MatchSignerGroupID: ptr(grpID), MatchNegate: neg(CriterionSignerGroup)}, uac, noon, false},
		{"negated signer group, unsigned", Rule{MatchSignerGroupID: ptr(grpID), MatchNegate: neg(CriterionSignerGroup)}, bare, noon, false},
		// hash
		{"hash equal", Rule{MatchHash: hashA}, uac, noon, true},
		{"hash upper-case in rule", Rule{MatchHash: "9F86D081884C7D659A2FEAA0C55AD015A3BF4F1B2B0B822CD15D6C15B0F00A08"}, uac, noon, true},
		{"hash different", Rule{MatchHash: hashB}, uac, noon, false},
		{"negated hash, different", Rule{MatchHash: hashB, MatchNegate: neg(CriterionHash)}, uac, noon, true},
		{"negated hash, lacking", Rule{MatchHash: hashB, MatchNegate: neg(CriterionHash)}, bare, noon, false},
		// path glob
		{"path exact, backslashes and case", Rule{MatchPathGlob: `c:\program files\vendor\app\SETUP.EXE`}, uac, noon, true},
		{"path * within a segment", Rule{MatchPathGlob: `C:\Program Files\*\App\setup.exe`}, uac, noon, true},
		{"path * does not cross segments", Rule{MatchPathGlob: `C:\Program Files\*\setup.exe`}, uac, noon, false},
		{"path ** crosses segments", Rule{MatchPathGlob: `C:\Program Files\**\setup.exe`}, uac, noon, true},
		{"path trailing **", Rule{MatchPathGlob: `C:/program files/**`}, uac, noon, true},
		{"path leading **", Rule{MatchPathGlob: `**\setup.exe`}, uac, noon, true},
		{"path *.EXE", Rule{MatchPathGlob: `C:\Program Files\Vendor\App\*.EXE`}, uac, noon, true},
		{"path ? is literal", Rule{MatchPathGlob: `C:\Program Files\Vendor\App\setup.ex?`}, uac, noon, false},
		{"path is whole-string", Rule{MatchPathGlob: `C:\Program Files\Vendor`}, uac, noon, false},
		{"path /**/ matches zero directories", Rule{MatchPathGlob: `C:\Program Files\Vendor\App\**\setup.exe`}, uac, noon, true},
		{"path ** inside a segment crosses", Rule{MatchPathGlob: `C:\Prog**.exe`}, uac, noon, true},
		{"negated path, no match", Rule{MatchPathGlob: `C:\Windows\**`, MatchNegate: neg(CriterionPathGlob)}, uac, noon, true},
		{"negated path, match", Rule{MatchPathGlob: `C:\Program Files\**`, MatchNegate: neg(CriterionPathGlob)}, uac, noon, false},
		{"negated path, lacking", Rule{MatchPathGlob: `C:\Windows\**`, MatchNegate: neg(CriterionPathGlob)}, bare, noon, false},
		// parent image
		{"parent exact", Rule{MatchParentImage: `C:\Windows\explorer.exe`}, uac, noon, true},
		{"parent glob with forward slashes", Rule{MatchParentImage: `c:/windows/*.exe`}, uac, noon, true},
		{"parent other directory", Rule{MatchParentImage: `C:\Windows\System32\*`}, uac, noon, false},
		{"negated parent, lacking", Rule{MatchParentImage: `C:\Windows\System32\*`, MatchNegate: neg(CriterionParentImage)}, bare, noon, false},
		{"negated parent, other", Rule{MatchParentImage: `C:\Windows\System32\*`, MatchNegate: neg(CriterionParentImage)}, uac, noon, true},
		// command line
		{"command line substring, case-insensitive", Rule{MatchCommandLine: "/install"}, uac, noon, true},
		{"command line absent substring", Rule{MatchCommandLine: "/uninstall"}, uac, noon, false},
		{"negated command line, absent", Rule{MatchCommandLine: "/uninstall", MatchNegate: neg(CriterionCommandLine)}, uac, noon, true},
		{"negated command line, present", Rule{MatchCommandLine: "/s", MatchNegate: neg(CriterionCommandLine)}, uac, noon, false},
		{"negated command line, lacking", Rule{MatchCommandLine: "/uninstall", MatchNegate: neg(CriterionCommandLine)}, bare, noon, false},
		{"command line is not trimmed", Rule{MatchCommandLine: ` /s `}, uac, noon, true},
		{"command line spaces are significant", Rule{MatchCommandLine: ` /install `}, uac, noon, false},
		// user
		{"user whole-string", Rule{MatchUser: `CORP\alice`}, uac, noon, true},
		{"user case-insensitive", Rule{MatchUser: `corp\ALICE`}, uac, noon, true},
		{"user without domain normalisation", Rule{MatchUser: "alice"}, uac, noon, false},
		{"negated user, other", Rule{MatchUser: `CORP\bob`, MatchNegate: neg(CriterionUser)}, uac, noon, true},
		{"negated user, lacking", Rule{MatchUser: `CORP\bob`, MatchNegate: neg(CriterionUser)}, Observation{TargetExecutableSigner: "x"}, noon, false},
		// directory group
		{"ad group, any of the subject's", Rule{MatchAdGroup: "engineering"}, uac, noon, true},
		{"ad group not held", Rule{MatchAdGroup: "Finance"}, uac, noon, false},
		{"negated ad group, not held", Rule{MatchAdGroup: "Finance", MatchNegate: neg(CriterionAdGroup)}, uac, noon, true},
		{"negated ad group, held", Rule{MatchAdGroup: "Domain Users", MatchNegate: neg(CriterionAdGroup)}, uac, noon, false},
		{"negated ad group, no groups known", Rule{MatchAdGroup: "Finance", MatchNegate: neg(CriterionAdGroup)}, noGroups, noon, false},
		{"ad group, no groups known", Rule{MatchAdGroup: "Engineering"}, noGroups, noon, false},
		// tool name
		{"tool name case-insensitive", Rule{MatchToolName: "Shell.Exec"}, tool, noon, true},
		{"tool name whole-string", Rule{MatchToolName: "shell"}, tool, noon, false},
		{"negated tool name, other", Rule{MatchToolName: "file.read", MatchNegate: neg(CriterionToolName)}, tool, noon, true},
		{"tool name on a UAC request", Rule{MatchToolName: "shell.exec"}, uac, noon, false},
		{"negated tool name on a UAC request", Rule{MatchToolName: "file.read", MatchNegate: neg(CriterionToolName)}, uac, noon, false},
		// risk tier
		{"risk tier equal", Rule{MatchRiskTier: ptr(3)}, tool, noon, true},
		{"risk tier different", Rule{MatchRiskTier: ptr(0)}, tool, noon, false},
		{"risk tier 0 is a value", Rule{MatchRiskTier: ptr(0)}, tier0, noon, true},
		{"negated risk tier, other", Rule{MatchRiskTier: ptr(0), MatchNegate: neg(CriterionRiskTier)}, tool, noon, true},
		{"negated risk tier, lacking", Rule{MatchRiskTier: ptr(0), MatchNegate: neg(CriterionRiskTier)}, uac, noon, false},
		// combinations and emptiness
		{"all criteria must match", Rule{MatchSigner: "Vendor Inc.", MatchPathGlob: `C:\Program Files\**`, MatchUser: `corp\alice`}, uac, noon, true},
		{"one failing criterion fails the rule", Rule{MatchSigner: "Vendor Inc.", MatchPathGlob: `C:\Windows\**`}, uac, noon, false},
		{"one negated among plain criteria", Rule{MatchSigner: "Vendor Inc.", MatchHash: hashB, MatchNegate: neg(CriterionHash)}, uac, noon, true},
		{"user and tool", Rule{MatchUser: "ALICE", MatchToolName: "shell.exec", MatchRiskTier: ptr(3)}, tool, noon, true},
		{"no criteria never matches", Rule{}, uac, noon, false},
		{"blank criteria are not criteria", Rule{MatchSigner: "   ", MatchUser: "\t"}, uac, noon, false},
		{"a time window alone never matches", Rule{TimeWindow: win("00:00", "23:59", nil, "")}, uac, noon, false},
		{"negation of an unset criterion is ignored", Rule{MatchSigner: "Vendor Inc.", MatchNegate: neg(CriterionHash)}, uac, noon, true},
		// time windows
		{"window inside", vendor(win("09:00", "17:00", nil, "")), uac, noon, true},
		{"window start inclusive", vendor(win("09:00", "17:00", nil, "")), uac, thu(9, 0, 0), true},
		{"window before start", vendor(win("09:00", "17:00", nil, "")), uac, thu(8, 59, 59), false},
		{"window end inclusive to the minute", vendor(win("09:00", "17:00", nil, "")), uac, thu(17, 0, 59), true},
		{"window after end", vendor(win("09:00", "17:00", nil, "")), uac, thu(17, 1, 0), false},
		{"overnight window, evening", vendor(win("22:00", "06:00", nil, "")), uac, thu(23, 30, 0), true},
		{"overnight window, morning", vendor(win("22:00", "06:00", nil, "")), uac, thu(5, 0, 0), true},
		{"overnight window, end inclusive", vendor(win("22:00", "06:00", nil, "")), uac, thu(6, 0, 0), true},
		{"overnight window, after end", vendor(win("22:00", "06:00", nil, "")), uac, thu(6, 1, 0), false},
		{"overnight window, midday", vendor(win("22:00", "06:00", nil, "")), uac, noon, false},
		{"days include today", vendor(win("09:00", "17:00", []int{4}, "")), uac, noon, true},
		{"days exclude today", vendor(win("09:00", "17:00", []int{1, 2}, "")), uac, noon, false},
		{"overnight days: the morning belongs to the day it opened", vendor(win("22:00", "06:00", []int{4}, "")), uac, fri(2, 0), true},
		{"overnight days: Thursday morning opened on Wednesday", vendor(win("22:00", "06:00", []int{4}, "")), uac, thu(2, 0, 0), false},
		{"overnight days: Friday evening is Friday", vendor(win("22:00", "06:00", []int{4}, "")), uac, fri(22, 30), false},
		{"timezone: 12:00 UTC is 07:00 in New York", vendor(win("09:00", "17:00", nil, "America/New_York")), uac, noon, false},
		{"timezone: 15:00 UTC is 10:00 in New York", vendor(win("09:00", "17:00", nil, "America/New_York")), uac, thu(15, 0, 0), true},
		{"timezone moves the day: Thursday 20:00 UTC is Friday in Tokyo", vendor(win("00:00", "23:59", []int{5}, "Asia/Tokyo")), uac, thu(20, 0, 0), true},
		{"timezone default is UTC", vendor(win("12:00", "12:00", nil, "")), uac, thu(12, 0, 30), true},
		{"one-minute window, next minute", vendor(win("12:00", "12:00", nil, "")), uac, thu(12, 1, 0), false},
		{"whole day", vendor(win("00:00", "23:59", nil, "UTC")), uac, thu(23, 59, 59), true},
		{"malformed start H:MM", vendor(win("9:00", "17:00", nil, "")), uac, noon, false},
		{"malformed end 24:00", vendor(win("09:00", "24:00", nil, "")), uac, noon, false},
		{"malformed minutes 09:60", vendor(win("09:60", "17:00", nil, "")), uac, noon, false},
		{"malformed day 7", vendor(win("00:00", "23:59", []int{4, 7}, "")), uac, noon, false},
		{"malformed day -1", vendor(win("00:00", "23:59", []int{-1}, "")), uac, noon, false},
		{"unknown timezone", vendor(win("00:00", "23:59", nil, "Mars/Olympus_Mons")), uac, noon, false},
		{"Local is not a timezone", vendor(win("00:00", "23:59", nil, "Local")), uac, noon, false},
		{"empty window strings", vendor(&TimeWindow{}), uac, noon, false},
	}
	if len(cases) < 60 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Match(c.rule, testGroups, c.obs, c.at)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Match = %v, want %v", got, c.want)
			}
		})
	}
}

func TestMatchMissingSignerGroupIsAnError(t *testing.T) {
	_, err := Match(Rule{MatchSignerGroupID: ptr(grpID)}, nil, uacObs(), thu(12, 0, 0))
	if !errors.Is(err, ErrSignerGroupMissing) {
		t.Fatalf("err = %v, want ErrSignerGroupMissing", err)
	}
}

// Each criterion is reachable: a rule setting only that criterion matches
// its observation and, negated, does not.
func TestEveryCriterionReachable(t *testing.T) {
	uac, tool := uacObs(), toolObs()
	rules := map[Criterion]struct {
		r   Rule
		obs Observation
	}{
		CriterionSigner:      {Rule{MatchSigner: "Vendor Inc."}, uac},
		CriterionSignerGroup: {Rule{MatchSignerGroupID: ptr(grpID)}, uac},
		CriterionHash:        {Rule{MatchHash: hashA}, uac},
		CriterionPathGlob:    {Rule{MatchPathGlob: `C:\**\setup.exe`}, uac},
		CriterionParentImage: {Rule{MatchParentImage: `C:\Windows\*`}, uac},
		CriterionCommandLine: {Rule{MatchCommandLine: "/S"}, uac},
		CriterionUser:        {Rule{MatchUser: `corp\alice`}, uac},
		CriterionAdGroup:     {Rule{MatchAdGroup: "Engineering"}, uac},
		CriterionToolName:    {Rule{MatchToolName: "shell.exec"}, tool},
		CriterionRiskTier:    {Rule{MatchRiskTier: ptr(3)}, tool},
	}
	for _, c := range Criteria {
		tc, ok := rules[c]
		if !ok {
			t.Fatalf("criterion %s untested", c)
		}
		if c.Field() == "" {
			t.Errorf("criterion %s has no field", c)
		}
		if ok, err := Match(tc.r, testGroups, tc.obs, thu(12, 0, 0)); !ok || err != nil {
			t.Errorf("%s: Match = %v, %v", c, ok, err)
		}
		tc.r.MatchNegate = []Criterion{c}
		if ok, err := Match(tc.r, testGroups, tc.obs, thu(12, 0, 0)); ok || err != nil {
			t.Errorf("%s negated: Match = %v, %v", c, ok, err)
		}
	}
}

// FuzzDecide: any rule text and any request decide without error or panic,
// and Validate never panics on them.
func FuzzDecide(f *testing.F) {
	f.Add(`C:\**\*.exe`, "Vendor", "/s", "22:00", "06:00", "Europe/Berlin", `C:\x\y.exe`, "VENDOR", `"y.exe" /S`, `CORP\a`)
	f.Add("", "", "", "", "", "", "", "", "", "")
	f.Add("**/**/*", "\u212a", "\x00", "9:99", "24:00", "Local", `\\?\C:\`, "k", "", "")
	f.Fuzz(func(t *testing.T, glob, signer, cmd, start, end, tz, path, obsSigner, obsCmd, user string) {
		r := Rule{ID: "r", Enabled: true, Verdict: VerdictAutoApprove, MatchPathGlob: glob, MatchSigner: signer,
			MatchCommandLine: cmd, MatchUser: user, MatchNegate: []Criterion{CriterionUser},
			TimeWindow: &TimeWindow{Start: start, End: end, Timezone: tz, Days: []int{len(tz) % 8}}}
		_ = Validate(r)
		o := Observation{TargetExecutablePath: path, TargetExecutableSigner: obsSigner, CommandLine: obsCmd, SubjectUsername: user + "x"}
		d := Decide(ChainInput{Rules: []Rule{r}, Policies: []SoftwarePolicy{{Enabled: true, Mode: ModeBlocklist,
			Executables: []Executable{{PathGlob: glob, Signer: signer}}}}}, o, thu(23, 0, 0))
		if d.Source == SourceError {
			t.Fatalf("evaluator error: %v", d.Err)
		}
	})
}
