// Package push owns the mobile side of PAM approvals: the push targets a user
// registers for their own phones (POST /api/v1/users/me/push-targets) and the
// mobile approval requests a pending elevation request fans out to eligible
// approvers (docs/decisions.md#mobile-approval-requests).
//
// # Push targets
//
// A target is {platform: apns|fcm, token}. A user's targets live in one row,
// so that the fan-out reads the profile and the targets of every candidate in
// one BatchGetItem; a token is owned by one user at a time, by a guard row
// written in the same transaction: when a second account registers a token
// (the phone changed hands, or its owner signed in as someone else), the token
// moves to that account and leaves the first one's row, so an approval request
// never reaches a phone its approver no longer holds. A user has at most
// MaxTargets targets; registering one more drops the least recently
// registered. Tokens are never returned by the API.
//
// # Mobile approval requests
//
// When agent ingest records a pending elevation request, its
// elevation.requested event (in the outbox, written in the ingest's
// transaction) queues the fan-out: the webhook-worker consumes the event
// (Fanout.OnEvent, with the events queue's retries and dead-letter queue;
// a redelivery writes no row twice) and Fanout.FanOut finds the eligible
// approvers and writes one approval row per approver and one push message per
// target of theirs on the mail queue (shared/notify; the mailer delivers it
// through SNS mobile push). Eligible: an active account with an active
// membership of the request's organization, or of its partner reaching that
// organization (orgAccess all, or selected naming it), whose role chain holds
// devices:execute, whose site and device-group restrictions cover the
// request's device, who is not the request's subject (pam.IsSubject, the rule
// of self-approval), and who registered at least one push target. System-scope
// accounts are platform operators, not the organization's technicians: they
// are not notified. An approval row lives MobileLifetime (15 minutes; state
// expired past expiresAt, and the row's ttl removes it a day later); the first
// decision on the elevation request (respond, or the sweeper's expiry) moves
// the pending siblings to expired (the decider's own row to decided)
// (Fanout.Decided, pam.Service.Decided). The approval itself is the ordinary
// POST /pam/elevation-requests/:id/respond, which authorizes the approver again:
// a push message grants nothing.
//
// The push message names no executable, user or device (lock screens show it):
// its text is fixed and its data carries the elevation request id, the
// approval id, the organization id and expiresAt.
//
// # Rows
//
//	entity            PK / SK                                  notes
//	push targets      USER#<uid> / PUSHTARGETS                 targets[], version (compare-and-swap)
//	token guard       PUSHTOKEN#<sha256(platform:token)> / PUSHTOKEN   userId, targetId
//	mobile approval   ORG#<oid> / MAPPR#<elevation id>#<uid>   status pending|expired|decided, expiresAt, ttl
//
// # Reads and writes
//
// What each route and step reads and writes (budgets: docs/budgets.md, from tests/fixture/budgets.go):
//
//	POST   /users/me/push-targets        BatchGetItem own row + guard, transaction; + GetItem when the token moves from another account
//	GET    /users/me/push-targets        GetItem
//	DELETE /users/me/push-targets/:id    GetItem, transaction
//	fan-out                              Query of the organization's members, Query of the partner's members,
//	                                     BatchGetItem of profiles and target rows (one per 50 candidates), one
//	                                     TransactWriteItems per 99 approval rows (with the request's
//	                                     mobileApprovals count, conditioned on pending); + one GetItem per custom
//	                                     role of a candidate's chain (system roles: none)
//	decision                             nothing when the request has no mobile approvals (mobileApprovals 0); else
//	                                     a Query of its approval rows and a TransactWriteItems per 100 pending rows
package push

import (
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Platforms.
const (
	PlatformAPNS = "apns"
	PlatformFCM  = "fcm"
)

// MaxTargets is the number of push targets one user keeps.
const MaxTargets = 10

// MobileLifetime is the life of a mobile approval request.
const MobileLifetime = 15 * time.Minute

// Approval statuses.
const (
	StatusPending = "pending"
	StatusExpired = "expired"
	StatusDecided = "decided"
)

// Target is one registered push target.
type Target struct {
	ID        string `dynamodbav:"id" json:"id"`
	Platform  string `dynamodbav:"platform" json:"platform"`
	Token     string `dynamodbav:"token" json:"-"`
	CreatedAt string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Targets is a user's row of push targets.
type Targets struct {
	store.Keys
	UserID  string   `dynamodbav:"userId"`
	Targets []Target `dynamodbav:"targets"`
	Version int      `dynamodbav:"version"`
}

// guard holds a token for one user.
type guard struct {
	store.Keys
	UserID   string `dynamodbav:"userId"`
	TargetID string `dynamodbav:"targetId"`
}

// Approval is one mobile approval request: an approver asked to decide an
// elevation request from their phone.
type Approval struct {
	store.Keys
	ID                 string `dynamodbav:"id" json:"id"`
	OrgID              string `dynamodbav:"orgId" json:"orgId"`
	ElevationRequestID string `dynamodbav:"elevationRequestId" json:"elevationRequestId"`
	UserID             string `dynamodbav:"userId" json:"userId"`
	Status             string `dynamodbav:"status" json:"status"`
	Targets            int    `dynamodbav:"targets" json:"targets"`
	CreatedAt          string `dynamodbav:"createdAt" json:"createdAt"`
	ExpiresAt          string `dynamodbav:"expiresAt" json:"expiresAt"`
	ClosedAt           string `dynamodbav:"closedAt,omitempty" json:"closedAt,omitempty"`
}

// TargetsKey is the key of a user's push-target row.
func TargetsKey(userID string) store.KeyRef {
	return user.Key(userID, "PUSHTARGETS")
}

// tokenHash names a token's guard without storing the token in a key.
func tokenHash(platform, token string) string {
	h := sha256.Sum256([]byte(platform + ":" + token))
	return hex.EncodeToString(h[:])
}

func guardKey(platform, token string) store.KeyRef {
	return store.KeyRef{PK: "PUSHTOKEN#" + tokenHash(platform, token), SK: "PUSHTOKEN"}
}

// ApprovalKeys are the keys of the approval of elevation request reqID to user
// userID in organization orgID.
func ApprovalKeys(orgID, reqID, userID string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: approvalPrefix(reqID) + userID}
}

func approvalPrefix(reqID string) string { return "MAPPR#" + reqID + "#" }
