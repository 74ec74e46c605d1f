// Package deletion owns account deletion requests: a user asks for their
// account to be deleted (/api/v1/auth/account-deletion-request), tenant or
// system administrators decide (/admin/account-deletion-requests, also under
// /api/v1/admin), and the sweeper's deletion-grace job carries the deletion
// out.
//
// # States
//
//	(none)     -POST (password + MFA, none open)-> pending
//	pending    -PATCH status cancelled (the requester)-> cancelled
//	pending    -process approve (holds the whole account)-> processing
//	pending    -process reject (adminNote)-> cancelled (the note e-mailed to the user)
//	pending    -processBy passed (sweeper)-> completed
//	processing -sweeper-> completed
//
// At most one open (pending or processing) request per user: a guard row
// written with the request (PutNew) makes a second one 409 `Deletion request
// already pending`, with the open request's id in details.requestId. Every
// transition is compare-and-swap on the request's version.
//
// # Who decides
//
// Administrators (users:write + MFA, unrestricted) of a tenant the requester
// belonged to when asking see the request; system administrators see all. An
// approval by an administrator whose tenant holds every membership of the
// account (as shared/user decides account-wide changes) moves the request to
// processing. An approval by an administrator of only one of the account's
// tenants removes only that tenant's memberships (the MemberRemover: the
// user's API keys there stop, sessions end), records the tenant in
// removedFrom and leaves the request pending for the account's other tenants.
// Audit: user.account_deletion.requested (also denied attempts, e.g. a wrong
// password), user.account_deletion.cancelled, user.account_deletion.approved,
// user.account_deletion.rejected (with the note), user.account_deletion.completed.
//
// # Carrying out (the sweeper, idempotent)
//
// For each request past processBy still pending, and each processing one: every
// membership is removed (MemberRemover), every other row of the account's
// partition (sessions, passkeys, invitations, reset and MFA setup rows) is
// deleted, the profile is anonymised (name "Deleted user", e-mail
// deleted-<id>@deleted.invalid, password, MFA secret, recovery codes, phone and
// avatar removed, status disabled, every token ended) and its e-mail guard
// released, and finally one transaction marks the request completed (with the
// requester's name and e-mail on it anonymised) and releases the open-request
// guard. Each step is idempotent, so a run that stops anywhere is finished by
// the next one, and a second run over finished work does nothing.
//
// # Rows
//
//	entity         PK / SK                             GSI1PK / GSI1SK                       GSI2PK / GSI2SK
//	request        DELREQ#<id> / DELREQ                DELREQDUE#<status> / <processBy>#<id>  DELREQS / <requestedAt>#<id>
//	open guard     USER#<uid> / DELREQ#OPEN            -                                     -
//	tenant index   DELREQS#<ORG#oid|PARTNER#pid> / <requestedAt>#<id>   -                       -
//
// GSI1 holds only open requests (pending, processing): the sweeper's due
// query. A tenant's administrators list through its index rows (one query and
// one BatchGetItem of the requests); system administrators through GSI2.
package deletion

import (
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Status of a request.
type Status string

const (
	StatusPending    Status = "pending"
	StatusProcessing Status = "processing"
	StatusCompleted  Status = "completed"
	StatusCancelled  Status = "cancelled"
)

// Bounds.
const (
	MaxReason    = 2000
	MaxAdminNote = 2000
	// Grace is the time between a request and its deletion (processBy).
	Grace = 30 * 24 * 60 * 60 // seconds
)

// Request is a stored account deletion request.
type Request struct {
	store.Keys
	ID          string   `dynamodbav:"id"`
	UserID      string   `dynamodbav:"userId"`
	UserEmail   string   `dynamodbav:"userEmail"`
	UserName    string   `dynamodbav:"userName"`
	OrgID       *string  `dynamodbav:"orgId"`
	Reason      *string  `dynamodbav:"reason"`
	Status      Status   `dynamodbav:"status"`
	RequestedAt string   `dynamodbav:"requestedAt"`
	ProcessBy   string   `dynamodbav:"processBy"`
	ProcessedAt *string  `dynamodbav:"processedAt"`
	ProcessedBy *string  `dynamodbav:"processedBy"`
	AdminNote   *string  `dynamodbav:"adminNote"`
	Tenants     []string `dynamodbav:"tenants,omitempty"`  // ORG#<oid> / PARTNER#<pid> of the requester when asking
	Partners    []string `dynamodbav:"partners,omitempty"` // partners reaching those tenants
	RemovedFrom []string `dynamodbav:"removedFrom,omitempty"`
	CompletedAt *string  `dynamodbav:"completedAt"`
	CreatedAt   string   `dynamodbav:"createdAt"`
	UpdatedAt   string   `dynamodbav:"updatedAt"`
	Version     int      `dynamodbav:"version"`
}

// View is a request as the routes show it.
type View struct {
	ID          string   `json:"id"`
	UserID      string   `json:"userId"`
	UserEmail   string   `json:"userEmail,omitempty"`
	UserName    string   `json:"userName,omitempty"`
	OrgID       *string  `json:"orgId"`
	Reason      *string  `json:"reason"`
	Status      Status   `json:"status"`
	RequestedAt string   `json:"requestedAt"`
	ProcessBy   string   `json:"processBy"`
	ProcessedAt *string  `json:"processedAt"`
	ProcessedBy *string  `json:"processedBy"`
	AdminNote   *string  `json:"adminNote"`
	RemovedFrom []string `json:"removedFrom,omitempty"`
	CreatedAt   string   `json:"createdAt"`
	UpdatedAt   string   `json:"updatedAt"`
}

func (r *Request) view(admin bool) View {
	v := View{ID: r.ID, UserID: r.UserID, OrgID: r.OrgID, Reason: r.Reason, Status: r.Status, RequestedAt: r.RequestedAt,
		ProcessBy: r.ProcessBy, ProcessedAt: r.ProcessedAt, ProcessedBy: r.ProcessedBy, AdminNote: r.AdminNote,
		CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt}
	if admin {
		v.UserEmail, v.UserName, v.RemovedFrom = r.UserEmail, r.UserName, r.RemovedFrom
	}
	return v
}

func requestKeys(id string) store.KeyRef { return store.KeyRef{PK: "DELREQ#" + id, SK: "DELREQ"} }

func openKey(userID string) store.KeyRef {
	return user.Key(userID, "DELREQ#OPEN")
}

func dueIndex(s Status) string { return "DELREQDUE#" + string(s) }

// openGuard is the one-open-request-per-user row.
type openGuard struct {
	store.Keys
	RequestID string `dynamodbav:"requestId"`
}

// tenantRow lists a request under a tenant.
type tenantRow struct {
	store.Keys
	RequestID string `dynamodbav:"requestId"`
}
