// Package script owns the script library of an organization (/api/v1/scripts):
// named PowerShell, Bash, Python or cmd scripts that devices run.
//
// # Invariants
//
//   - Reads need scripts:read and accept API keys with that scope; writes
//     need a user session, scripts:write (scripts:delete to delete) and MFA,
//     because a script's content runs on the organization's devices. A script
//     is organization-wide, so site- and device-group-restricted callers read
//     but do not change scripts.
//   - Every change writes its audit record (script.create, script.update with
//     the changed field names, script.delete) in the same transaction, and is
//     compare-and-swap on the script's version.
//
// # Rows
//
//	entity   PK / SK                   GSI1PK / GSI1SK          GSI3PK, GSI4PK / GSI3SK, GSI4SK
//	script   ORG#<oid> / SCRIPT#<id>   SCRIPTREF#<id> / SCRIPT  PARTNER#<pid>#SCRIPTS, ORG#<oid>#SCRIPTS / <lower name>\x01<id>
//
// Access patterns: GET /scripts reads one page from the list indexes (GSI3 for
// a partner's scripts across its organizations, GSI4 for one organization's;
// every partner's merged for a system caller without orgId; tenant.List), by
// name case-insensitively, then id; the total is the read's own or a Select
// COUNT of the partition(s) (no counter). Search reads every script of an
// organization by a prefix query of ORG#<oid>; one by id is a GetItem
// (organization callers) or a GSI1 query (store.OrgRows).
package script

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Bounds.
const (
	MaxName        = 255
	MaxDescription = 2000
	MaxContent     = 256 * 1024
)

// Languages a script may be written in.
var Languages = []string{"powershell", "bash", "python", "cmd"}

// Script is a stored script.
type Script struct {
	store.Keys
	ID          string  `dynamodbav:"id" json:"id"`
	OrgID       string  `dynamodbav:"orgId" json:"orgId"`
	PartnerID   string  `dynamodbav:"partnerId,omitempty" json:"-"`
	Name        string  `dynamodbav:"name" json:"name"`
	Description *string `dynamodbav:"description" json:"description"`
	Language    string  `dynamodbav:"language" json:"language"`
	Content     string  `dynamodbav:"content" json:"content"`
	CreatedBy   string  `dynamodbav:"createdBy" json:"createdBy"`
	CreatedAt   string  `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt   string  `dynamodbav:"updatedAt" json:"updatedAt"`
	Version     int     `dynamodbav:"version" json:"-"`
}

func keys(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: "SCRIPT#" + id, GSI1PK: "SCRIPTREF#" + id, GSI1SK: "SCRIPT"}
}

// Owner is the organization the script belongs to.
func (x *Script) Owner() authz.Org { return authz.Org{ID: x.OrgID, PartnerID: x.PartnerID} }
