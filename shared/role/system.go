package role

import (
	"github.com/gale-rmm/gale/shared/authz"
)

// Fixed ids of the system roles, so every environment agrees on them. The roles
// live in code only (SystemRoles): nothing writes them to the table.
const (
	SystemAdminID       = "00000000-0000-4000-8000-000000000001"
	PartnerAdminID      = "00000000-0000-4000-8000-000000000002"
	PartnerTechnicianID = "00000000-0000-4000-8000-000000000003"
	PartnerViewerID     = "00000000-0000-4000-8000-000000000004"
	OrgAdminID          = "00000000-0000-4000-8000-000000000005"
	OrgTechnicianID     = "00000000-0000-4000-8000-000000000006"
	OrgViewerID         = "00000000-0000-4000-8000-000000000007"
)

func perms(ps ...authz.Permission) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.String()
	}
	return out
}

// SystemRoles are the immutable system roles; this table is their definition.
func SystemRoles() []Role {
	a := authz.AdminAll
	orgAdmin := []authz.Permission{
		authz.DevicesRead, authz.DevicesWrite, authz.DevicesDelete, authz.DevicesExecute,
		authz.ScriptsRead, authz.ScriptsWrite, authz.ScriptsDelete, authz.ScriptsExecute,
		authz.AlertsRead, authz.AlertsWrite, authz.AlertsAck,
		authz.UsersRead, authz.UsersWrite, authz.UsersDelete, authz.UsersInvite,
		authz.SitesRead, authz.SitesWrite, authz.SitesDelete,
		authz.AutomationsRead, authz.AutomationsWrite, authz.AutomationsDelete,
		authz.TopologyRead, authz.TopologyWrite, authz.RemoteAccess,
		authz.AuditRead, authz.AuditExport, authz.VulnRiskAccept,
		authz.OrgsRead, authz.OrgsWrite, authz.SettingsRead, authz.SettingsWrite,
	}
	mk := func(id string, scope authz.Scope, name, desc string, forceMFA bool, ps ...authz.Permission) Role {
		return Role{ID: id, Owner: SystemOwner, Scope: scope, Name: name, Description: desc,
			IsSystem: true, ForceMFA: forceMFA, Permissions: perms(ps...)}
	}
	return []Role{
		mk(SystemAdminID, authz.ScopeSystem, "System Admin", "Full platform administration", false, a),
		mk(PartnerAdminID, authz.ScopePartner, "Partner Admin", "Full administration of the partner", true, a),
		mk(PartnerTechnicianID, authz.ScopePartner, "Partner Technician", "Operate devices, scripts and alerts across organizations", false,
			authz.DevicesRead, authz.DevicesExecute, authz.ScriptsRead, authz.ScriptsExecute,
			authz.AlertsRead, authz.AlertsAck, authz.OrgsRead, authz.SitesRead),
		mk(PartnerViewerID, authz.ScopePartner, "Partner Viewer", "Read-only access across organizations", false,
			authz.DevicesRead, authz.ScriptsRead, authz.AlertsRead, authz.OrgsRead, authz.SitesRead),
		mk(OrgAdminID, authz.ScopeOrg, "Org Admin", "Full administration of the organization", false, orgAdmin...),
		mk(OrgTechnicianID, authz.ScopeOrg, "Org Technician", "Operate devices, scripts and alerts", false,
			authz.DevicesRead, authz.DevicesWrite, authz.DevicesExecute, authz.ScriptsRead, authz.ScriptsExecute,
			authz.AlertsRead, authz.AlertsAck, authz.SitesRead, authz.RemoteAccess),
		mk(OrgViewerID, authz.ScopeOrg, "Org Viewer", "Read-only access to the organization", false,
			authz.DevicesRead, authz.ScriptsRead, authz.AlertsRead, authz.SitesRead),
	}
}

// OrgAdminSet is the permission set of the Org Admin system role: holding all
// of it makes a member an administrator of its organization (the last one of
// whom cannot be removed).
func OrgAdminSet() authz.Set {
	r, _ := systemRole(OrgAdminID)
	return authz.NewSet(r.PermissionList()...)
}
