package routes

import (
	"slices"

	"github.com/gale-rmm/gale/shared/store/tenantkey"
)

// Needs is what one function may touch: the CDK app grants its role exactly
// this (infra/cdk), and in production shared/config refuses to start a function
// whose needed secrets are missing. It is written once, here, beside the route
// table, so the two cannot drift.
//
// A function without an entry in FunctionNeeds gets DefaultNeeds (an HTTP
// route group: read-write table, send platform events, verify tokens) or
// WorkerNeeds (nothing). Give a new group an entry as soon as it needs less or
// more, e.g. e-mail (mail queue), sealed secrets (SecretEncryption) or issuing
// tokens (SecretTokenSigning).
type Needs struct {
	// Table is the function's access to the single table.
	Table TableAccess
	// WriteKeys, when set, limits the function's writes (PutItem, UpdateItem,
	// DeleteItem) to items whose partition key starts with one of these
	// prefixes (an IAM dynamodb:LeadingKeys condition). Empty: any item.
	WriteKeys []string
	// Send lists the queues the function sends to: a Queues name, or
	// DLQ(name) for its dead-letter queue.
	Send []string
	// Receive lists the queues the function reads and deletes from outside an
	// event source mapping (the mapping grants its own queue).
	Receive []string
	// Inspect lists the queues whose attributes the function reads (health).
	Inspect []string
	// Secrets the function reads; SecretTokenPublicKeys is written too by the
	// functions that hold SecretTokenSigning (they publish their public keys).
	Secrets []Secret
	// Notify lets the function send e-mail (SES) and SMS (SNS).
	Notify bool
	// Channel lets the function post to and close agent connections
	// (execute-api:ManageConnections on the agent channel's WebSocket API
	// only; shared/channel) and tells it the Management API endpoint.
	Channel bool
}

// TableAccess is a level of access to the single table.
type TableAccess int

// Table access levels. Transactions need no action of their own: each item of
// a TransactWriteItems is authorised as its PutItem, UpdateItem, DeleteItem or
// ConditionCheckItem.
const (
	// TableNone: no access.
	TableNone TableAccess = iota
	// TableDescribe: DescribeTable only (the health check).
	TableDescribe
	// TableRead: GetItem, BatchGetItem, Query (table and indexes), ConditionCheckItem.
	TableRead
	// TableReadWrite: TableRead plus PutItem, UpdateItem, DeleteItem.
	TableReadWrite
)

// Secret names one Secrets Manager secret by purpose (shared/config reads each
// from its own ARN variable).
type Secret string

// Secrets by purpose.
const (
	// SecretTokenSigning: the Ed25519 seeds that sign access tokens. Only the
	// functions that issue tokens (TokenIssuers) read it.
	SecretTokenSigning Secret = "token-signing"
	// SecretTokenPublicKeys: the published public keys (a JWKS document).
	SecretTokenPublicKeys Secret = "token-public-keys"
	// SecretEncryption: the key sealing TOTP seeds, webhook and SSO secrets.
	SecretEncryption Secret = "encryption"
	// SecretEnrollmentPepper: the pepper of enrollment-key hashes.
	SecretEnrollmentPepper Secret = "enrollment-pepper"
	// SecretAdminPassword: the bootstrap administrator's first password (the
	// sweeper's bootstrap job only).
	SecretAdminPassword Secret = "admin-password"
)

// AllSecrets lists every secret, in a fixed order.
var AllSecrets = []Secret{SecretTokenSigning, SecretTokenPublicKeys, SecretEncryption, SecretEnrollmentPepper, SecretAdminPassword}

// DLQ names the dead-letter queue of queue name in Needs.Send and Receive.
func DLQ(name string) string { return name + "-dlq" }

// Queue names used in the needs below.
const (
	queueEvents     = "events"
	queueDeliveries = "webhook-deliveries"
	queueMail       = "mail"
)

// DefaultNeeds is an HTTP route group without its own entry: it reads and
// writes the table (audit records, outbox events, API-key rate limits), sends
// platform events and verifies access tokens with the published keys.
var DefaultNeeds = Needs{
	Table:   TableReadWrite,
	Send:    []string{queueEvents},
	Secrets: []Secret{SecretTokenPublicKeys},
}

// WorkerNeeds is a worker without its own entry: nothing.
var WorkerNeeds = Needs{}

// Sign-in functions: they issue access tokens (and so hold the signing key).
var TokenIssuers = []string{"auth", "auth-passkeys", "sso"}

