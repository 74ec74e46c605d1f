// Package role owns roles: the system roles (immutable, defined by SystemRoles),
// custom roles owned by a partner or an organization, single-parent inheritance
// with cycle rejection, and effective permissions with their source role.
//
// Rows (PK / SK, GSI1):
//
//	role           ROLES#<owner> / ROLE#<id>     GSI1 ROLEREF#<id> / ROLE   owner is SYSTEM, PARTNER#<id> or ORG#<id>
//	role name      ROLES#<owner> / NAME#<lower>  -                          unique name per owner, same transaction
//
// A role is read by its full key when its owner is known (memberships store it),
// and through GSI1 when a path gives only the id; the service then checks that the
// caller may see the owner. Permissions are stored as "resource:action" strings.
//
// A parent is a system role of the owner's scope or a custom role of the same
// owner, so a chain is read from one ByOwner query plus code (SystemRoles);
// Owned resolves every custom role of an owner that way (the users package's
// last-administrator check).
// Custom roles carry a version (compare-and-swap on every change) and a
// childCount kept in the same transaction as each child's create, re-parent and
// delete, so a delete conditioned on childCount = 0 cannot race a new child into
// an orphan. The name guard is written and removed in the role's transactions.
package role

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
)

// Owner keys.
const SystemOwner = "SYSTEM"

// PartnerOwner is the owner key of a partner's roles.
func PartnerOwner(partnerID string) string { return store.PartnerPK(partnerID) }

// OrgOwner is the owner key of an organization's roles.
func OrgOwner(orgID string) string { return store.OrgPK(orgID) }

// Role is a set of permissions, optionally inheriting a parent's.
type Role struct {
	store.Keys
	ID        string  `dynamodbav:"id" json:"id"`
	Owner     string  `dynamodbav:"owner" json:"-"`
	PartnerID *string `dynamodbav:"partnerId" json:"partnerId"`
	OrgID     *string `dynamodbav:"orgId" json:"orgId"`
	// OrgPartnerID is the partner of an owning organization, so visibility is
	// decided without reading the organization.
	OrgPartnerID string      `dynamodbav:"orgPartnerId,omitempty" json:"-"`
	ParentRoleID *string     `dynamodbav:"parentRoleId" json:"parentRoleId"`
	ParentOwner  string      `dynamodbav:"parentOwner,omitempty" json:"-"`
	Scope        authz.Scope `dynamodbav:"scope" json:"scope"`
	Name         string      `dynamodbav:"name" json:"name"`
	Description  string      `dynamodbav:"description" json:"description"`
	IsSystem     bool        `dynamodbav:"isSystem" json:"isSystem"`
	ForceMFA     bool        `dynamodbav:"forceMfa" json:"forceMfa"`
	Permissions  []string    `dynamodbav:"permissions" json:"-"`
	// Version increments on every change of a custom role (compare-and-swap).
	Version int `dynamodbav:"version" json:"-"`
	// ChildCount is the number of custom roles naming this one as parent.
	ChildCount int    `dynamodbav:"childCount" json:"-"`
	CreatedAt  string `dynamodbav:"createdAt" json:"createdAt"`
	UpdatedAt  string `dynamodbav:"updatedAt" json:"updatedAt"`
}

// Keys of a role.
func keys(owner, id string) store.Keys {
	return store.Keys{PK: "ROLES#" + owner, SK: "ROLE#" + id, GSI1PK: "ROLEREF#" + id, GSI1SK: "ROLE"}
}

// Key is the primary key of role id of owner (for a batch read of role
// names; system roles are never stored).
func Key(owner, id string) store.KeyRef {
	k := keys(owner, id)
	return store.KeyRef{PK: k.PK, SK: k.SK}
}

// PermissionList returns the direct permissions as pairs.
func (r *Role) PermissionList() []authz.Permission {
	out := make([]authz.Permission, 0, len(r.Permissions))
	for _, s := range r.Permissions {
		if p, ok := authz.Parse(s); ok {
			out = append(out, p)
		}
	}
	return out
}
