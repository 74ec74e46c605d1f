// Package webhook owns outbound webhooks: subscriptions (/api/v1/webhooks), the
// fan-out of platform events to deliveries, the delivery worker (signed HTTPS
// POST, retries with backoff through SQS message delays, the dead-letter queue)
// and the dead-letter queue's inspection and redrive (/admin/webhook-dlq).
//
// # Invariants
//
//   - A webhook's URL, secret and custom headers are sealed at rest
//     (shared/secret, AES-GCM bound to the webhook id); responses show the URL
//     without userinfo, query or fragment, header values masked and hasSecret.
//   - A destination is public HTTPS: shared/outbound's Guard checks the URL at create and update
//     (with DNS) and the dialer checks every address actually dialled at every
//     attempt, after resolution. Redirects are never followed; no proxy is used.
//   - An event reaches only the webhooks that existed when it happened
//     (createdAt at or before the event's timestamp), however long it waited
//     in the outbox or the queue.
//   - One delivery row per (event, webhook): its id is derived from the event
//     id, the webhook id and the event time, so a redelivered event creates
//     none twice. Delivery ids are time-ordered (UUIDv7 layout), so a webhook's
//     deliveries read newest first by key.
//   - Every attempt of one (event, webhook) carries the same
//     X-Service-Delivery-Id, through automatic retries, a manual retry and a
//     dead-letter redrive (Delivery.SentID): receivers de-duplicate on it.
//   - Each attempt is claimed with a compare-and-swap on the delivery (its
//     attempt count, its status and an expired or absent claim) before anything
//     is sent; the attempt's outcome is written only while the claim is held,
//     together with the webhook's counters (successCount, failureCount,
//     lastDeliveryAt, lastSuccessAt and the delivery status counts behind
//     deliveryStats) in one transaction of atomic ADD/SET. A duplicate message
//     for an attempt already made sends nothing.
//   - The next attempt's job is enqueued (with its delay) before the outcome is
//     written, and a job that outlives an attempt it lost finds its claim
//     refused: at least once, never a lost retry.
//   - A webhook whose deliveries keep failing stops (status failed) after
//     FailurePolicy's run of consecutive failed deliveries over its window:
//     the run is counted by ADD in the outcome transactions, the transition is
//     one conditional transaction with exactly one winner, which alone
//     e-mails the organization's administrators (failing.go). Re-enabled, it
//     receives only events that happen from then on (activeSince).
//
// # Rows
//
//	entity            PK / SK                                     GSI1PK / GSI1SK
//	webhook           ORG#<oid> / WEBHOOK#<id>                    WEBHOOKREF#<id> / WEBHOOK
//	                  GSI3 PARTNER#<pid>#WEBHOOKS / <createdAt>#<complemented id>, GSI4 ORG#<oid>#WEBHOOKS / same (read descending)
//	delivery          ORG#<oid> / WHDLV#<webhook id>#<id>         -
//
// Access patterns: GET /webhooks reads one page of the organization's GSI4
// partition (tenant.List; a webhook being deleted has no list keys); the
// fan-out reads every webhook of an organization in one prefix query of
// ORG#<oid>; a webhook by id is a GetItem for organization callers and
// one GSI1 query for partner and system callers; a webhook's deliveries are a
// descending prefix query of WHDLV#<webhook id>#; a delivery by id is a
// GetItem (its key holds the webhook id and the organization).
//
// # Queues
//
// The events queue carries platform events (shared/event); the deliveries queue
// carries Job messages, one per attempt, delayed by the retry policy; a job whose
// retries are exhausted is sent to the deliveries queue's dead-letter queue,
// which also receives poison messages by the queue's redrive policy.
package webhook

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Webhook status values (stored as given).
const (
	StatusActive = "active"
	StatusPaused = "paused"
	StatusFailed = "failed"
)

// Delivery status values.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
	DeliveryRetrying  = "retrying"
)

// Delivery mechanics.
const (
	// Timeout bounds one attempt (connect, TLS, request and response).
	Timeout = 30 * time.Second
	// MaxResponseBody is how much of a response body is stored (characters).
	MaxResponseBody = 1000
	// UserAgent is sent on every delivery.
	UserAgent = "Service-Webhooks/1.0"
	// MaxSQSDelay is SQS's longest message delay; longer waits hop.
	MaxSQSDelay = 900 * time.Second
)

// Limits of a webhook.
const (
	MaxName    = 255
	MaxSecret  = 255
	MaxHeaders = 20
	MaxHeader  = 4096
)

// Header is a custom delivery header.
type Header struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// MaskedValue replaces header values in responses.
const MaskedValue = "********"

// RetryPolicy is a webhook's retry override.
type RetryPolicy struct {
	MaxRetries        int     `dynamodbav:"maxRetries" json:"maxRetries"`
	InitialDelayMs    int     `dynamodbav:"initialDelayMs" json:"initialDelayMs"`
	BackoffMultiplier float64 `dynamodbav:"backoffMultiplier" json:"backoffMultiplier"`
	MaxDelayMs        int     `dynamodbav:"maxDelayMs" json:"maxDelayMs"`
}