// FunctionNeeds holds every function that differs from DefaultNeeds or WorkerNeeds.
var FunctionNeeds = map[string]Needs{
	// The health check describes the table and reads the two queues'
	// attributes; it verifies no token.
	"health": {Table: TableDescribe, Inspect: []string{queueEvents, queueDeliveries}},

	// Search only reads, but an API key's authentication spends its rate
	// limit (APIKEYHASH# guard, RL# unknown-key bucket) and expires a key past
	// its date (its ORG# record): its writes are limited to those partitions.
	"search": {Table: TableReadWrite, WriteKeys: []string{"APIKEYHASH#", "RL#", tenantkey.Org},
		Secrets: []Secret{SecretTokenPublicKeys}},

	// Sign-in: they issue tokens, seal TOTP seeds (auth) and send mail.
	"auth": {Table: TableReadWrite, Send: []string{queueEvents, queueMail},
		Secrets: []Secret{SecretTokenSigning, SecretTokenPublicKeys, SecretEncryption}},
	"auth-passkeys": {Table: TableReadWrite, Send: []string{queueEvents, queueMail},
		Secrets: []Secret{SecretTokenSigning, SecretTokenPublicKeys}},
	"sso": {Table: TableReadWrite, Send: []string{queueEvents},
		Secrets: []Secret{SecretTokenSigning, SecretTokenPublicKeys, SecretEncryption}},

	// E-mail senders (invitations, approvals, notices).
	"users": {Table: TableReadWrite, Send: []string{queueEvents, queueMail}, Secrets: []Secret{SecretTokenPublicKeys}},
	"pam":   {Table: TableReadWrite, Send: []string{queueEvents, queueMail}, Secrets: []Secret{SecretTokenPublicKeys}, Channel: true},
	// Admin also redrives the delivery DLQ onto the deliveries queue.
	"admin": {Table: TableReadWrite, Send: []string{queueEvents, queueMail, queueDeliveries},
		Receive: []string{DLQ(queueDeliveries)}, Secrets: []Secret{SecretTokenPublicKeys}},

	// Enrollment keys are stored as peppered hashes.
	"enrollment-keys": {Table: TableReadWrite, Send: []string{queueEvents},
		Secrets: []Secret{SecretTokenPublicKeys, SecretEnrollmentPepper}},
	// Agents: a pending elevation request's mobile approval fan-out runs in
	// the webhook-worker, from its event (shared/push).
	"agents": {Table: TableReadWrite, Send: []string{queueEvents},
		Secrets: []Secret{SecretTokenPublicKeys, SecretEnrollmentPepper}},
	// The agent channel (WebSocket API: the $connect authorizer, $connect,
	// $disconnect, $default): the agent token check, heartbeat frames (a
	// status transition sends its event) and the posts of re-sent commands.
	// No access token to verify. It writes only agent rows (the channel
	// marker, acks, presence), the device item (heartbeat frames, presence
	// and the last-seen key at $connect and $disconnect) and the outbox (a
	// transition's event: device.online, device.offline).
	"agent-channel": {Table: TableReadWrite, WriteKeys: []string{"AGENT#", tenantkey.Org, "OUTBOX#"},
		Send: []string{queueEvents}, Channel: true},
	// Those that create commands or decide elevations push them to the
	// device's channel (shared/channel).
	"devices": {Table: TableReadWrite, Send: []string{queueEvents}, Secrets: []Secret{SecretTokenPublicKeys}, Channel: true},

	// Webhook signing secrets are sealed at rest.
	"webhooks": {Table: TableReadWrite, Send: []string{queueEvents},
		Secrets: []Secret{SecretTokenPublicKeys, SecretEncryption}},

	// The webhook worker connects to customer-chosen URLs: no token key. It
	// writes only deliveries, webhook counters and mobile approval rows with
	// their request's count (ORG# partitions), fans events out to the
	// deliveries queue, parks poison jobs on its DLQ, and puts the push
	// messages of a pending elevation request's approvers on the mail queue
	// (shared/push, from elevation.requested).
	"webhook-worker": {Table: TableReadWrite, WriteKeys: []string{tenantkey.Org},
		Send:    []string{queueDeliveries, DLQ(queueDeliveries), queueMail},
		Receive: []string{DLQ(queueDeliveries)},
		Secrets: []Secret{SecretEncryption}},

	// The mailer delivers the mail queue; for a password reset it stores the
	// reset token (USER#) with its audit record (AUDIT#).
	"mailer": {Table: TableReadWrite, WriteKeys: []string{"USER#", "AUDIT#"}, Notify: true},

	// The sweeper drains the outbox (sends events), expires keys, elevations
	// and devices, and creates the bootstrap administrator (the only reader
	// of its password).
	"sweeper": {Table: TableReadWrite, Send: []string{queueEvents}, Secrets: []Secret{SecretAdminPassword}, Channel: true},
}

// NeedsOf returns the needs of function: its entry, else DefaultNeeds for a
// route group and WorkerNeeds for a worker or an unknown name.
func NeedsOf(function string) Needs {
	if n, ok := FunctionNeeds[function]; ok {
		return n
	}
	if slices.ContainsFunc(Groups, func(g Group) bool { return g.Function == function }) {
		return DefaultNeeds
	}
	return WorkerNeeds
}

// Holds reports whether n includes secret s.
func (n Needs) Holds(s Secret) bool { return slices.Contains(n.Secrets, s) }
