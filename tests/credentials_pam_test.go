package tests

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/pam/policy"
	"github.com/gale-rmm/gale/tests/fixture"
)

// The PAM part of TestCredentialSequences (issue 30, separation of duties):
// organization A holds one auto_approve rule that references signer group G
// and one allowlist software policy, all three created by A's admin. The
// sequence plays edits of G ("sgEdit"), of the allowlist ("swEdit") and
// harmless edits of the rule ("ruleEdit") by random members of the cast, and
// prompts of A's agent ("prompt") whose subject is a cast member written in
// one of the forms an agent reports (e-mail, local part, `CORP\x`, `CORP/x`,
// `.\x`, `x@corp.local`, full-width), signed by a signer of G, of the
// allowlist, of both or of neither; each edit answered 2xx is followed at
// once by a prompt of its editor signed by a signer of what it edited. The
// test keeps its own record of who created and last edited each object, from
// the 2xx answers it saw, and checks right after each prompt:
//
//   - no automatic approval decides a prompt whose subject (policy.SubjectIsUser
//     over the author's e-mail, or the cast member the test wrote the subject
//     for) created or last edited what the decision rests on: the rule and its
//     signer group, or the software policy;
//   - the decision is the one the record implies (the allowlist approves a
//     prompt of its signers unless the subject authored it; then the rule
//     approves a prompt of G's signers unless the subject authored the rule or
//     G; then require_approval leaves it pending), so that both automatic
//     paths are reached and the first invariant cannot hold by refusing
//     everybody.
//
// A's admin puts the three objects back at a sequence's first PAM step, so a
// shrunk sequence replays on its own.

// pamState is organization A's PAM objects, the agent that prompts, and the
// test's record of the objects' contents and authors (cast names).
type pamState struct {
	deviceID, agentToken string
	ruleID, groupID      string
	policyID, policyName string
	emails               map[string]string // cast name -> e-mail

	seq                   *seq // the sequence the record below belongs to
	groupSigners          []string
	policySigners         []string
	rule, group, software authors

	decided map[string]int // prompts per decision (source or status), over every sequence
}

// authors is who created and who last edited an object.
type authors struct{ created, updated string }

func (a authors) names() []string { return []string{a.created, a.updated} }

// The signers prompts are signed by: G's, the allowlist's, both, neither.
var pamSigners = []string{"Fabrikam", "Evil Signer", "Contoso Ltd", "Northwind Traders", "Unknown Vendor"}

const (
	pamPath      = `C:\Tools\setup.exe`
	pamRuleName  = "vendors"
	pamGroupName = "Vendors"
)

// pamSetup enrolls a device of A and has A's admin create signer group G,
// an auto_approve rule referencing it and an allowlist.
func (pw *propWorld) pamSetup(t *testing.T) *pamState {
	ps := &pamState{emails: map[string]string{}, decided: map[string]int{}, policyName: "tools"}
	ps.deviceID, ps.agentToken = pw.Device(t, fixture.AAdmin, pw.A.ID, "", "seq-pam")
	for _, name := range actors {
		u, err := pw.Env.Users.Get(context.Background(), pw.Users[name])
		must(t, err)
		ps.emails[name] = u.Email
	}
	g := fixture.Expect(t, pw.Call(t, http.MethodPost, "/api/v1/pam/signer-groups", fixture.AAdmin,
		map[string]any{"name": pamGroupName, "signers": []string{"Fabrikam"}}), http.StatusCreated).JSON(t)["signerGroups"].([]any)[0].(map[string]any)
	ps.groupID = g["id"].(string)
	r := fixture.Expect(t, pw.Call(t, http.MethodPost, "/api/v1/pam/rules", fixture.AAdmin,
		map[string]any{"name": pamRuleName, "verdict": "auto_approve", "matchSignerGroupId": ps.groupID}), http.StatusCreated).JSON(t)["rule"].(map[string]any)
	ps.ruleID = r["id"].(string)
	p := fixture.Expect(t, pw.Call(t, http.MethodPost, "/api/v1/pam/software-policies", fixture.AAdmin,
		map[string]any{"name": ps.policyName, "mode": "allowlist", "executables": executables([]string{"Contoso Ltd"})}),
		http.StatusCreated).JSON(t)["softwarePolicy"].(map[string]any)
	ps.policyID = p["id"].(string)
	t.Cleanup(func() { t.Logf("PAM prompts per decision: %v", ps.decided) })
	return ps
}

func executables(signers []string) []map[string]string {
	out := make([]map[string]string, len(signers))
	for i, s := range signers {
		out[i] = map[string]string{"signer": s}
	}
	return out
}

