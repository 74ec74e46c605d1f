// Package alert owns alerts (/api/v1/alerts): conditions raised about an
// organization or one of its devices, acknowledged and resolved by people.
//
// # Invariants
//
//   - Status moves active -> acknowledged -> resolved, or active -> resolved;
//     resolved is final. Each move is compare-and-swap on the status, so of
//     concurrent acknowledgements exactly one wins and the others get 409
//     wrong_status. Each raises its event (alert.triggered, alert.acknowledged,
//     alert.resolved) through the outbox in the same transaction as the change
//     and its audit record.
//   - An alert about a device carries the device's site: site- and
//     device-group-restricted callers see and act on the alerts of devices
//     they can see, and not on organization-wide alerts.
//   - Reads need alerts:read and accept API keys with that scope; create and
//     resolve need alerts:write, acknowledge alerts:acknowledge, from a user
//     session.
//
// # Rows
//
//	entity  PK / SK                  GSI1PK / GSI1SK          GSI3PK, GSI4PK / GSI3SK, GSI4SK
//	alert   ORG#<oid> / ALERT#<id>   ALERTREF#<id> / ALERT    PARTNER#<pid>#ALERTS, ORG#<oid>#ALERTS / <createdAt>#<complemented id>
//
// Access patterns: GET /alerts reads one page from the list indexes (GSI3 for
// a partner's alerts across its organizations, GSI4 for one organization's),
// read in descending order: newest first, ties by id ascending (the id is
// stored complemented); status, severity and the caller's restriction are
// applied to the index rows (tenant.List, store.Window); a system caller
// without orgId merges every partner's GSI3 partition and each partnerless
// organization's GSI4 partition by sort key (store.Merge). Alerts keep no
// counter: a total the read did not reach is a Select COUNT of the
// partition(s), or a count of the kept index rows when filtered or
// restricted. Search reads every alert of an
// organization by a prefix query of ORG#<oid> (tenant.Collect); one by id is a
// GetItem (organization callers) or a GSI1 query.
package alert

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Bounds.
const (
	MaxTitle   = 255
	MaxMessage = 4000
)

// Severities and statuses.
var Severities = []string{"critical", "high", "medium", "low", "info"}

const (
	StatusActive       = "active"
	StatusAcknowledged = "acknowledged"
	StatusResolved     = "resolved"
)

// Alert is a stored alert.
type Alert struct {
	store.Keys
	ID             string   `dynamodbav:"id" json:"id"`
	OrgID          string   `dynamodbav:"orgId" json:"orgId"`
	PartnerID      string   `dynamodbav:"partnerId,omitempty" json:"-"`
	DeviceID       *string  `dynamodbav:"deviceId" json:"deviceId"`
	SiteID         string   `dynamodbav:"siteId,omitempty" json:"-"`
	GroupIDs       []string `dynamodbav:"groupIds,omitempty" json:"-"`
	Severity       string   `dynamodbav:"severity" json:"severity"`
	Title          string   `dynamodbav:"title" json:"title"`
	Message        string   `dynamodbav:"message" json:"message"`
	Status         string   `dynamodbav:"status" json:"status"`
	CreatedBy      string   `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt      string   `dynamodbav:"createdAt" json:"createdAt"`
	AcknowledgedAt *string  `dynamodbav:"acknowledgedAt" json:"acknowledgedAt"`
	AcknowledgedBy *string  `dynamodbav:"acknowledgedBy" json:"acknowledgedBy"`
	ResolvedAt     *string  `dynamodbav:"resolvedAt" json:"resolvedAt"`
	ResolvedBy     *string  `dynamodbav:"resolvedBy" json:"resolvedBy"`
}

func keys(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: "ALERT#" + id, GSI1PK: "ALERTREF#" + id, GSI1SK: "ALERT"}
}

// Owner is the organization the alert belongs to.
func (x *Alert) Owner() authz.Org { return authz.Org{ID: x.OrgID, PartnerID: x.PartnerID} }
