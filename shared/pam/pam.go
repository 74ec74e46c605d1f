// Package pam is the privileged access management control plane
// (/api/v1/pam): elevation requests and their decisions, PAM rules, signer
// groups, software policies, the organization default verdict, the `pam`
// policy feature settings, and the writes that agent ingest, device actuation
// and the sweeper's expiry make on elevation requests. The pure decision logic
// (matching, validation of rules, the decision chain, the self-approval
// predicate) is shared/pam/policy; this package stores, authorizes and moves
// state.
//
// # Invariants
//
//   - An elevation request moves only by compare-and-swap on its status:
//     pending -> approved | denied (respond; exactly one of concurrent
//     decisions wins, the others get 409 `Request is not pending (current
//     status: <status>)`); approved -> actuating (actuation, in the same
//     transaction as the queued command); approved | auto_approved | actuating
//     -> revoked (revoke) or expired (the sweeper, at expiresAt); pending ->
//     expired (the sweeper, PAM_PENDING_TTL_MINUTES after requestedAt).
//     Each move writes its audit record and its elevation.* event through the
//     outbox in the same transaction.
//   - A requester never approves their own request (403 `Requester cannot
//     approve their own elevation request`), judged by policy.SubjectIsUser
//     over the approver's e-mail.
//   - Rules, signer groups and software policies record who created and last
//     edited them (createdBy/updatedBy, with the e-mails): no automatic
//     approval decides a request whose subject (policy.SubjectIsUser, the same
//     matcher) authored the rule, its signer group or the allowlist.
//   - Site- and device-group-restricted callers see only the requests of
//     devices inside their restriction; a write on a request they can see in
//     their organization but outside their sites is 403, another tenant's
//     request 404.
//   - A signer group referenced by a rule cannot be deleted (409 naming the
//     count); the reference check reads the organization's rules.
//
// # Rows
//
//	entity              PK / SK                              GSI1PK / GSI1SK         GSI2PK / GSI2SK
//	elevation request   ORG#<oid> / ELEV#<id>                ELEVREF#<id> / ELEV     ELEVEXP#<nn> / <expiresAt>#<oid>#<id> (approved, auto_approved, actuating)
//	                                                                                 ELEVPEND#<nn> / <requestedAt>#<oid>#<id> (pending)
//	                    GSI4 ORG#<oid>#ELEV#<part>, GSI3 PARTNER#<pid>#ELEV#<part> / <requestedAt>#<complemented id>#<flowType> (list indexes, read descending;
//	                    part LIVE for pending, approved, auto_approved and actuating, else the final status: denied, expired, revoked)
//	                    ttl: PAM_REQUEST_RETENTION_DAYS after it became denied, expired or revoked
//	PAM rule            ORG#<oid> / PAM#RULE#<id>            PAMREF#<id> / RULE      -
//	signer group        ORG#<oid> / PAM#SG#<id>              PAMREF#<id> / SG        -
//	software policy     ORG#<oid> / PAM#SWP#<id>             PAMREF#<id> / SWP       -
//	PAM config          ORG#<oid> / PAM#CONFIG               -                       -
//	policies version    ORG#<oid> / PAM#!VERSION             -                       - (counter v: every change of the PAM# rows adds one, engine.go's chain cache)
//	policy settings     ORG#<oid> / PAMSET (organization, site, group, device levels in maps)
//	                    PARTNER#<pid> / PAMSET (partner level)
//
// Elevation request ids are UUID version 7 stamped from the injected clock,
// so the ELEV# sort keys of an organization are in requestedAt order: the list
// bounds `from`/`to` and the rule preview's window become sort-key ranges.
// The nn of the GSI2 partitions is a hash of the id over 16 shards.
//
// Each request sits in the list partitions of its status's part (per
// organization in GSI4, per partner in GSI3): LIVE holds the requests the
// sweeper expires within a day at most (pending, approved, auto_approved,
// actuating), so it never fills with history, and each final status has its
// own part, which history fills. A move into a final status moves the request
// in the same write, and the write that makes it final (denied,
// expired, revoked) sets its ttl. Rows written before the lists had an index
// get their keys from the list-index backfill (Reindex, shared/backfill).
//
// Access patterns: the decision chain at ingest reads every PAM# row of the
// organization with one Query (rules, signer groups, software policies and
// config together); GET /pam/elevation-requests reads one page through
// tenant.List (newest first, ties by id; a cursor reads a deep page at the
// cost of page 1; never counted: the total is exact on the list's last page,
// else a lower bound):
//
//	filter                                 reads
//	status denied, expired or revoked      that status's partition: one page (store.Window)
//	status pending, approved, ...          the LIVE partition, the other live statuses dropped on its index rows:
//	                                       bounded by the live requests, never by history
//	no status                              the four partitions side by side, merged (store.Merge): one Query each
//	flowType, deviceId, siteId, from, to   on the index rows of the partition(s) above, before any item is read
//	                                       (flowType and requestedAt from the sort key): a page reads index rows
//	                                       (about 0.4 KB each, 256 a call once one was dropped) until it fills, so
//	                                       its cost follows the requests the filter skips (with a status, of that
//	                                       status only), never the items
//
// A partner caller without orgId reads the partner's partitions, a system
// caller every partner's and each partnerless organization's (tenant.List).
// GET /pam/active reads the LIVE partition (at most 500 unexpired approved,
// auto_approved or actuating requests, then sorted by expiresAt): bounded by
// the live requests;
// the rule preview reads the organization's ELEV# range of its window; one request, rule, signer group or software policy by id is a GetItem
// for organization callers and a GSI1 query otherwise; the sweeper queries the
// 16 ELEVEXP shards up to now and the 16 ELEVPEND shards up to now minus the
// pending TTL, reading only what it expires; the effective policy setting of a
// device is one BatchGetItem of its organization's and partner's PAMSET rows.
package pam

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Elevation request statuses.
const (
	StatusPending      = "pending"
	StatusApproved     = "approved"
	StatusAutoApproved = "auto_approved"
	StatusDenied       = "denied"
	StatusExpired      = "expired"
	StatusRevoked      = "revoked"
	StatusActuating    = "actuating"
)

