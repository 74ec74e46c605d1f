package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/store/tenantkey"
)

// Tenant partitions. Every row a tenant owns lives in (or is indexed under) its
// tenant's key, and these builders are the only place that spells one; a test
// refuses the prefixes written anywhere else.
const (
	orgPrefix     = tenantkey.Org
	partnerPrefix = tenantkey.Partner
)

// OrgPK is organization id's partition, ORG#<id>.
func OrgPK(id string) string { return orgPrefix + id }

// PartnerPK is partner id's partition, PARTNER#<id>.
func PartnerPK(id string) string { return partnerPrefix + id }

// TenantPK is the organization's partition when orgID is set, otherwise the
// partner's: the tenant of a row owned by one or the other.
func TenantPK(orgID, partnerID string) string {
	if orgID != "" {
		return OrgPK(orgID)
	}
	return PartnerPK(partnerID)
}

// OrgOf is the organization id of tenant key pk (ORG#<id>).
func OrgOf(pk string) (id string, ok bool) { return strings.CutPrefix(pk, orgPrefix) }

// PartnerOf is the partner id of tenant key pk (PARTNER#<id>).
func PartnerOf(pk string) (id string, ok bool) { return strings.CutPrefix(pk, partnerPrefix) }

// OrgRows is the one repository of rows an organization owns that are also
// found by their own id: PK ORG#<oid>, SK <Kind>#<id>, GSI1PK <Kind>REF#<id>,
// GSI1SK <Kind>. T is the record type; its *T embeds Keys.
type OrgRows[T any] struct {
	St   *Store
	Kind string // "ALERT", "SCRIPT", ...
}

// Keys are the keys of row id of organization orgID.
func (r OrgRows[T]) Keys(orgID, id string) Keys {
	return Keys{PK: OrgPK(orgID), SK: r.Kind + "#" + id, GSI1PK: r.Kind + "REF#" + id, GSI1SK: r.Kind}
}

// Get reads row id of organization orgID (one GetItem).
func (r OrgRows[T]) Get(ctx context.Context, orgID, id string) (*T, error) {
	var v T
	if err := r.St.Get(ctx, OrgPK(orgID), r.Kind+"#"+id, &v); err != nil {
		return nil, fmt.Errorf("get %s %s: %w", strings.ToLower(r.Kind), id, err)
	}
	return &v, nil
}

// ByID finds row id in whatever organization (one GSI1 query); the caller
// checks that the organization is within reach.
func (r OrgRows[T]) ByID(ctx context.Context, id string) (*T, error) {
	var out []T
	if err := r.St.AllInto(ctx, Query{Index: GSI1, PK: r.Kind + "REF#" + id, SKPrefix: r.Kind}, &out); err != nil {
		return nil, fmt.Errorf("%s %s: %w", strings.ToLower(r.Kind), id, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s %s: %w", strings.ToLower(r.Kind), id, ErrNotFound)
	}
	return &out[0], nil
}

// In is the query of organization orgID's rows of this kind.
func (r OrgRows[T]) In(orgID string) Query { return Query{PK: OrgPK(orgID), SKPrefix: r.Kind + "#"} }

// All reads every row of this kind of organization orgID (a partition bounded
// by design).
func (r OrgRows[T]) All(ctx context.Context, orgID string) ([]T, error) {
	out := []T{}
	if err := r.St.AllInto(ctx, r.In(orgID), &out); err != nil {
		return nil, fmt.Errorf("%s rows of %s: %w", strings.ToLower(r.Kind), orgID, err)
	}
	return out, nil
}

// SetList puts a row of organization orgID (of partner partnerID, "" for none)
// into the list indexes under sort key sk: the partner's GSI3 partition
// partnerPK(partnerID) and the organization's GSI4 partition orgPK(orgID).
func (k *Keys) SetList(partnerPK, orgPK func(id string) string, partnerID, orgID, sk string) {
	k.GSI3PK, k.GSI3SK = "", ""
	if partnerID != "" {
		k.GSI3PK, k.GSI3SK = partnerPK(partnerID), sk
	}
	k.GSI4PK, k.GSI4SK = orgPK(orgID), sk
}
