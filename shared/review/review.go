// Package review owns access reviews (/api/v1/access-reviews): a periodic
// audit of every user-role assignment of one tenant, whose revoked entries are
// removed from the tenant when the review is completed.
//
// # Scope
//
// The scope comes from the caller's authentication: a partner-scoped session
// (or key) reviews the partner's own memberships, an organization-scoped one
// the organization's. System scope is refused (403 `Partner or organization
// context required`), and so are partner users whose organization access is
// not "all" (403 `Full partner organization access required`). Another
// tenant's review or item is 404 `Access review not found`: every read names
// the caller's tenant in its key, so no id reaches across. Bearer JWT or API
// key (users:read to read, users:write to change); no MFA
// (docs/decisions.md#access-reviews).
//
// # States
//
//	review   (none) -create-> pending -first item update-> in_progress -complete-> completed
//	item     pending | approved | revoked, any to any by PATCH until the review completes
//
// A completed review is immutable: item updates answer 400 `Cannot modify
// completed review`, a second completion 400 `Review is already completed`;
// completion with a pending item is 400 `Cannot complete review with pending
// items`. Revoking an item needs every permission of its role (the rule of
// shared/user: nobody acts above their level).
//
// # Completion beyond one transaction
//
// DynamoDB takes at most 100 writes in a transaction, and a review may revoke
// hundreds of users, so completion is a durable, resumable sequence:
//
//  1. Freeze: one conditional write sets the review's completing marker
//     (completingAt, completingBy) on condition that the review's version is
//     the one read with its items, none of which is pending. Every item update
//     moves the version in the same transaction, so no decision can slip in
//     between the check and the marker. From here on the decisions are fixed:
//     item updates are refused as for a completed review.
//  2. Apply: for each revoked item not yet applied, the user is removed from
//     the review's tenant (membership deleted, the API keys the user created
//     there revoked, every session and token ended; the MemberRemover is
//     idempotent), then the item is marked applied (conditional on not being
//     applied). A tenant's last administrator is kept (shared/user's rule):
//     the item is applied as kept (skipped) and not counted in revokedCount. A crash anywhere leaves a state from which the same steps,
//     run again, finish the work and never undo or repeat it.
//  3. Finish: one transaction moves the review to completed (condition: still
//     completing), with completedAt, revokedCount and the access_review.complete
//     audit record.
//
// A review carrying the marker shows status in_progress until it finishes. A
// second POST .../complete resumes it, and the sweeper's access-review-completion
// job resumes any review whose marker is older than StaleAfter (GSI2
// REVIEWCOMPLETING). Of concurrent completions exactly one answers 200; the
// others answer 400 `Review is already completed`.
//
// # Rows
//
//	entity   PK / SK                                   GSI2PK / GSI2SK
//	review   ORG#<oid> | PARTNER#<pid> / REVIEW#<id>    REVIEWCOMPLETING / <completingAt>#<tenant>#<id> (while completing)
//	item     REVIEW#<id> / ITEM#<itemId>               -
//
// Access patterns: the reviews of a tenant are a prefix query of its
// partition; a review is a GetItem in the caller's tenant; its items are one
// query of REVIEW#<id>; the sweeper finds stalled completions in GSI2.
//
// # Reads and writes
//
// After authentication (budgets: docs/budgets.md, from tests/fixture/budgets.go): the list reads a query
// and the profiles; create reads the members and the reviewer's profile and
// writes the items in transactions of 100, the review and audit in the last;
// detail reads the review and its items, the profiles (per 100 users) and
// custom roles; an item update reads review and item in one BatchGetItem and
// writes one transaction (a custom role's permissions add its reads on
// revoke); complete reads and writes the review, two more per revoked user,
// and what user.Service.RemoveMembership does for each, so it scales with the
// review's items.
package review

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Status of a review.
type Status string

const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
)

// Decision of an item.
type Decision string

const (
	DecisionPending  Decision = "pending"
	DecisionApproved Decision = "approved"
	DecisionRevoked  Decision = "revoked"
)

// Bounds.
const (
	MaxName        = 255
	MaxDescription = 2000
	MaxNotes       = 2000
)

// Review is a stored access review.
type Review struct {
	store.Keys
	ID          string      `dynamodbav:"id"`
	Scope       authz.Scope `dynamodbav:"scope"`
	PartnerID   string      `dynamodbav:"partnerId,omitempty"`
	OrgID       string      `dynamodbav:"orgId,omitempty"`
	Name        string      `dynamodbav:"name"`
	Description *string     `dynamodbav:"description"`
	Status      Status      `dynamodbav:"status"`
	ReviewerID  string      `dynamodbav:"reviewerId"`
	DueDate     *string     `dynamodbav:"dueDate"`
	ItemCount   int         `dynamodbav:"itemCount"`
	CreatedBy   string      `dynamodbav:"createdBy"`
	CreatedAt   string      `dynamodbav:"createdAt"`
	UpdatedAt   string      `dynamodbav:"updatedAt"`
	CompletedAt *string     `dynamodbav:"completedAt"`
	// CompletingAt and CompletingBy are the durable completion marker.
	CompletingAt string `dynamodbav:"completingAt,omitempty"`
	CompletingBy string `dynamodbav:"completingBy,omitempty"`
	RevokedCount int    `dynamodbav:"revokedCount"`
	// Version moves with every item decision (compare-and-swap of completion).
	Version int `dynamodbav:"version"`
}

// Completing reports whether the completion marker is set.
func (r *Review) Completing() bool { return r.CompletingAt != "" && r.Status != StatusCompleted }

// Item is one user-role mapping under review.
type Item struct {
	store.Keys
	ID         string   `dynamodbav:"id"`
	ReviewID   string   `dynamodbav:"reviewId"`
	UserID     string   `dynamodbav:"userId"`
	RoleID     string   `dynamodbav:"roleId"`
	MemberID   string   `dynamodbav:"memberId"` // the membership's own id when the review was created
	Decision   Decision `dynamodbav:"decision"`
	Notes      *string  `dynamodbav:"notes"`
	ReviewedAt *string  `dynamodbav:"reviewedAt"`
	ReviewedBy *string  `dynamodbav:"reviewedBy"`
	CreatedAt  string   `dynamodbav:"createdAt"`
	AppliedAt  string   `dynamodbav:"appliedAt,omitempty"`
	// Skipped says why an applied revocation removed nobody (last_administrator,
	// or role_changed for a member re-roled after the decision).
	Skipped string `dynamodbav:"skipped,omitempty"`
	// Version moves with every decision (compare-and-swap).
	Version int `dynamodbav:"version"`
}

// tenantPK is the partition of a tenant's reviews.
func tenantPK(scope authz.Scope, partnerID, orgID string) string {
	if scope == authz.ScopeOrg {
		return store.OrgPK(orgID)
	}
	return store.PartnerPK(partnerID)
}

func reviewKeys(scope authz.Scope, partnerID, orgID, id string) store.Keys {
	return store.Keys{PK: tenantPK(scope, partnerID, orgID), SK: "REVIEW#" + id}
}

func itemKeys(reviewID, id string) store.Keys {
	return store.Keys{PK: "REVIEW#" + reviewID, SK: "ITEM#" + id}
}

const completingIndex = "REVIEWCOMPLETING"
