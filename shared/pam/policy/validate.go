package policy

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// PathCriteria is the field-error key of rule 1 (no identifying criterion),
// which belongs to no single field.
const PathCriteria = "criteria"

// Executable-shaped and tool-action-shaped criteria (rule 2). User and
// directory group belong to neither and combine with both.
const (
	execShaped = bitSigner | bitSignerGroup | bitHash | bitPathGlob | bitParentImage | bitCommandLine
	toolShaped = bitToolName | bitRiskTier
)

// Validate checks a whole rule (a create body, or a PATCH merged onto the
// stored rule) against the spec's bounds and validation rules 1-5, and
// returns field errors keyed by JSON path (empty when valid; its Err is the
// 400 `Validation failed`). ID, OrgID, Enabled, timestamps and actors are
// not checked: the service sets them.
func Validate(r Rule) fault.Fields {
	f := ValidateCriteria(r)
	valid.Name(f, "name", r.Name, MaxNameLen)
	if !r.Verdict.Valid() {
		f.Add("verdict", "must be one of: auto_approve, auto_deny, require_approval, ignore")
	} else if r.Verdict == VerdictIgnore && setCriteria(&r)&toolShaped != 0 {
		// Rule 5.
		f.Add("verdict", "ignore is not allowed for tool-action rules")
	}
	valid.Range(f, "priority", r.Priority, MinPriority, MaxPriority)
	if r.SiteID != nil {
		valid.UUID(f, "siteId", *r.SiteID)
	}
	if m := r.ApprovalDurationMinutes; m != nil {
		valid.Range(f, "approvalDurationMinutes", *m, MinApprovalMinutes, MaxApprovalMinutes)
	}
	return f
}

// ValidateCriteria checks only the matching part of a rule (criteria,
// matchNegate, timeWindow; rules 1-4): a preview draft.
func ValidateCriteria(r Rule) fault.Fields {
	f := fault.Fields{}
	for _, s := range []struct{ path, v string }{
		{"matchSigner", r.MatchSigner}, {"matchHash", r.MatchHash}, {"matchPathGlob", r.MatchPathGlob},
		{"matchParentImage", r.MatchParentImage}, {"matchCommandLine", r.MatchCommandLine},
		{"matchUser", r.MatchUser}, {"matchAdGroup", r.MatchAdGroup}, {"matchToolName", r.MatchToolName},
	} {
		criterionString(f, s.path, s.v)
	}
	if h := strings.TrimSpace(r.MatchHash); h != "" && !isSHA256Hex(h) {
		f.Add("matchHash", "must be a SHA-256 hex digest (64 hexadecimal characters)")
	}
	if g := r.MatchSignerGroupID; g != nil {
		valid.UUID(f, "matchSignerGroupId", *g)
	}
	if t := r.MatchRiskTier; t != nil {
		valid.Range(f, "matchRiskTier", *t, 0, MaxRiskTier)
	}
	set := setCriteria(&r)
	// Rule 1.
	if set == 0 {
		f.Add(PathCriteria, "at least one identifying criterion is required "+
			"(signer, signer group, hash, path, parent, command line, user, group, tool or tier); a time window alone is not one")
	}
	// Rule 2.
	if set&execShaped != 0 && set&toolShaped != 0 {
		for _, c := range []Criterion{CriterionToolName, CriterionRiskTier} {
			if set&criterionBit(c) != 0 {
				f.Add(c.Field(), "cannot be combined with executable criteria (signer, signer group, hash, path, parent, command line)")
			}
		}
	}
	// Rule 3.
	if set&bitSigner != 0 && set&bitSignerGroup != 0 {
		f.Add("matchSignerGroupId", "is exclusive with matchSigner")
	}
	// Rule 4: a negated criterion must be one the rule sets (Match then never
	// matches it when the observation lacks the value).
	seen := map[Criterion]bool{}
	for i, n := range r.MatchNegate {
		path := "matchNegate." + strconv.Itoa(i)
		switch b := criterionBit(n); {
		case b == 0:
			f.Add(path, "must be one of: signer, signerGroup, hash, pathGlob, parentImage, commandLine, user, adGroup, toolName, riskTier")
		case seen[n]:
			f.Add(path, "is listed twice")
		case set&b == 0:
			f.Addf(path, "negates %s, which the rule does not set", n.Field())
		}
		seen[n] = true
	}
	if w := r.TimeWindow; w != nil {
		validateWindow(f, w)
	}
	return f
}