// Statuses lists every status.
var Statuses = []string{StatusPending, StatusApproved, StatusAutoApproved, StatusDenied, StatusExpired, StatusRevoked, StatusActuating}

// Flow types.
const (
	FlowUAC      = "uac_intercept"
	FlowTechJIT  = "tech_jit_admin"
	FlowAIAction = "ai_tool_action"
)

// FlowTypes lists every flow type.
var FlowTypes = []string{FlowUAC, FlowTechJIT, FlowAIAction}

// Decision sources.
const (
	SourceSoftwarePolicy = "software_policy"
	SourceRule           = "pam_rule"
	SourceHuman          = "human"
	SourceDefault        = "default"
)

// Verdicts.
const (
	VerdictAutoApprove     = "auto_approve"
	VerdictAutoDeny        = "auto_deny"
	VerdictRequireApproval = "require_approval"
	VerdictIgnore          = "ignore"
)

// Limits of the spec.
const (
	MaxReason          = 2000
	DefaultPriority    = 100
	MaxPriority        = 100000
	MaxName            = 255
	MaxDescription     = 2000
	MaxSigners         = 500
	MaxSigner          = 255
	DefaultDuration    = 15
	MaxDuration        = 1440
	MaxActive          = 500
	PreviewMaxScan     = 5000
	PreviewMaxSamples  = 10
	AllowlistMinutes   = 15
	MaxSoftwareEntries = 500
	shards             = 16
)