// DefaultRetry is the platform policy: 5 retries after 1, 2, 4, 8, 16 s.
var DefaultRetry = RetryPolicy{MaxRetries: 5, InitialDelayMs: 1000, BackoffMultiplier: 2, MaxDelayMs: 300_000}

// Delay is the wait before the retry that follows failed attempt n (0-based):
// min(initialDelay * multiplier^n, maxDelay).
func (p RetryPolicy) Delay(n int) time.Duration {
	ms := float64(p.InitialDelayMs) * math.Pow(p.BackoffMultiplier, float64(n))
	if ms > float64(p.MaxDelayMs) || math.IsInf(ms, 0) || math.IsNaN(ms) {
		ms = float64(p.MaxDelayMs)
	}
	return time.Duration(ms * float64(time.Millisecond))
}

// record is a webhook row. URL, Secret and Headers are sealed.
type record struct {
	store.Keys
	ID          string       `dynamodbav:"id"`
	OrgID       string       `dynamodbav:"orgId"`
	PartnerID   string       `dynamodbav:"partnerId"`
	Name        string       `dynamodbav:"name"`
	URL         string       `dynamodbav:"urlSealed"`
	Secret      string       `dynamodbav:"secretSealed,omitempty"`
	Headers     string       `dynamodbav:"headersSealed,omitempty"`
	Events      []string     `dynamodbav:"events"`
	Status      string       `dynamodbav:"status"`
	RetryPolicy *RetryPolicy `dynamodbav:"retryPolicy,omitempty"`
	CreatedBy   string       `dynamodbav:"createdBy"`
	CreatedAt   string       `dynamodbav:"createdAt"`
	UpdatedAt   string       `dynamodbav:"updatedAt"`
	// Deleting hides a webhook whose deliveries are being removed; a repeated
	// DELETE resumes.
	Deleting bool `dynamodbav:"deleting,omitempty"`
	// FailedAt is when the failure policy stopped the webhook (failing.go);
	// ActiveSince when a PATCH last made it active again: events that happened
	// before it are not delivered.
	FailedAt    string `dynamodbav:"failedAt,omitempty"`
	ActiveSince string `dynamodbav:"activeSince,omitempty"`
	counters
}

// Owner is the organization the webhook belongs to (tenant.Owned).
func (r *record) Owner() authz.Org { return authz.Org{ID: r.OrgID, PartnerID: r.PartnerID} }

// counters are kept by atomic ADD and SET on the webhook row.
type counters struct {
	SuccessCount   int64  `dynamodbav:"successCount"`
	FailureCount   int64  `dynamodbav:"failureCount"`
	LastDeliveryAt string `dynamodbav:"lastDeliveryAt,omitempty"`
	LastSuccessAt  string `dynamodbav:"lastSuccessAt,omitempty"`
	NTotal         int64  `dynamodbav:"nTotal"`
	NPending       int64  `dynamodbav:"nPending"`
	NDelivered     int64  `dynamodbav:"nDelivered"`
	NFailed        int64  `dynamodbav:"nFailed"`
	NRetrying      int64  `dynamodbav:"nRetrying"`
	// FailRun counts the consecutive failed deliveries since the last
	// delivered one, FailRunSince is the first of them (failing.go).
	FailRun      int64  `dynamodbav:"failRun"`
	FailRunSince string `dynamodbav:"failRunSince,omitempty"`
}

// count is the counter attribute of a delivery status.
func count(status string) string {
	switch status {
	case DeliveryPending:
		return "nPending"
	case DeliveryDelivered:
		return "nDelivered"
	case DeliveryFailed:
		return "nFailed"
	}
	return "nRetrying"
}

// policy is the webhook's effective retry policy.
func (r *record) policy() RetryPolicy {
	if r.RetryPolicy != nil {
		return *r.RetryPolicy
	}
	return DefaultRetry
}

// Webhook is the API view of a webhook.
type Webhook struct {
	ID             string       `json:"id"`
	OrgID          string       `json:"orgId"`
	Name           string       `json:"name"`
	URL            string       `json:"url"`
	HasSecret      bool         `json:"hasSecret"`
	Events         []string     `json:"events"`
	Headers        []Header     `json:"headers"`
	Status         string       `json:"status"`
	RetryPolicy    *RetryPolicy `json:"retryPolicy"`
	SuccessCount   int64        `json:"successCount"`
	FailureCount   int64        `json:"failureCount"`
	LastDeliveryAt *string      `json:"lastDeliveryAt"`
	LastSuccessAt  *string      `json:"lastSuccessAt"`
	CreatedBy      string       `json:"createdBy"`
	CreatedAt      string       `json:"createdAt"`
	UpdatedAt      string       `json:"updatedAt"`
}

// Stats is GET /webhooks/:id's deliveryStats.
type Stats struct {
	Total           int64   `json:"total"`
	Pending         int64   `json:"pending"`
	Delivered       int64   `json:"delivered"`
	Failed          int64   `json:"failed"`
	Retrying        int64   `json:"retrying"`
	LastDeliveredAt *string `json:"lastDeliveredAt"`
}

