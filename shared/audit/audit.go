// Package audit records who did what. A record is written in the same DynamoDB
// transaction as the change it describes (Put returns the store write to add), so
// there is never a change without its record or a record without its change.
//
// Rows: PK AUDIT#<tenant> (ORG#<id>, PARTNER#<id> or SYSTEM), SK <time>#<id>;
// listed newest first per tenant. Details never hold secrets: key operations log
// only a key's prefix. Every row carries a ttl Retention after its time
// (AUDIT_RETENTION_DAYS, default 400), so DynamoDB removes history past it and
// no sweep ever reads it.
//
// Request metadata: a record written in a request carries its request id, and
// the client address and user agent unless its actor names them (Record is a
// store.Contextual: the store completes it from the context of the write), so
// the writes built without a context still carry them.
//
// Reads (Read, for GET /audit-logs and its export): every read is of one
// tenant's partition, newest first, and the table's own key serves it; no
// index holds audit rows, so an audit write costs what it did. Which part of
// a request is served how:
//
//   - the tenant (orgId, partnerId, the caller's own): the partition key;
//   - from and to: the sort key (time first), a key condition;
//   - actorId, action (exact, or a prefix through begins_with), resourceType
//     and resourceId, in any combination: a filter expression over the rows
//     the page reads. A page reads at most limit rows (at most 200; an export
//     response at most 5,000 rows in at most 5 queries of 1 MB) and answers
//     those that match with the cursor after the last row read, so a filtered
//     page may hold fewer than limit rows, or none, with a next cursor. A
//     page's calls and units are those of limit rows whatever the log's size
//     (tests.TestAuditLogPageCostIsFlat: 10 entries and 10,000 alike).
//
// An index per filter (actor, resource, action) would answer a selective
// filter in fewer pages, at a write of each index on every audited change;
// the retention bounds a partition, and a client walking the cursor reads at
// most the window it asked for (from/to), so none is kept for now.
package audit

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/store"
)

// DefaultRetention is how long audit rows are kept unless configured.
const DefaultRetention = 400 * 24 * time.Hour

// retention is the process's audit retention: one setting for every write of
// the process, set once at start (SetRetention, from the configuration) like
// the log level; audit rows are written from ninety places that share no
// other value.
var retention atomic.Int64

// SetRetention sets how long audit rows written from now on are kept (zero or
// less: DefaultRetention).
func SetRetention(d time.Duration) { retention.Store(int64(d)) }

// Retention is how long audit rows written now are kept.
func Retention() time.Duration {
	if d := time.Duration(retention.Load()); d > 0 {
		return d
	}
	return DefaultRetention
}

// Actor is who acted, with the request metadata of the audit record.
type Actor struct {
	ID        string `dynamodbav:"actorId" json:"actorId"`
	Email     string `dynamodbav:"actorEmail,omitempty" json:"actorEmail,omitempty"`
	Type      string `dynamodbav:"actorType" json:"actorType"` // user, api_key, agent, system
	IP        string `dynamodbav:"ip,omitempty" json:"ip,omitempty"`
	UserAgent string `dynamodbav:"userAgent,omitempty" json:"userAgent,omitempty"`
	RequestID string `dynamodbav:"requestId,omitempty" json:"requestId,omitempty"`
}

// SystemActor is the platform itself (sweeper, bootstrap).
var SystemActor = Actor{ID: "system", Type: "system"}

// Record is one audit log entry.
type Record struct {
	store.Keys
	ID           string         `dynamodbav:"id" json:"id"`
	Tenant       string         `dynamodbav:"tenant" json:"tenant"`
	OrgID        string         `dynamodbav:"orgId,omitempty" json:"orgId,omitempty"`
	PartnerID    string         `dynamodbav:"partnerId,omitempty" json:"partnerId,omitempty"`
	Action       string         `dynamodbav:"action" json:"action"`
	ResourceType string         `dynamodbav:"resourceType,omitempty" json:"resourceType,omitempty"`
	ResourceID   string         `dynamodbav:"resourceId,omitempty" json:"resourceId,omitempty"`
	ResourceName string         `dynamodbav:"resourceName,omitempty" json:"resourceName,omitempty"`
	Details      map[string]any `dynamodbav:"details,omitempty" json:"details,omitempty"`
	Result       string         `dynamodbav:"result" json:"result"` // success or denied
	At           string         `dynamodbav:"at" json:"at"`
	Actor
}

// InContext completes the record with the request it is written in (the store
// calls it when it marshals the write): the request id, and the client address
// and user agent when the writer did not set them. Writes are built without a
// context (Put), so this is the one place every record gets them.
func (r Record) InContext(ctx context.Context) any {
	ip, ua := httpapi.Client(ctx)
	if r.IP == "" {
		r.IP = ip
	}
	if r.UserAgent == "" {
		r.UserAgent = ua
	}
	if r.RequestID == "" {
		r.RequestID = httpapi.RequestID(ctx)
	}
	return r
}

// Tenant keys: exactly one of org, partner, or the system log.
func Tenant(orgID, partnerID string) string {
	switch {
	case orgID != "":
		return store.OrgPK(orgID)
	case partnerID != "":
		return store.PartnerPK(partnerID)
	}
	return "SYSTEM"
}

// Entry describes a record before it is stamped.
type Entry struct {
	Actor        Actor
	OrgID        string
	PartnerID    string
	Action       string
	ResourceType string
	ResourceID   string
	ResourceName string
	Details      map[string]any
	Denied       bool
}

func stamp(now time.Time, e Entry) Record {
	id := uuid.NewString()
	tenant := Tenant(e.OrgID, e.PartnerID)
	at := clock.Format(now)
	result := "success"
	if e.Denied {
		result = "denied"
	}
	return Record{
		Keys: store.Keys{PK: "AUDIT#" + tenant, SK: at + "#" + id, TTL: store.TTL(now.Add(Retention()))},
		ID:   id, Tenant: tenant, OrgID: e.OrgID, PartnerID: e.PartnerID,
		Action: e.Action, ResourceType: e.ResourceType, ResourceID: e.ResourceID, ResourceName: e.ResourceName,
		Details: e.Details, Result: result, At: at, Actor: e.Actor,
	}
}
