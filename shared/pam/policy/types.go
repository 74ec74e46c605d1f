package policy

import (
	"time"
)

// Verdict is what a PAM rule (or the organization default) decides.
type Verdict string

// Verdicts of the spec's PAM rule.
const (
	VerdictAutoApprove     Verdict = "auto_approve"
	VerdictAutoDeny        Verdict = "auto_deny"
	VerdictRequireApproval Verdict = "require_approval"
	VerdictIgnore          Verdict = "ignore"
)

// Valid reports whether v is one of the four rule verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case VerdictAutoApprove, VerdictAutoDeny, VerdictRequireApproval, VerdictIgnore:
		return true
	}
	return false
}

// Criterion names one matching criterion of a rule: the allowed keys of
// matchNegate.
type Criterion string

// Criteria of the spec's PAM rule, in the order Validate and Match visit them.
const (
	CriterionSigner      Criterion = "signer"
	CriterionSignerGroup Criterion = "signerGroup"
	CriterionHash        Criterion = "hash"
	CriterionPathGlob    Criterion = "pathGlob"
	CriterionParentImage Criterion = "parentImage"
	CriterionCommandLine Criterion = "commandLine"
	CriterionUser        Criterion = "user"
	CriterionAdGroup     Criterion = "adGroup"
	CriterionToolName    Criterion = "toolName"
	CriterionRiskTier    Criterion = "riskTier"
)

// Criteria lists every criterion in a fixed order.
var Criteria = []Criterion{
	CriterionSigner, CriterionSignerGroup, CriterionHash, CriterionPathGlob, CriterionParentImage,
	CriterionCommandLine, CriterionUser, CriterionAdGroup, CriterionToolName, CriterionRiskTier,
}

// Field returns the rule's JSON field that sets criterion c (e.g. matchSigner),
// or "" for an unknown criterion.
func (c Criterion) Field() string {
	switch c {
	case CriterionSigner:
		return "matchSigner"
	case CriterionSignerGroup:
		return "matchSignerGroupId"
	case CriterionHash:
		return "matchHash"
	case CriterionPathGlob:
		return "matchPathGlob"
	case CriterionParentImage:
		return "matchParentImage"
	case CriterionCommandLine:
		return "matchCommandLine"
	case CriterionUser:
		return "matchUser"
	case CriterionAdGroup:
		return "matchAdGroup"
	case CriterionToolName:
		return "matchToolName"
	case CriterionRiskTier:
		return "matchRiskTier"
	}
	return ""
}

// Limits and defaults of rules and decisions.
const (
	// DefaultPriority is a new rule's priority when the body gives none.
	DefaultPriority = 100
	// MinPriority and MaxPriority bound a rule's priority
	// (docs/decisions.md#matching).
	MinPriority = 0
	MaxPriority = 100000
	// DefaultApprovalMinutes is the approval window when neither the rule nor
	// the responder names one, and the window of an allowlist auto-approval.
	DefaultApprovalMinutes = 15
	// MinApprovalMinutes and MaxApprovalMinutes bound approvalDurationMinutes.
	MinApprovalMinutes = 1
	MaxApprovalMinutes = 1440
	// MaxNameLen bounds a rule, signer group or software policy name.
	MaxNameLen = 255
	// MaxCriterionLen bounds each string criterion (a Gale limit: the spec
	// names none; Windows' long paths fit).
	MaxCriterionLen = 2048
	// MaxRiskTier bounds matchRiskTier (0-4).
	MaxRiskTier = 4
	// MaxSigners and MaxSignerLen bound a signer group's signers.
	MaxSigners   = 500
	MaxSignerLen = 255
	// MaxSignerGroupDescription bounds a signer group's description.
	MaxSignerGroupDescription = 2000
	// MaxExecutables bounds a software policy's executables (a Gale limit).
	MaxExecutables = 500
	// PreviewMaxScanned and PreviewMaxSamples are the limits of
	// docs/decisions.md#rule-preview.
	PreviewMaxScanned = 5000
	PreviewMaxSamples = 10
)

// Actor is the platform user who created or last edited a rule, a signer
// group or a software policy: separation of duties compares the request's
// subject with Email (SubjectIsUser). A
// change made with an API key records the key's creator (a key acts as its
// creator). An empty Email never equals a subject.
type Actor struct {
	UserID string `json:"userId,omitempty"`
	Email  string `json:"email,omitempty"`
}