// Request is a stored elevation request. DeviceHostname and SiteName are
// filled when it is read (they follow the device and the site).
type Request struct {
	store.Keys
	ID                     string   `dynamodbav:"id" json:"id"`
	OrgID                  string   `dynamodbav:"orgId" json:"orgId"`
	PartnerID              string   `dynamodbav:"partnerId,omitempty" json:"-"`
	DeviceID               string   `dynamodbav:"deviceId" json:"deviceId"`
	DeviceHostname         string   `dynamodbav:"-" json:"deviceHostname"`
	SiteID                 *string  `dynamodbav:"siteId,omitempty" json:"siteId"`
	SiteName               *string  `dynamodbav:"-" json:"siteName"`
	GroupIDs               []string `dynamodbav:"groupIds,omitempty" json:"-"`
	FlowType               string   `dynamodbav:"flowType" json:"flowType"`
	Status                 string   `dynamodbav:"status" json:"status"`
	SubjectUsername        string   `dynamodbav:"subjectUsername" json:"subjectUsername"`
	TargetExecutablePath   string   `dynamodbav:"targetExecutablePath" json:"targetExecutablePath"`
	TargetExecutableSigner string   `dynamodbav:"targetExecutableSigner" json:"targetExecutableSigner"`
	TargetExecutableHash   string   `dynamodbav:"targetExecutableHash,omitempty" json:"targetExecutableHash,omitempty"`
	ParentImage            string   `dynamodbav:"parentImage,omitempty" json:"parentImage,omitempty"`
	CommandLine            string   `dynamodbav:"commandLine,omitempty" json:"commandLine,omitempty"`
	PID                    *int64   `dynamodbav:"pid,omitempty" json:"pid,omitempty"`
	ObservedAt             string   `dynamodbav:"observedAt,omitempty" json:"observedAt,omitempty"`
	RequestedAt            string   `dynamodbav:"requestedAt" json:"requestedAt"`
	ExpiresAt              *string  `dynamodbav:"expiresAt" json:"expiresAt"`
	ApprovedByName         *string  `dynamodbav:"approvedByName" json:"approvedByName"`
	DeniedByName           *string  `dynamodbav:"deniedByName" json:"deniedByName"`
	RevokedByName          *string  `dynamodbav:"revokedByName" json:"revokedByName"`
	DecidedBy              string   `dynamodbav:"decidedBy,omitempty" json:"-"`
	Reason                 *string  `dynamodbav:"reason,omitempty" json:"reason,omitempty"`
	RevokeReason           *string  `dynamodbav:"revokeReason,omitempty" json:"revokeReason,omitempty"`
	MatchedPolicyName      *string  `dynamodbav:"matchedPolicyName" json:"matchedPolicyName"`
	PamRuleID              *string  `dynamodbav:"pamRuleId" json:"pamRuleId"`
	PamRuleName            *string  `dynamodbav:"pamRuleName" json:"pamRuleName"`
	DecisionSource         *string  `dynamodbav:"decisionSource" json:"decisionSource"`
	ToolName               *string  `dynamodbav:"toolName,omitempty" json:"toolName,omitempty"`
	RiskTier               *int     `dynamodbav:"riskTier,omitempty" json:"riskTier,omitempty"`
	ActionDigest           *string  `dynamodbav:"actionDigest,omitempty" json:"actionDigest,omitempty"`
	CommandID              *string  `dynamodbav:"commandId,omitempty" json:"commandId,omitempty"`
	UpdatedAt              string   `dynamodbav:"updatedAt" json:"updatedAt"`
	// MobileApprovals counts the mobile approval requests sent for it
	// (shared/push adds them in the transaction of their rows), so that a
	// decision looks for them only when there are some.
	MobileApprovals int `dynamodbav:"mobileApprovals,omitempty" json:"-"`
}

// Owner is the organization the request belongs to.
func (r *Request) Owner() authz.Org { return authz.Org{ID: r.OrgID, PartnerID: r.PartnerID} }

func (r *Request) site() string {
	if r.SiteID == nil {
		return ""
	}
	return *r.SiteID
}

