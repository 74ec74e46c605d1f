// Package tenantkey holds the prefixes of the tenant partitions, ORG#<id> and
// PARTNER#<id>, for the store's key builders and for the route table's write
// policies (which may not import the store and its AWS clients). Nothing else
// spells them: rows are addressed through store.OrgPK, store.PartnerPK and
// store.TenantPK.
package tenantkey

// Partition prefixes.
const (
	Org     = "ORG#"
	Partner = "PARTNER#"
)