// TimeWindow limits when a rule is active: Start and End are HH:MM (24-hour,
// both inclusive, at minute granularity; Start > End wraps midnight), Days
// are weekdays 0-6 (Sunday to Saturday; none means every day; for a window
// that wraps midnight the day is the one the window opened on), Timezone is
// an IANA name (empty means UTC). A malformed window is never active.
type TimeWindow struct {
	Start    string `json:"start"`
	End      string `json:"end"`
	Days     []int  `json:"days,omitempty"`
	Timezone string `json:"timezone,omitempty"`
}

// Rule is a PAM rule (spec 3, "PAM rule"). An empty string criterion (or one
// of only spaces) is not set; MatchCommandLine is used as given, the other
// string criteria trimmed.
type Rule struct {
	ID      string  `json:"id"`
	OrgID   string  `json:"orgId"`
	SiteID  *string `json:"siteId"` // nil: organization-wide
	Name    string  `json:"name"`
	Verdict Verdict `json:"verdict"`
	// Priority: lower runs first; ties by CreatedAt, then ID.
	Priority int  `json:"priority"`
	Enabled  bool `json:"enabled"`

	MatchSigner        string      `json:"matchSigner,omitempty"`
	MatchSignerGroupID *string     `json:"matchSignerGroupId"`
	MatchHash          string      `json:"matchHash,omitempty"`
	MatchPathGlob      string      `json:"matchPathGlob,omitempty"`
	MatchParentImage   string      `json:"matchParentImage,omitempty"`
	MatchCommandLine   string      `json:"matchCommandLine,omitempty"`
	MatchUser          string      `json:"matchUser,omitempty"`
	MatchAdGroup       string      `json:"matchAdGroup,omitempty"`
	MatchToolName      string      `json:"matchToolName,omitempty"`
	MatchRiskTier      *int        `json:"matchRiskTier"`
	MatchNegate        []Criterion `json:"matchNegate"`
	TimeWindow         *TimeWindow `json:"timeWindow"`
	// ApprovalDurationMinutes (1-1440) or nil for DefaultApprovalMinutes.
	ApprovalDurationMinutes *int `json:"approvalDurationMinutes"`

	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	CreatedBy Actor     `json:"createdBy"`
	UpdatedBy Actor     `json:"updatedBy"`
}

