// Package tenant owns the tenancy hierarchy: partners, organizations, sites and
// device groups, and each organization's security settings.
//
// Rows (PK / SK, GSI1, GSI2):
//
//	partner         PARTNER#<id> / PARTNER          -                                  PARTNERS / <id>
//	organization    ORG#<id> / ORG                  PARTNER#<pid>#ORGS / <id>          ORGS / <id>
//	                GSI3 PARTNER#<pid>#ORGLIST / <lower name>\x01<id>, GSI4 ORG#<id>#ORGLIST / same
//	security        ORG#<id> / SECURITY             -                                  -
//	site            ORG#<oid> / SITE#<id>           SITEREF#<id> / SITE                -
//	                GSI4 ORG#<oid>#SITES / <lower name>\x01<id>
//	device group    ORG#<oid> / DGROUP#<id>         DGROUPREF#<id> / DGROUP            -
//	                GSI4 ORG#<oid>#DGROUPS / <lower name>\x01<id>
//
// An organization is read by id with one consistent GetItem; a partner's
// organizations are one GSI1 query; all organizations (system scope) one GSI2
// query; the organizations list reads one page of the list indexes (List,
// Listing.Self). Sites and device groups are listed one page of their
// organization's GSI4 partition at a time and found by id through GSI1, after which the caller's access to the organization
// is checked (another tenant's item is 404, never 403).
//
// An organization counts its children (sites, device groups, members, devices);
// creating a child increments the count in the same transaction and deleting the
// organization requires every count to be zero, so a delete cannot race a create
// into leaving orphans. Sites count their device groups and devices likewise.
// The count writes are CountOrg, CountSite and CountGroup (store.go): a package
// that creates or removes such a child (a membership, a device) adds them to its
// own transaction. Deleting an organization also deletes its security item.
//
// Lists of organization-owned rows read one page from the list indexes with
// List (list.go): the partition by the caller's scope (an organization's GSI4,
// a partner's GSI3, or for a system caller without orgId every partner's GSI3
// and each partnerless organization's GSI4 merged by sort key), and the total
// from the read itself, the organizations' counters (devices), a Select COUNT
// of the partition(s) (lists without a counter: alerts, scripts, saved
// filters; a system caller's is one per partition), or a count of the kept
// index rows when filters or the caller's restriction drop rows. Collect is
// the in-memory loop of the reads that want every row.
//
// store.go holds the reads and those writes, service.go the rules (every method
// authorizes first; another tenant's item is 404), handler.go the routes and
// what each reads and writes (budgets: docs/budgets.md). Store.SecuritySettings is the read other packages
// use for an organization's MFA policy.
package tenant

