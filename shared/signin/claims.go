package signin

import (
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/user"
)

// HintOf is the hint of role id of owner: nil for a system role, which is
// never read.
func HintOf(owner, id string) *session.RoleHint {
	if owner == "" || owner == role.SystemOwner || id == "" {
		return nil
	}
	return &session.RoleHint{Owner: owner, ID: id}
}

// MemberClaims are the claims of a session in membership m: its scope and
// tenant, and the hint of its role.
func MemberClaims(m *user.Membership, mfa bool) session.Claims {
	return session.Claims{Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, MFA: mfa, Role: HintOf(m.RoleOwner, m.RoleID)}
}