// TimeWindow is a rule's active window.
type TimeWindow struct {
	Start    string `dynamodbav:"start" json:"start"`
	End      string `dynamodbav:"end" json:"end"`
	Days     []int  `dynamodbav:"days,omitempty" json:"days,omitempty"`
	Timezone string `dynamodbav:"timezone,omitempty" json:"timezone,omitempty"`
}

// Rule is a stored PAM rule.
type Rule struct {
	store.Keys
	ID                      string      `dynamodbav:"id" json:"id"`
	OrgID                   string      `dynamodbav:"orgId" json:"orgId"`
	PartnerID               string      `dynamodbav:"partnerId,omitempty" json:"-"`
	Name                    string      `dynamodbav:"name" json:"name"`
	Verdict                 string      `dynamodbav:"verdict" json:"verdict"`
	Priority                int         `dynamodbav:"priority" json:"priority"`
	Enabled                 bool        `dynamodbav:"enabled" json:"enabled"`
	SiteID                  *string     `dynamodbav:"siteId" json:"siteId"`
	MatchSigner             *string     `dynamodbav:"matchSigner" json:"matchSigner"`
	MatchSignerGroupID      *string     `dynamodbav:"matchSignerGroupId" json:"matchSignerGroupId"`
	MatchHash               *string     `dynamodbav:"matchHash" json:"matchHash"`
	MatchPathGlob           *string     `dynamodbav:"matchPathGlob" json:"matchPathGlob"`
	MatchParentImage        *string     `dynamodbav:"matchParentImage" json:"matchParentImage"`
	MatchCommandLine        *string     `dynamodbav:"matchCommandLine" json:"matchCommandLine"`
	MatchUser               *string     `dynamodbav:"matchUser" json:"matchUser"`
	MatchAdGroup            *string     `dynamodbav:"matchAdGroup" json:"matchAdGroup"`
	MatchToolName           *string     `dynamodbav:"matchToolName" json:"matchToolName"`
	MatchRiskTier           *int        `dynamodbav:"matchRiskTier" json:"matchRiskTier"`
	MatchNegate             []string    `dynamodbav:"matchNegate" json:"matchNegate"`
	TimeWindow              *TimeWindow `dynamodbav:"timeWindow" json:"timeWindow"`
	ApprovalDurationMinutes *int        `dynamodbav:"approvalDurationMinutes" json:"approvalDurationMinutes"`
	CreatedBy               string      `dynamodbav:"createdBy" json:"createdBy"`
	UpdatedBy               string      `dynamodbav:"updatedBy" json:"updatedBy"`
	// CreatedByEmail and UpdatedByEmail feed separation of duties.
	CreatedByEmail string `dynamodbav:"createdByEmail,omitempty" json:"-"`
	UpdatedByEmail string `dynamodbav:"updatedByEmail,omitempty" json:"-"`
	CreatedAt      string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt      string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Owner is the organization the rule belongs to.
func (r *Rule) Owner() authz.Org { return authz.Org{ID: r.OrgID, PartnerID: r.PartnerID} }

// RuleKeys are the keys of rule id of orgID.
func RuleKeys(orgID, id string) store.Keys {
	return policyKeys("RULE", orgID, id)
}

// SignerGroup is a stored signer group.
type SignerGroup struct {
	store.Keys
	ID          string   `dynamodbav:"id" json:"id"`
	OrgID       string   `dynamodbav:"orgId" json:"orgId"`
	PartnerID   string   `dynamodbav:"partnerId,omitempty" json:"-"`
	Name        string   `dynamodbav:"name" json:"name"`
	Description *string  `dynamodbav:"description" json:"description"`
	Signers     []string `dynamodbav:"signers" json:"signers"`
	// CreatedBy and UpdatedBy (user ids, e-mails kept for separation of
	// duties): an auto_approve rule referencing the group never decides a
	// request of either. Groups stored before they were recorded have none.
	CreatedBy      string `dynamodbav:"createdBy" json:"createdBy"`
	UpdatedBy      string `dynamodbav:"updatedBy" json:"updatedBy"`
	CreatedByEmail string `dynamodbav:"createdByEmail,omitempty" json:"-"`
	UpdatedByEmail string `dynamodbav:"updatedByEmail,omitempty" json:"-"`
	CreatedAt      string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt      string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Owner is the organization the group belongs to.
func (g *SignerGroup) Owner() authz.Org { return authz.Org{ID: g.OrgID, PartnerID: g.PartnerID} }

// SignerGroupKeys are the keys of signer group id of orgID.
func SignerGroupKeys(orgID, id string) store.Keys {
	return policyKeys("SG", orgID, id)
}

// Executable is one entry of a software policy.
type Executable struct {
	Hash     *string `dynamodbav:"hash,omitempty" json:"hash,omitempty"`
	Signer   *string `dynamodbav:"signer,omitempty" json:"signer,omitempty"`
	PathGlob *string `dynamodbav:"pathGlob,omitempty" json:"pathGlob,omitempty"`
}

// SoftwarePolicy is a stored software policy (the decision chain's bridge).
type SoftwarePolicy struct {
	store.Keys
	ID             string       `dynamodbav:"id" json:"id"`
	OrgID          string       `dynamodbav:"orgId" json:"orgId"`
	PartnerID      string       `dynamodbav:"partnerId,omitempty" json:"-"`
	Name           string       `dynamodbav:"name" json:"name"`
	Mode           string       `dynamodbav:"mode" json:"mode"`
	Priority       int          `dynamodbav:"priority" json:"priority"`
	Enabled        bool         `dynamodbav:"enabled" json:"enabled"`
	Executables    []Executable `dynamodbav:"executables" json:"executables"`
	CreatedBy      string       `dynamodbav:"createdBy" json:"createdBy"`
	UpdatedBy      string       `dynamodbav:"updatedBy" json:"updatedBy"`
	CreatedByEmail string       `dynamodbav:"createdByEmail,omitempty" json:"-"`
	UpdatedByEmail string       `dynamodbav:"updatedByEmail,omitempty" json:"-"`
	CreatedAt      string       `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt      string       `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Owner is the organization the policy belongs to.
func (s *SoftwarePolicy) Owner() authz.Org { return authz.Org{ID: s.OrgID, PartnerID: s.PartnerID} }

// SoftwarePolicyKeys are the keys of software policy id of orgID.
func SoftwarePolicyKeys(orgID, id string) store.Keys {
	return policyKeys("SWP", orgID, id)
}

// Config is an organization's PAM config.
type Config struct {
	store.Keys
	OrgID                   string `dynamodbav:"orgId" json:"orgId"`
	DefaultUnmatchedVerdict string `dynamodbav:"defaultUnmatchedVerdict" json:"defaultUnmatchedVerdict"`
	UpdatedAt               string `dynamodbav:"updatedAt,omitempty" json:"-"`
}

// ConfigKeys are the keys of orgID's config.
func ConfigKeys(orgID string) store.Keys { return store.Keys{PK: store.OrgPK(orgID), SK: "PAM#CONFIG"} }

// Settings is a PAMSET row: the `pam` feature's uacInterceptionEnabled per
// level. The partner row uses Value only; the organization row uses Value for
// the organization level and the maps for sites, groups and devices.
type Settings struct {
	store.Keys
	Value   *bool           `dynamodbav:"value,omitempty"`
	Sites   map[string]bool `dynamodbav:"sites,omitempty"`
	Groups  map[string]bool `dynamodbav:"groups,omitempty"`
	Devices map[string]bool `dynamodbav:"devices,omitempty"`
}

// OrgSettingsKey and PartnerSettingsKey name the PAMSET rows.
func OrgSettingsKey(orgID string) store.KeyRef {
	return store.KeyRef{PK: store.OrgPK(orgID), SK: "PAMSET"}
}

// PartnerSettingsKey names a partner's PAMSET row.
func PartnerSettingsKey(partnerID string) store.KeyRef {
	return store.KeyRef{PK: store.PartnerPK(partnerID), SK: "PAMSET"}
}
