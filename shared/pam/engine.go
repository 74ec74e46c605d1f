package pam

import (
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/valid"
)

// This file adapts the stored records to the pure engine (shared/pam/policy).
// Until the engine's package is merged, it holds only the field checks the
// store needs.

// IsSubject reports whether an approver with e-mail email is the request's
// subject.
func IsSubject(subject, email string) bool {
	subject, email = strings.TrimSpace(subject), strings.TrimSpace(email)
	if subject == "" || email == "" {
		return false
	}
	if strings.EqualFold(subject, email) {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	if i := strings.LastIndexByte(subject, '\\'); i >= 0 {
		subject = subject[i+1:]
	}
	return at > 0 && strings.EqualFold(subject, email[:at])
}

// validateRule checks the merged rule r.
func validateRule(f fault.Fields, r *Rule) {
	valid.Name(f, "name", r.Name, MaxName)
	valid.OneOf(f, "verdict", r.Verdict, VerdictAutoApprove, VerdictAutoDeny, VerdictRequireApproval, VerdictIgnore)
	valid.Range(f, "priority", r.Priority, 0, MaxPriority)
	if r.MatchRiskTier != nil {
		valid.Range(f, "matchRiskTier", *r.MatchRiskTier, 0, 4)
	}
	if r.ApprovalDurationMinutes != nil {
		valid.Range(f, "approvalDurationMinutes", *r.ApprovalDurationMinutes, 1, MaxDuration)
	}
}

// Observation is what the decision chain judges (policy.Observation's fields).
type Observation struct {
	OrgID, SiteID, DeviceID, FlowType                                                   string
	SubjectUsername, TargetExecutablePath, TargetExecutableHash, TargetExecutableSigner string
	PID                                                                                 int
	ParentImage, CommandLine                                                            string
	ObservedAt                                                                          time.Time
}

// StatusIgnored is the ingest answer of an ignore verdict (no row).
const StatusIgnored = "ignored"

// decision is the chain's outcome as the store records it.
type decision struct {
	Status, Source, RuleID, RuleName, PolicyName string
	Minutes                                      int
	Skipped                                      any
	Err                                          any
}

// decide runs the decision chain over pol for obs at now.
func decide(pol *Policies, obs Observation, now time.Time) decision {
	_ = obs
	_ = now
	def := VerdictRequireApproval
	if pol.Config != nil {
		def = pol.Config.DefaultUnmatchedVerdict
	}
	if def == VerdictAutoDeny {
		return decision{Status: StatusDenied, Source: SourceDefault, Minutes: DefaultDuration}
	}
	return decision{Status: StatusPending, Source: SourceDefault, Minutes: DefaultDuration}
}
