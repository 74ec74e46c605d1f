package authz

import (
	"slices"
	"strings"
)

// Permission is a resource:action pair. The wildcard is {"*", "*"}.
type Permission struct {
	Resource string `json:"resource" dynamodbav:"resource"`
	Action   string `json:"action" dynamodbav:"action"`
}

// String renders resource:action.
func (p Permission) String() string { return p.Resource + ":" + p.Action }

// Parse reads "resource:action".
func Parse(s string) (Permission, bool) {
	r, a, ok := strings.Cut(s, ":")
	if !ok || r == "" || a == "" {
		return Permission{}, false
	}
	return Permission{Resource: r, Action: a}, true
}

// The permissions routes check (their descriptions are in Catalog and in
// GET /permissions/catalog).
var (
	DevicesRead       = Permission{"devices", "read"}
	DevicesWrite      = Permission{"devices", "write"}
	DevicesDelete     = Permission{"devices", "delete"}
	DevicesExecute    = Permission{"devices", "execute"}
	ScriptsRead       = Permission{"scripts", "read"}
	ScriptsWrite      = Permission{"scripts", "write"}
	ScriptsDelete     = Permission{"scripts", "delete"}
	ScriptsExecute    = Permission{"scripts", "execute"}
	AlertsRead        = Permission{"alerts", "read"}
	AlertsWrite       = Permission{"alerts", "write"}
	AlertsAck         = Permission{"alerts", "acknowledge"}
	UsersRead         = Permission{"users", "read"}
	UsersWrite        = Permission{"users", "write"}
	UsersDelete       = Permission{"users", "delete"}
	UsersInvite       = Permission{"users", "invite"}
	OrgsRead          = Permission{"organizations", "read"}
	OrgsWrite         = Permission{"organizations", "write"}
	OrgsDelete        = Permission{"organizations", "delete"}
	SitesRead         = Permission{"sites", "read"}
	SitesWrite        = Permission{"sites", "write"}
	SitesDelete       = Permission{"sites", "delete"}
	AutomationsRead   = Permission{"automations", "read"}
	AutomationsWrite  = Permission{"automations", "write"}
	AutomationsDelete = Permission{"automations", "delete"}
	TopologyRead      = Permission{"topology", "read"}
	TopologyWrite     = Permission{"topology", "write"}
	VulnRiskAccept    = Permission{"vulnerabilities", "accept_risk"}
	RemoteAccess      = Permission{"remote", "access"}
	AuditRead         = Permission{"audit", "read"}
	AuditExport       = Permission{"audit", "export"}
	AdminAll          = Permission{"*", "*"}

	// Catalogue entries beyond the route constants (settings, reports, backup,
	// billing, SSO), listed by GET /permissions/catalog.
	SettingsRead  = Permission{"settings", "read"}
	SettingsWrite = Permission{"settings", "write"}
	ReportsRead   = Permission{"reports", "read"}
	ReportsWrite  = Permission{"reports", "write"}
	BackupRead    = Permission{"backup", "read"}
	BackupWrite   = Permission{"backup", "write"}
	BillingManage = Permission{"billing", "manage"}
	SSOAdmin      = Permission{"sso", "admin"}
)

// CatalogEntry is one row of GET /permissions/catalog.
type CatalogEntry struct {
	Permission
	Description string `json:"description"`
}

// Catalog is every assignable permission, in a stable order.
var Catalog = []CatalogEntry{
	{DevicesRead, "View devices and their inventory"},
	{DevicesWrite, "Change device settings, groups and filters"},
	{DevicesDelete, "Remove devices"},
	{DevicesExecute, "Run actions on devices, approve elevation"},
	{ScriptsRead, "View scripts"},
	{ScriptsWrite, "Create and edit scripts"},
	{ScriptsDelete, "Delete scripts"},
	{ScriptsExecute, "Run scripts on devices"},
	{AlertsRead, "View alerts"},
	{AlertsWrite, "Create and resolve alerts"},
	{AlertsAck, "Acknowledge alerts"},
	{UsersRead, "View users, roles and access reviews"},
	{UsersWrite, "Change users, roles and access reviews"},
	{UsersDelete, "Remove users from a scope and delete roles"},
	{UsersInvite, "Invite users"},
	{OrgsRead, "View organizations, keys, webhooks and SSO"},
	{OrgsWrite, "Change organizations, keys, webhooks and SSO"},
	{OrgsDelete, "Delete organizations"},
	{SitesRead, "View sites"},
	{SitesWrite, "Create and change sites"},
	{SitesDelete, "Delete sites"},
	{AutomationsRead, "View automations"},
	{AutomationsWrite, "Create and change automations"},
	{AutomationsDelete, "Delete automations"},
	{TopologyRead, "View network topology"},
	{TopologyWrite, "Change network topology"},
	{VulnRiskAccept, "Accept vulnerability risk"},
	{RemoteAccess, "Open remote sessions"},
	{AuditRead, "View the audit log"},
	{AuditExport, "Export the audit log"},
	{SettingsRead, "View settings"},
	{SettingsWrite, "Change settings"},
	{ReportsRead, "View reports"},
	{ReportsWrite, "Create reports"},
	{BackupRead, "View backups"},
	{BackupWrite, "Manage backups"},
	{BillingManage, "Manage billing"},
	{SSOAdmin, "Administer single sign-on"},
	{AdminAll, "Full administration (wildcard)"},
}

// Known reports whether p is in the catalogue.
func Known(p Permission) bool {
	for _, c := range Catalog {
		if c.Permission == p {
			return true
		}
	}
	return false
}

// CatalogResources are the twelve resources of GET /roles/permissions/available.
var CatalogResources = []string{"devices", "scripts", "alerts", "automations", "reports", "backup", "billing", "users", "settings", "organizations", "sites", "remote"}

// CatalogActions are the actions of GET /roles/permissions/available: every
// action the catalogue uses (wildcard aside), in catalogue order, so that each
// listed action names a permission some route checks. (Words such as "view" or
// "create" are no permission of any route and could not be granted.)
func CatalogActions() []string {
	var out []string
	for _, c := range Catalog {
		if c.Action != "*" && !slices.Contains(out, c.Action) {
			out = append(out, c.Action)
		}
	}
	return out
}

// Set is a set of permissions with wildcard matching.
type Set map[Permission]bool

// NewSet builds a set.
func NewSet(ps ...Permission) Set {
	s := Set{}
	for _, p := range ps {
		s[p] = true
	}
	return s
}

// Has reports whether the set grants p: exactly, by "*:*", or by "<resource>:*".
func (s Set) Has(p Permission) bool {
	return s[p] || s[AdminAll] || s[Permission{p.Resource, "*"}]
}

// List returns the set as resource:action strings.
func (s Set) List() []Permission {
	out := make([]Permission, 0, len(s))
	for p := range s {
		out = append(out, p)
	}
	return out
}