// Detail is GET /webhooks/:id's answer.
type Detail struct {
	*Webhook
	DeliveryStats Stats `json:"deliveryStats"`
}

// Delivery is a delivery row and its API view. Body is the exact JSON sent
// (the payload); the claim fields never leave the store.
type Delivery struct {
	store.Keys
	ID             string          `dynamodbav:"id" json:"id"`
	WebhookID      string          `dynamodbav:"webhookId" json:"webhookId"`
	OrgID          string          `dynamodbav:"orgId" json:"orgId"`
	Status         string          `dynamodbav:"status" json:"status"`
	Event          string          `dynamodbav:"event_type" json:"event"`
	EventID        string          `dynamodbav:"eventId" json:"eventId"`
	Body           string          `dynamodbav:"body" json:"-"`
	Payload        json.RawMessage `dynamodbav:"-" json:"payload"`
	ResponseStatus *int            `dynamodbav:"responseStatus,omitempty" json:"responseStatus"`
	ResponseBody   *string         `dynamodbav:"responseBody,omitempty" json:"responseBody"`
	ResponseTimeMs *int64          `dynamodbav:"responseTimeMs,omitempty" json:"responseTimeMs"`
	ErrorMessage   *string         `dynamodbav:"errorMessage,omitempty" json:"errorMessage"`
	Attempt        int             `dynamodbav:"attempts" json:"attempt"`
	NextAttemptAt  *string         `dynamodbav:"next_retry_at,omitempty" json:"nextAttemptAt"`
	CreatedAt      string          `dynamodbav:"createdAt" json:"createdAt"`
	DeliveredAt    *string         `dynamodbav:"deliveredAt,omitempty" json:"deliveredAt"`
	// RetryOf is the failed delivery this one re-sends (retry, redrive).
	RetryOf string `dynamodbav:"retryOf,omitempty" json:"-"`
	// OriginID is the id of the first delivery of this (event, webhook) when
	// this one re-sends it (retry, redrive); see SentID.
	OriginID   string `dynamodbav:"originId,omitempty" json:"-"`
	ClaimID    string `dynamodbav:"claimId,omitempty" json:"-"`
	ClaimUntil int64  `dynamodbav:"claimUntil,omitempty" json:"-"`
}

// SentID is the X-Service-Delivery-Id of every attempt of d: the id of the
// first delivery of its (event, webhook), so that a receiver can de-duplicate
// across automatic retries (one row), a manual retry and a dead-letter
// redrive (new rows, each recording the first one's id). A re-send of a
// delivery stored before originId existed starts from that delivery's id.
func (d *Delivery) SentID() string {
	if d.OriginID != "" {
		return d.OriginID
	}
	return d.ID
}

// view fills Payload from Body for a response.
func (d *Delivery) view() *Delivery {
	d.Payload = json.RawMessage(d.Body)
	if !json.Valid(d.Payload) {
		d.Payload = json.RawMessage("null")
	}
	return d
}

// Job is a deliveries-queue message: make attempt Attempt (the number of
// attempts already made) of a delivery. NotBefore (epoch ms) is set when the
// wait exceeds SQS's delay limit: an earlier receipt re-enqueues the job.
// Reason and FailedAt are set on dead-letter copies.
type Job struct {
	OrgID      string `json:"orgId"`
	WebhookID  string `json:"webhookId"`
	DeliveryID string `json:"deliveryId"`
	Attempt    int    `json:"attempt"`
	NotBefore  int64  `json:"notBefore,omitempty"`
	Reason     string `json:"reason,omitempty"`
	FailedAt   string `json:"failedAt,omitempty"`
}

// Keys.

// Key is a webhook's primary key (and its GSI1 reference by id).
func Key(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: "WEBHOOK#" + id, GSI1PK: refPK(id), GSI1SK: "WEBHOOK"}
}

func refPK(id string) string { return "WEBHOOKREF#" + id }

// DeliveryKey is a delivery's primary key.
func DeliveryKey(orgID, webhookID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: deliveryPrefix(webhookID) + id}
}

func deliveryPrefix(webhookID string) string { return "WHDLV#" + webhookID + "#" }

// DeliveryID derives the delivery id of event eventID for webhook webhookID:
// a UUIDv7 layout whose time is the event's and whose remaining bits come from
// SHA-256 of the two ids, so the same event gives the same id every time and
// ids sort by event time.
func DeliveryID(eventID, webhookID string, at time.Time) string {
	h := sha256.Sum256([]byte(eventID + "|" + webhookID))
	var u uuid.UUID
	copy(u[6:], h[:10])
	ms := uint64(at.UnixMilli())
	var ts [8]byte
	binary.BigEndian.PutUint64(ts[:], ms)
	copy(u[0:6], ts[2:8])
	u[6] = 0x70 | (u[6] & 0x0f) // version 7
	u[8] = 0x80 | (u[8] & 0x3f) // RFC 4122 variant
	return u.String()
}

// newDeliveryID is a fresh time-ordered id (test, retry, redrive deliveries).
func newDeliveryID(at time.Time) string { return DeliveryID(uuid.NewString(), "", at) }