// SignerGroup is a named list of code signers a rule may reference with
// matchSignerGroupId (spec 3, "Signer group"). Stored signers are already
// normalised (NormalizeSigners).
type SignerGroup struct {
	ID          string    `json:"id"`
	OrgID       string    `json:"orgId"`
	Name        string    `json:"name"`
	Description *string   `json:"description"`
	Signers     []string  `json:"signers"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// CreatedBy and UpdatedBy: an auto_approve rule that references the
	// group never decides a request of either (separation of duties).
	CreatedBy Actor `json:"createdBy"`
	UpdatedBy Actor `json:"updatedBy"`
}

// PolicyMode is a software policy's mode.
type PolicyMode string

// Software policy modes (docs/decisions.md#software-policies).
const (
	ModeAllowlist PolicyMode = "allowlist"
	ModeBlocklist PolicyMode = "blocklist"
)

// Executable is one entry of a software policy. Every field it sets must
// match; its strength is that of its strongest field (hash > signer > path
// glob). An entry that sets none never matches.
type Executable struct {
	Hash     string `json:"hash,omitempty"`
	Signer   string `json:"signer,omitempty"`
	PathGlob string `json:"pathGlob,omitempty"`
}

// SoftwarePolicy is a software policy consulted by the decision chain's
// bridge (docs/decisions.md#software-policies): a blocklist match denies, an
// allowlist match auto-approves for DefaultApprovalMinutes.
type SoftwarePolicy struct {
	ID          string       `json:"id"`
	OrgID       string       `json:"orgId"`
	Name        string       `json:"name"`
	Mode        PolicyMode   `json:"mode"`
	Priority    int          `json:"priority"` // higher wins
	Enabled     bool         `json:"enabled"`
	Executables []Executable `json:"executables"`
	CreatedAt   time.Time    `json:"createdAt"`
	UpdatedAt   time.Time    `json:"updatedAt"`
	CreatedBy   Actor        `json:"createdBy"`
	UpdatedBy   Actor        `json:"updatedBy"`
}

// FlowType is an elevation request's flow.
type FlowType string

// Flow types of the spec's elevation request.
const (
	FlowUACIntercept FlowType = "uac_intercept"
	FlowTechJITAdmin FlowType = "tech_jit_admin"
	FlowAIToolAction FlowType = "ai_tool_action"
)

// Observation is what an elevation request carries to the decision chain:
// the agent ingest body (spec 3, "Agent ingest") plus the device's place and,
// for AI tool actions, the tool name and risk tier. An empty string (or a nil
// RiskTier, or no AdGroups) means the observation lacks that value: a
// criterion on it does not match, negated or not.
type Observation struct {
	OrgID    string
	SiteID   string // the device's site; "" when it has none
	DeviceID string
	FlowType FlowType

	SubjectUsername        string
	TargetExecutablePath   string
	TargetExecutableHash   string
	TargetExecutableSigner string
	PID                    int
	ParentImage            string
	CommandLine            string
	ObservedAt             time.Time

	// AdGroups are the subject's directory groups, when known (the agent
	// ingest body does not carry them today).
	AdGroups []string
	ToolName string
	RiskTier *int
}

// Source says which link of the chain decided.
type Source string

// Decision sources. SourcePolicy and SourceRule are the spec's
// decisionSource values software_policy and pam_rule.
const (
	SourcePolicy  Source = "software_policy"
	SourceRule    Source = "pam_rule"
	SourceDefault Source = "default"
	SourceError   Source = "error"
)

// Skipped names an auto-approving rule or allowlist policy that matched but
// was passed over by separation of duties (its creator or last editor, or
// those of the signer group the rule references, is the request's subject).
type Skipped struct {
	Source Source `json:"source"` // SourcePolicy or SourceRule
	ID     string `json:"id"`
	Name   string `json:"name"`
}

// Decision is the decision chain's result.
type Decision struct {
	Verdict Verdict
	Source  Source
	// RuleID and RuleName are set when Source is SourceRule (pamRuleId, pamRuleName).
	RuleID   string
	RuleName string
	// PolicyID and PolicyName are set when Source is SourcePolicy (matchedPolicyName).
	PolicyID   string
	PolicyName string
	// ApprovalDurationMinutes is an auto-approval's window (the deciding
	// rule's approvalDurationMinutes, else DefaultApprovalMinutes). Always
	// 1-1440. A human approval does not inherit it: respond without
	// durationMinutes approves for the spec's default, 15.
	ApprovalDurationMinutes int
	// Skipped lists what separation of duties passed over, in chain order.
	Skipped []Skipped
	// Err is the evaluator error when Source is SourceError (for logs only).
	Err error
}

// Request statuses a Decision maps to (spec 3, "Elevation request status"),
// plus StatusIgnored, which creates no row.
const (
	StatusPending      = "pending"
	StatusAutoApproved = "auto_approved"
	StatusDenied       = "denied"
	StatusIgnored      = "ignored"
)

// Status is the elevation request status the decision records: pending,
// auto_approved, denied, or ignored (no row).
func (d Decision) Status() string {
	switch d.Verdict {
	case VerdictAutoApprove:
		return StatusAutoApproved
	case VerdictAutoDeny:
		return StatusDenied
	case VerdictIgnore:
		return StatusIgnored
	}
	return StatusPending
}

// HistoryItem is one past elevation request replayed by Preview.
type HistoryItem struct {
	ID          string
	RequestedAt time.Time
	FlowType    FlowType
	Status      string
	Observation Observation
}

// PreviewOptions bound a preview. Zero values take the defaults.
type PreviewOptions struct {
	// FlowType, when set, skips history items of other flows (they are not
	// counted as scanned).
	FlowType FlowType
	// MaxScanned defaults to PreviewMaxScanned; MaxSamples to PreviewMaxSamples.
	MaxScanned int
	MaxSamples int
}

// PreviewSample is one matched request of a preview.
type PreviewSample struct {
	ID          string    `json:"id"`
	RequestedAt time.Time `json:"requestedAt"`
	FlowType    FlowType  `json:"flowType"`
	Status      string    `json:"status"`
}

// PreviewResult is a preview's outcome (the route adds success and windowDays).
type PreviewResult struct {
	TotalMatched    int             `json:"totalMatched"`
	TotalScanned    int             `json:"totalScanned"`
	Truncated       bool            `json:"truncated"`
	StatusBreakdown map[string]int  `json:"statusBreakdown"`
	Sample          []PreviewSample `json:"sample"`
}