// begin gives the sequence s objects last edited by A's admin (so that a
// shrunk sequence replays on its own): A's admin puts back G, the rule and
// the allowlist as pamSetup made them.
func (ps *pamState) begin(s *seq) {
	if ps.seq == s {
		return
	}
	ps.seq = s
	op := s.op
	s.op = "pamReset" // counted apart from the step's operation
	defer func() { s.op = op }()
	a := fixture.AAdmin
	tok := s.pw.Tokens[a]
	for _, c := range []struct {
		path string
		body map[string]any
	}{
		{"/api/v1/pam/signer-groups/" + ps.groupID, map[string]any{"signers": []string{"Fabrikam"}}},
		{"/api/v1/pam/rules/" + ps.ruleID, map[string]any{"name": pamRuleName, "priority": 100}},
		{"/api/v1/pam/software-policies/" + ps.policyID, map[string]any{"priority": 0, "executables": executables([]string{"Contoso Ltd"})}},
	} {
		if res := s.call(http.MethodPatch, c.path, tok, c.body); res.Status != http.StatusOK {
			s.rt.Fatalf("A's admin resets %s: %d %s", c.path, res.Status, res.Body)
		}
	}
	ps.groupSigners, ps.policySigners = []string{"Fabrikam"}, []string{"Contoso Ltd"}
	ps.rule, ps.group, ps.software = authors{a, a}, authors{a, a}, authors{a, a}
	s.logf("PAM: rule %q on group %v and allowlist %v, all by %s", pamRuleName, ps.groupSigners, ps.policySigners, a)
}

// signerSets are what sgEdit and swEdit set: G's signers, the allowlist's.
var signerSets = [][]string{{"Fabrikam"}, {"Fabrikam", "Evil Signer"}, {"Evil Signer"}, {"Fabrikam", "Contoso Ltd"},
	{"Contoso Ltd", "Evil Signer"}, {"Northwind Traders"}}

func (s *seq) playPAM(op string) bool {
	ps := s.pw.pam
	switch op {
	case "sgEdit", "swEdit", "ruleEdit":
		ps.begin(s)
		name, tok := s.caller(false)
		var path, field string
		var body map[string]any
		var apply func()
		var probe *[]string // the signers whose prompts the edit bears on
		switch op {
		case "sgEdit":
			signers := rapid.SampledFrom(signerSets).Draw(s.rt, "signers")
			path, field, body = "/api/v1/pam/signer-groups/"+ps.groupID, "signerGroups", map[string]any{"signers": signers}
			apply, probe = func() { ps.groupSigners, ps.group.updated = signers, name }, &ps.groupSigners
		case "swEdit":
			signers := rapid.SampledFrom(signerSets).Draw(s.rt, "signers")
			path, field = "/api/v1/pam/software-policies/"+ps.policyID, "softwarePolicy"
			body = map[string]any{"priority": rapid.IntRange(0, 9).Draw(s.rt, "priority"), "executables": executables(signers)}
			apply, probe = func() { ps.policySigners, ps.software.updated = signers, name }, &ps.policySigners
		case "ruleEdit":
			path, field = "/api/v1/pam/rules/"+ps.ruleID, "rule"
			body = map[string]any{"priority": rapid.IntRange(1, 200).Draw(s.rt, "priority"), "approvalDurationMinutes": 30}
			apply, probe = func() { ps.rule.updated = name }, &ps.groupSigners
		}
		res := s.call(http.MethodPatch, path, tok, body)
		s.logf("%s: %s %v: %d", name, op, body, res.Status)
		if ok(res) {
			apply()
			// The record is the test's own; the answer must agree with it.
			body := res.JSON(s.t)
			got, _ := body[field].(map[string]any)
			if groups, isList := body["signerGroups"].([]any); isList && len(groups) == 1 {
				got, _ = groups[0].(map[string]any) // the spec's list-shaped signer-group answer
			}
			if got["updatedBy"] != s.pw.Users[name] || got["createdBy"] != s.pw.Users[fixture.AAdmin] {
				s.fail("%s answered authors created %v updated %v after %s's edit", op, got["createdBy"], got["updatedBy"], name)
			}
			// The editor's own prompt under what it just edited: the
			// case separation of duties is about, played at once
			// rather than left to a later draw.
			s.op = "probe" // counted apart from the edit (play puts it back)
			s.promptAs(ps, name, rapid.SampledFrom(*probe).Draw(s.rt, "probe signer"))
		}
		return true
	case "prompt":
		ps.begin(s)
		// Any member of the cast, the current editors more often, signed
		// by any signer, the current ones of G and the allowlist more often.
		names := slices.Clone(actors)
		for range 3 {
			names = append(names, ps.group.updated, ps.software.updated, ps.rule.updated)
		}
		who := rapid.SampledFrom(names).Draw(s.rt, "prompt subject")
		signers := slices.Concat(pamSigners, ps.groupSigners, ps.groupSigners, ps.policySigners)
		s.promptAs(ps, who, rapid.SampledFrom(signers).Draw(s.rt, "signer"))
		return true
	}
	return false
}