import (
	"strings"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Partner is an MSP.
type Partner struct {
	store.Keys
	ID        string `dynamodbav:"id" json:"id"`
	Name      string `dynamodbav:"name" json:"name"`
	CreatedAt string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// PartnerKeys are the keys of partner id.
func PartnerKeys(id string) store.Keys {
	return store.Keys{PK: store.PartnerPK(id), SK: "PARTNER", GSI2PK: "PARTNERS", GSI2SK: id}
}

// Organization status values.
const (
	OrgActive    = "active"
	OrgSuspended = "suspended"
	OrgTrial     = "trial"
)

// Organization is a customer of a partner.
type Organization struct {
	store.Keys
	ID          string `dynamodbav:"id" json:"id"`
	PartnerID   string `dynamodbav:"partnerId" json:"partnerId"`
	Name        string `dynamodbav:"name" json:"name"`
	Status      string `dynamodbav:"status" json:"status"`
	SiteCount   int    `dynamodbav:"siteCount" json:"-"`
	GroupCount  int    `dynamodbav:"groupCount" json:"-"`
	MemberCount int    `dynamodbav:"memberCount" json:"-"`
	DeviceCount int    `dynamodbav:"deviceCount" json:"-"`
	CreatedAt   string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt   string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Ref is what authorization needs of the organization.
func (o *Organization) Ref() authz.Org { return authz.Org{ID: o.ID, PartnerID: o.PartnerID} }

// OrgKeys are the keys of organization id of partner partnerID.
func OrgKeys(id, partnerID string) store.Keys {
	return store.Keys{PK: store.OrgPK(id), SK: orgSK, GSI1PK: store.PartnerPK(partnerID) + "#ORGS", GSI1SK: id, GSI2PK: "ORGS", GSI2SK: id}
}

// Owner is the organization itself. It reads the id from the primary key
// when the record was decoded from a list-index row (which projects no id).
func (o *Organization) Owner() authz.Org {
	if o.ID == "" {
		return authz.Org{ID: strings.TrimPrefix(o.PK, store.OrgPK("")), PartnerID: o.PartnerID}
	}
	return o.Ref()
}

// SetListKeys puts o into the organizations' list indexes: its partner's
// partition of GSI3 and its own of GSI4 (create and rename).
func (o *Organization) SetListKeys() {
	o.SetList(partnerOrgListPK, orgListPK, o.PartnerID, o.ID, listSK(o.Name, o.ID))
}

// OrgKey is the primary key of organization id.
func OrgKey(id string) store.KeyRef { return store.KeyRef{PK: store.OrgPK(id), SK: orgSK} }

// Site is a location of an organization.
type Site struct {
	store.Keys
	ID          string `dynamodbav:"id" json:"id"`
	OrgID       string `dynamodbav:"orgId" json:"orgId"`
	Name        string `dynamodbav:"name" json:"name"`
	Timezone    string `dynamodbav:"timezone" json:"timezone"`
	GroupCount  int    `dynamodbav:"groupCount" json:"-"`
	DeviceCount int    `dynamodbav:"deviceCount" json:"-"`
	CreatedAt   string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt   string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// SiteKeys are the keys of site id of organization orgID.
func SiteKeys(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: siteSK + id, GSI1PK: "SITEREF#" + id, GSI1SK: "SITE"}
}

// SetListKeys puts st into its organization's sites list (GSI4; create and
// rename).
func (st *Site) SetListKeys() { st.GSI4PK, st.GSI4SK = siteListPK(st.OrgID), listSK(st.Name, st.ID) }

// DeviceGroup groups devices of an organization, optionally within a site.
type DeviceGroup struct {
	store.Keys
	ID          string  `dynamodbav:"id" json:"id"`
	OrgID       string  `dynamodbav:"orgId" json:"orgId"`
	SiteID      *string `dynamodbav:"siteId" json:"siteId"`
	Name        string  `dynamodbav:"name" json:"name"`
	DeviceCount int     `dynamodbav:"deviceCount" json:"-"`
	CreatedAt   string  `dynamodbav:"createdAt" json:"createdAt"`
}

// GroupKeys are the keys of device group id of organization orgID.
func GroupKeys(orgID, id string) store.Keys {
	return store.Keys{PK: store.OrgPK(orgID), SK: groupSK + id, GSI1PK: "DGROUPREF#" + id, GSI1SK: "DGROUP"}
}

// SetListKeys puts g into its organization's device-group list (GSI4; create
// and rename).
func (g *DeviceGroup) SetListKeys() { g.GSI4PK, g.GSI4SK = groupListPK(g.OrgID), listSK(g.Name, g.ID) }

// List index keys: organizations, sites and device groups are listed by name
// (case-insensitively, then id), as they were sorted in memory before. listSep
// sorts below every character a name may hold (valid.Name refuses control
// characters), so "ab" sorts before "ab-1" as strings.Compare has it. Sites
// and device groups are listed one organization at a time (orgId), so they
// sit in GSI4 only.
const listSep = "\x01"

// The sort key of an organization's own row, and the sort-key prefixes of
// its sites and device groups, in its partition.
const (
	orgSK   = "ORG"
	siteSK  = "SITE#"
	groupSK = "DGROUP#"
)

func listSK(name, id string) string { return strings.ToLower(name) + listSep + id }

func orgListPK(id string) string { return store.OrgPK(id) + "#ORGLIST" }

func partnerOrgListPK(id string) string { return store.PartnerPK(id) + "#ORGLIST" }

func siteListPK(orgID string) string { return store.OrgPK(orgID) + "#SITES" }

func groupListPK(orgID string) string { return store.OrgPK(orgID) + "#DGROUPS" }

// SecuritySettings are an organization's MFA policy.
type SecuritySettings struct {
	store.Keys
	OrgID             string   `dynamodbav:"orgId" json:"-"`
	RequireMFA        bool     `dynamodbav:"requireMfa" json:"requireMfa"`
	AllowedMFAMethods []string `dynamodbav:"allowedMfaMethods" json:"allowedMfaMethods"`
	UpdatedAt         string   `dynamodbav:"updatedAt,omitempty" json:"-"`
}

// SecurityKey is the key of an organization's security settings.
func SecurityKey(orgID string) store.KeyRef {
	return store.KeyRef{PK: store.OrgPK(orgID), SK: "SECURITY"}
}