func validateWindow(f fault.Fields, w *TimeWindow) {
	if _, ok := parseHHMM(w.Start); !ok {
		f.Add("timeWindow.start", "must be HH:MM (24-hour)")
	}
	if _, ok := parseHHMM(w.End); !ok {
		f.Add("timeWindow.end", "must be HH:MM (24-hour)")
	}
	for i, d := range w.Days {
		if d < 0 || d > 6 {
			f.Add("timeWindow.days."+strconv.Itoa(i), "must be between 0 and 6")
		}
	}
	if w.Timezone != "" {
		if _, ok := loadZone(w.Timezone); !ok {
			f.Add("timeWindow.timezone", "must be an IANA time zone")
		}
	}
}

func criterionString(f fault.Fields, path, v string) {
	switch {
	case !utf8.ValidString(v):
		f.Add(path, "must be valid UTF-8")
	case utf8.RuneCountInString(v) > MaxCriterionLen:
		f.Addf(path, "must be at most %d characters", MaxCriterionLen)
	case strings.IndexByte(v, 0) >= 0:
		f.Add(path, "must not contain NUL")
	}
}

func isSHA256Hex(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// ValidatePolicy checks a software policy
// (docs/decisions.md#software-policies): name 1-255, mode, priority 0-100000,
// 1-500 executables, each setting at least one of hash (SHA-256 hex), signer
// (1-255) and pathGlob.
func ValidatePolicy(p SoftwarePolicy) fault.Fields {
	f := fault.Fields{}
	valid.Name(f, "name", p.Name, MaxNameLen)
	if p.Mode != ModeAllowlist && p.Mode != ModeBlocklist {
		f.Add("mode", "must be one of: allowlist, blocklist")
	}
	valid.Range(f, "priority", p.Priority, MinPriority, MaxPriority)
	switch n := len(p.Executables); {
	case n == 0:
		f.Add("executables", "must list at least one executable")
	case n > MaxExecutables:
		f.Addf("executables", "must list at most %d executables", MaxExecutables)
	}
	for i, e := range p.Executables {
		path := fmt.Sprintf("executables.%d", i)
		if strings.TrimSpace(e.Hash) == "" && strings.TrimSpace(e.Signer) == "" && strings.TrimSpace(e.PathGlob) == "" {
			f.Add(path, "must set hash, signer or pathGlob")
			continue
		}
		if h := strings.TrimSpace(e.Hash); h != "" && !isSHA256Hex(h) {
			f.Add(path+".hash", "must be a SHA-256 hex digest (64 hexadecimal characters)")
		}
		criterionString(f, path+".signer", e.Signer)
		if utf8.RuneCountInString(strings.TrimSpace(e.Signer)) > MaxSignerLen {
			f.Addf(path+".signer", "must be at most %d characters", MaxSignerLen)
		}
		criterionString(f, path+".pathGlob", e.PathGlob)
	}
	return f
}

// NormalizeSigners trims a signer group's signers and removes
// case-insensitive duplicates (the first spelling stays). A blank entry or
// one over 255 characters is an error at signers.<i>; more than 500 entries
// after de-duplication is an error at signers.
func NormalizeSigners(signers []string) ([]string, fault.Fields) {
	f := fault.Fields{}
	out := make([]string, 0, len(signers))
	seen := make(map[string]bool, len(signers))
	for i, s := range signers {
		path := "signers." + strconv.Itoa(i)
		s = strings.TrimSpace(s)
		switch {
		case s == "":
			f.Add(path, "must not be blank")
			continue
		case !utf8.ValidString(s):
			f.Add(path, "must be valid UTF-8")
			continue
		case utf8.RuneCountInString(s) > MaxSignerLen:
			f.Addf(path, "must be at most %d characters", MaxSignerLen)
			continue
		}
		k := fold(s)
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, s)
	}
	if len(out) > MaxSigners {
		f.Addf("signers", "must have at most %d entries", MaxSigners)
	}
	return out, f
}
