// Package savedfilter owns saved device filters (/api/v1/filters): named
// ConditionGroups of an organization, and previews that evaluate a filter
// (saved or ad hoc) over every device the caller can see, with the engine of
// shared/filter.
//
// # Invariants
//
//   - A stored filter always parses: create and update run shared/filter's
//     parser, which refuses unknown fields, operators a field's type does not
//     take and bad values with 400 `Invalid filter`, naming each path.
//   - Filters of an organization are visible to every caller with access to it
//     (there is no visibility toggle). Reads accept API keys with devices:read;
//     writes need devices:write, a user session and MFA, and are refused to
//     site- and device-group-restricted callers (a filter is organization-wide;
//     their previews see only their own devices).
//   - Every change writes its audit record in the same transaction
//     (filter.create, filter.update with the changed field names,
//     filter.delete); previews are audited too (filter.preview,
//     filter.saved.preview).
//
// # Rows
//
//	entity        PK / SK                   GSI1PK / GSI1SK          GSI3PK, GSI4PK / GSI3SK, GSI4SK
//	saved filter  ORG#<oid> / FILTER#<id>   FILTERREF#<id> / FILTER  PARTNER#<pid>#FILTERS, ORG#<oid>#FILTERS / <createdAt>#<complemented id>
//
// Access patterns: GET /filters reads the list indexes (GSI3 for a partner's
// filters across its organizations, GSI4 for one organization's; every
// partner's merged for a system caller; read descending: newest first, ties by
// id; tenant.List), a page (limit, page or cursor) or, without one, every
// filter; the total is the read's own or a Select COUNT of the partition(s)
// (no counter). search is applied to the filters read (names and descriptions
// are not projected), so a search reads every reachable filter. One by id is a
// GetItem (organization callers) or a GSI1 query (store.OrgRows).
// A preview reads the devices of each reachable organization with one Query
// (a second for software when the filter reads it) and evaluates in memory.
package savedfilter

import (
	"encoding/json"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Bounds.
const (
	MaxName         = 200
	MaxDescription  = 1000
	DefaultPreview  = 10
	MaxPreviewLimit = 100
)

// Filter is a saved filter as stored; Conditions is its ConditionGroup as JSON.
type Filter struct {
	store.Keys
	ID          string  `dynamodbav:"id" json:"id"`
	OrgID       string  `dynamodbav:"orgId" json:"orgId"`
	PartnerID   string  `dynamodbav:"partnerId,omitempty" json:"-"`
	Name        string  `dynamodbav:"name" json:"name"`
	Description *string `dynamodbav:"description" json:"description"`
	Conditions  string  `dynamodbav:"conditions" json:"-"`
	CreatedBy   string  `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt   string  `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt   string  `dynamodbav:"updatedAt" json:"updatedAt"`
	Version     int     `dynamodbav:"version" json:"-"`
}

// MarshalJSON writes the filter with its conditions as a JSON object.
func (f Filter) MarshalJSON() ([]byte, error) {
	type plain Filter
	return json.Marshal(struct {
		plain
		Conditions json.RawMessage `json:"conditions"`
	}{plain(f), json.RawMessage(f.Conditions)})
}

// Preview is a preview's answer (the `data` object).
type Preview struct {
	TotalCount  int             `json:"totalCount"`
	Devices     []PreviewDevice `json:"devices"`
	EvaluatedAt string          `json:"evaluatedAt"`
}

// PreviewDevice is one matching device.
type PreviewDevice struct {
	ID          string  `json:"id"`
	Hostname    string  `json:"hostname"`
	DisplayName *string `json:"displayName"`
	OSType      string  `json:"osType"`
	Status      string  `json:"status"`
	LastSeenAt  *string `json:"lastSeenAt"`
}

func keys(orgID, id string) store.Keys { return store.OrgRows[Filter]{Kind: "FILTER"}.Keys(orgID, id) }

// Owner is the organization the filter belongs to.
func (x *Filter) Owner() authz.Org { return authz.Org{ID: x.OrgID, PartnerID: x.PartnerID} }