// subjectForms are the ways an agent reports the account with e-mail email.
var subjectForms = []func(email string) string{
	func(e string) string { return e },
	func(e string) string { return local(e) },
	func(e string) string { return `CORP\` + local(e) },
	func(e string) string { return "CORP/" + local(e) },
	func(e string) string { return `.\` + local(e) },
	func(e string) string { return local(e) + "@corp.local" },
	func(e string) string { return fullWidth(`CORP\` + local(e)) },
	func(e string) string { return strings.ToUpper(`corp\` + local(e)) },
}

func local(email string) string { return email[:strings.LastIndexByte(email, '@')] }

// fullWidth writes printable ASCII in its full-width form (U+FF01-U+FF5E),
// which NFKC reads back as ASCII.
func fullWidth(s string) string {
	return strings.Map(func(r rune) rune {
		if r > ' ' && r <= '~' {
			return r + 0xFEE0
		}
		return r
	}, s)
}

// promptAs has A's agent report a prompt of cast member who, in a random
// form, signed by signer, and checks its decision against the record.
func (s *seq) promptAs(ps *pamState, who, signer string) {
	form := rapid.IntRange(0, len(subjectForms)-1).Draw(s.rt, "subject form")
	subject := subjectForms[form](ps.emails[who])
	s.last = who
	if !policy.SubjectIsUser(subject, ps.emails[who]) {
		s.rt.Fatalf("the test wrote %q for %s (%s), which is not that user", subject, who, ps.emails[who])
	}
	res := s.call(http.MethodPost, "/api/v1/agents/"+ps.deviceID+"/elevation-requests", ps.agentToken, map[string]any{
		"subject_username": subject, "target_executable_path": pamPath, "target_executable_signer": signer, "pid": 4242,
		"observed_at": "2026-11-01T08:59:59.000Z"})
	if res.Status != http.StatusCreated {
		s.rt.Fatalf("prompt of %q signed %q: %d %s", subject, signer, res.Status, res.Body)
	}
	var out struct{ ID, Status string }
	res.Decode(s.t, &out)
	r, err := pam.Store{St: s.pw.Env.Store}.Request(context.Background(), s.pw.A.ID, out.ID)
	must(s.t, err)
	source := ""
	if r.DecisionSource != nil {
		source = *r.DecisionSource
	}
	s.logf("prompt of %q (%s) signed %q: %s by %s", subject, who, signer, out.Status, source)
	ps.decided[out.Status+" "+source]++

	// authored: whether the subject created or last edited an object with
	// authors a, by the test's record.
	authored := func(a authors) bool {
		for _, n := range a.names() {
			if n == who || policy.SubjectIsUser(subject, ps.emails[n]) {
				return true
			}
		}
		return false
	}
	if out.Status == pam.StatusAutoApproved {
		switch {
		case source == pam.SourceSoftwarePolicy && r.MatchedPolicyName != nil && *r.MatchedPolicyName == ps.policyName:
			if authored(ps.software) {
				s.fail("the allowlist created by %s and last edited by %s auto-approved %q (%s)", ps.software.created, ps.software.updated, subject, who)
			}
		case source == pam.SourceRule && r.PamRuleID != nil && *r.PamRuleID == ps.ruleID:
			if authored(ps.rule) || authored(ps.group) {
				s.fail("the rule (by %s, last edited by %s) on signer group G (by %s, last edited by %s) auto-approved %q (%s)",
					ps.rule.created, ps.rule.updated, ps.group.created, ps.group.updated, subject, who)
			}
		default:
			s.fail("%q was auto-approved by %s (rule %v, policy %v), which the test did not make", subject, source, r.PamRuleID, r.MatchedPolicyName)
		}
	}

	// The decision the record implies.
	want, wantSource := pam.StatusPending, ""
	switch {
	case slices.Contains(ps.policySigners, signer) && !authored(ps.software):
		want, wantSource = pam.StatusAutoApproved, pam.SourceSoftwarePolicy
	case slices.Contains(ps.groupSigners, signer) && !authored(ps.rule) && !authored(ps.group):
		want, wantSource = pam.StatusAutoApproved, pam.SourceRule
	}
	if out.Status != want || source != wantSource {
		s.fail("prompt of %q (%s) signed %q was %s by %q; the record (group %v by %v, allowlist %v by %v, rule by %v) says %s by %q",
			subject, who, signer, out.Status, source, ps.groupSigners, ps.group, ps.policySigners, ps.software, ps.rule, want, wantSource)
	}
}
