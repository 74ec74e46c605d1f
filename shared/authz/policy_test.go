package authz_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/role"
)

// The authorization table (STYLE habit 5): one row per case, principal (role x
// scope x restrictions) x resource:action x context rule x target → allowed or
// the exact refusal. Decisions are pure: no emulator.
//
// A row is decided the way a service method decides: Require (or RequireAny, or
// Authenticated when the row names no permission) first, then the context rule,
// then reach over the target organization, site and device groups. A target
// outside the caller's reach is errHidden, the 404 of the API's conventions ("a resource
// of another tenant is 404").

var errHidden = fault.NotFound("Not found")

// Tenancy of the table: partner P1 owns O1 and O2, partner P2 owns O3; OX is an
// organization record without a partner (only to probe a partner principal that
// has no partner id).
var orgPartner = map[string]string{"O1": "P1", "O2": "P1", "O3": "P2", "OX": ""}

// Context rules a row may apply after the permission check.
type rule string

const (
	rNone    rule = ""
	rTenant  rule = "tenant-context"
	rFull    rule = "full-partner-access"
	rOrg     rule = "org-context"
	rMFA     rule = "mfa"
	rSession rule = "user-session"
)

func (r rule) apply(p *authz.Principal) error {
	switch r {
	case rTenant:
		return p.RequireTenantContext()
	case rFull:
		return p.RequireFullPartnerAccess()
	case rOrg:
		return p.RequireOrgContext()
	case rMFA:
		return p.RequireMFA()
	case rSession:
		return p.UserSession()
	}
	return nil
}

// reach checks the row's target: "" (none), "P1" (a partner itself; "P-" is the
// empty partner id), or "ORG[/SITE[/GROUP+GROUP...]]" where "-" is "no site" or
// "no device group".
func reach(p *authz.Principal, at string) error {
	if at == "" {
		return nil
	}
	if strings.HasPrefix(at, "P") {
		id := at
		if at == "P-" {
			id = ""
		}
		if !p.CanAccessPartner(id) {
			return errHidden
		}
		return nil
	}
	parts := strings.Split(at, "/")
	pid, ok := orgPartner[parts[0]]
	if !ok {
		panic("unknown organization in target " + at)
	}
	if !p.CanAccessOrg(authz.Org{ID: parts[0], PartnerID: pid}) {
		return errHidden
	}
	if len(parts) > 1 {
		site := parts[1]
		if site == "-" {
			site = ""
		}
		if !p.CanAccessSite(site) {
			return errHidden
		}
	}
	if len(parts) > 2 {
		var groups []string
		if parts[2] != "-" {
			groups = strings.Split(parts[2], "+")
		}
		if !p.CanAccessDeviceGroups(groups) {
			return errHidden
		}
	}
	return nil
}

var none authz.Permission

type row struct {
	who  string           // a principal of principals()
	perm authz.Permission // asked with Require; none: Authenticated only
	rule rule             // context rule applied after the permission
	at   string           // target, see reach
	want error            // nil: allowed
	or   authz.Permission // when set, RequireAny(perm, or)
}

func (r row) String() string {
	s := r.who + " " + r.perm.String()
	if r.or != none {
		s += "|" + r.or.String()
	}
	if r.rule != rNone {
		s += " " + string(r.rule)
	}
	if r.at != "" {
		s += " @" + r.at
	}
	return s
}

// systemPerms parses the seeded roles' permission lists (shared/role/system.go).
func systemPerms(t testing.TB) map[string]authz.Set {
	out := map[string]authz.Set{}
	for _, r := range role.SystemRoles() {
		var ps []authz.Permission
		for _, s := range r.Permissions {
			p, ok := authz.Parse(s)
			if !ok {
				t.Fatalf("system role %s: unparsable permission %q", r.Name, s)
			}
			ps = append(ps, p)
		}
		out[r.Name] = authz.NewSet(ps...)
	}
	return out
}

// Names of the seeded roles, as in role.SystemRoles().
const (
	sysAdmin     = "System Admin"
	partnerAdmin = "Partner Admin"
	partnerTech  = "Partner Technician"
	partnerView  = "Partner Viewer"
	orgAdmin     = "Org Admin"
	orgTech      = "Org Technician"
	orgView      = "Org Viewer"
)

// principals builds a fresh set of callers (fresh so each row's decision
// tracking starts clean). RoleName records the seeded role a caller holds.
func principals(t testing.TB) map[string]*authz.Principal {
	sys := systemPerms(t)
	usr := func(roleName string, scope authz.Scope, mod func(*authz.Principal)) *authz.Principal {
		p := &authz.Principal{Kind: authz.KindUser, UserID: "u-" + roleName, Scope: scope, RoleName: roleName, Perms: sys[roleName]}
		if p.Perms == nil {
			p.Perms = authz.Set{}
		}
		switch scope {
		case authz.ScopePartner:
			p.PartnerID, p.OrgAccess = "P1", authz.OrgAccessAll
		case authz.ScopeOrg:
			p.PartnerID, p.OrgID = "P1", "O1"
		}
		if mod != nil {
			mod(p)
		}
		return p
	}
	key := func(scopes []string, ceiling authz.Set, mod func(*authz.Principal)) *authz.Principal {
		p := &authz.Principal{Kind: authz.KindAPIKey, APIKeyID: "k1", KeyPrefix: "svc_abcdefgh", KeyScopes: scopes,
			Scope: authz.ScopeOrg, PartnerID: "P1", OrgID: "O1", Perms: ceiling}
		if mod != nil {
			mod(p)
		}
		return p
	}
	mfa := func(p *authz.Principal) { p.MFA = true }
	return map[string]*authz.Principal{
		"anon":         nil,
		"noscope":      usr("", authz.ScopeNone, nil),
		"noscope+mfa":  usr("", authz.ScopeNone, mfa),
		"agent":        {Kind: authz.KindAgent, DeviceID: "d1", Scope: authz.ScopeOrg, OrgID: "O1", PartnerID: "P1"},
		"sysadmin":     usr(sysAdmin, authz.ScopeSystem, nil),
		"sysadmin+mfa": usr(sysAdmin, authz.ScopeSystem, mfa),
		"padmin":       usr(partnerAdmin, authz.ScopePartner, nil),
		"padmin+mfa":   usr(partnerAdmin, authz.ScopePartner, mfa),
		"padmin-sel": usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) {
			p.OrgAccess, p.OrgIDs = authz.OrgAccessSelected, []string{"O1"}
		}),
		"padmin-sel-empty": usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) { p.OrgAccess = authz.OrgAccessSelected }),
		"padmin-none":      usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) { p.OrgAccess = authz.OrgAccessNone }),
		"padmin-unset":     usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) { p.OrgAccess = "" }),
		"padmin-p2":        usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) { p.PartnerID = "P2" }),
		"partner-nopid":    usr(partnerAdmin, authz.ScopePartner, func(p *authz.Principal) { p.PartnerID = "" }),
		"ptech":            usr(partnerTech, authz.ScopePartner, nil),
		"ptech-sel": usr(partnerTech, authz.ScopePartner, func(p *authz.Principal) {
			// O3 belongs to P2: a stale or forged entry must not open it.
			p.OrgAccess, p.OrgIDs = authz.OrgAccessSelected, []string{"O1", "O3"}
		}),
		"pviewer":    usr(partnerView, authz.ScopePartner, nil),
		"oadmin":     usr(orgAdmin, authz.ScopeOrg, nil),
		"oadmin+mfa": usr(orgAdmin, authz.ScopeOrg, mfa),
		"oadmin-o2":  usr(orgAdmin, authz.ScopeOrg, func(p *authz.Principal) { p.OrgID = "O2" }),
		"otech":      usr(orgTech, authz.ScopeOrg, nil),
		"oviewer":    usr(orgView, authz.ScopeOrg, nil),
		"otech-s1":   usr(orgTech, authz.ScopeOrg, func(p *authz.Principal) { p.SiteIDs = []string{"S1"} }),
		"otech-s12":  usr(orgTech, authz.ScopeOrg, func(p *authz.Principal) { p.SiteIDs = []string{"S1", "S2"} }),
		"otech-g1":   usr(orgTech, authz.ScopeOrg, func(p *authz.Principal) { p.DeviceGroupIDs = []string{"G1"} }),
		"otech-s1g1": usr(orgTech, authz.ScopeOrg, func(p *authz.Principal) {
			p.SiteIDs, p.DeviceGroupIDs = []string{"S1"}, []string{"G1"}
		}),
		"org-noorg": usr(orgAdmin, authz.ScopeOrg, func(p *authz.Principal) { p.OrgID = "" }),
		// Custom roles with wildcards.
		"custom-devwild": usr("", authz.ScopeOrg, func(p *authz.Principal) {
			p.Perms = authz.NewSet(authz.Permission{Resource: "devices", Action: "*"})
		}),
		"custom-star-org": usr("", authz.ScopeOrg, func(p *authz.Principal) { p.Perms = authz.NewSet(authz.AdminAll) }),
		// API keys of O1: KeyScopes are the key's scopes, Perms the creator's ceiling.
		"key-empty":    key([]string{}, sys[orgAdmin], nil),
		"key-star":     key([]string{"*"}, sys[orgAdmin], mfa), // mfa: a key never satisfies MFA, whatever it carries
		"key-star-sa":  key([]string{"*"}, authz.NewSet(authz.AdminAll), nil),
		"key-devread":  key([]string{"devices:read"}, sys[orgAdmin], nil),
		"key-devwild":  key([]string{"devices:*"}, sys[orgAdmin], nil),
		"key-starstar": key([]string{"*:*"}, sys[orgAdmin], nil),
		// The creator was demoted to Org Viewer after minting a scripts:write key.
		"key-ceiling": key([]string{"scripts:write", "devices:read"}, sys[orgView], nil),
		"key-sp": key([]string{"devices:read", "alerts:acknowledge"},
			authz.NewSet(authz.DevicesRead, authz.AlertsAck), func(p *authz.Principal) { p.ServicePrincipalID = "sp1" }),
		"key-unknown": key([]string{"devices:reed"}, sys[orgAdmin], nil),
	}
}

var (
	errUnauth  = authz.ErrUnauthenticated
	errForbid  = authz.ErrForbidden
	errKey     = authz.ErrKeyScope
	errCtx     = authz.ErrContextRequired
	errFull    = authz.ErrFullPartnerAccess
	errOrgCtx  = authz.ErrOrgContextRequired
	errMFA     = authz.ErrMFARequired
	errSession = authz.ErrUserSessionOnly
)

// rows are the hand-written cases: scopes, reach, restrictions, keys, rules.
var rows = []row{
	// Nobody, users without a scope, agents.
	{"anon", authz.DevicesRead, rNone, "", errUnauth, none},
	{"anon", none, rNone, "", errUnauth, none},
	{"noscope", none, rNone, "", nil, none},
	{"noscope", authz.DevicesRead, rNone, "", errCtx, none}, // context before permission
	{"noscope", authz.UsersRead, rNone, "", errCtx, none},
	{"noscope", none, rTenant, "", errCtx, none},
	{"noscope", none, rOrg, "", errOrgCtx, none},
	{"noscope", none, rFull, "", nil, none},
	{"noscope", none, rNone, "O1", errHidden, none},
	{"noscope", none, rNone, "P1", errHidden, none},
	{"noscope", none, rMFA, "", errMFA, none},
	{"noscope+mfa", none, rMFA, "", nil, none},
	{"noscope", none, rSession, "", nil, none},
	{"agent", authz.DevicesRead, rNone, "", errForbid, none},
	{"agent", none, rSession, "", errSession, none},
	{"agent", none, rMFA, "", errMFA, none},

	// System scope: every tenant, but no tenant context of its own.
	{"sysadmin", authz.DevicesRead, rNone, "O1", nil, none},
	{"sysadmin", authz.DevicesDelete, rNone, "O3", nil, none},
	{"sysadmin", authz.OrgsDelete, rNone, "O2", nil, none},
	{"sysadmin", authz.SitesWrite, rNone, "O1/S2", nil, none},
	{"sysadmin", authz.DevicesExecute, rNone, "O1/-", nil, none},
	{"sysadmin", authz.RemoteAccess, rNone, "O1/S1/-", nil, none},
	{"sysadmin", authz.DevicesRead, rNone, "O3/-/-", nil, none},
	{"sysadmin", authz.UsersWrite, rNone, "P2", nil, none},
	{"sysadmin", authz.UsersWrite, rTenant, "", errCtx, none},
	{"sysadmin", authz.UsersRead, rFull, "", nil, none},
	{"sysadmin", authz.DevicesRead, rOrg, "", nil, none},
	{"sysadmin", authz.OrgsWrite, rMFA, "", errMFA, none},
	{"sysadmin+mfa", authz.OrgsWrite, rMFA, "O3", nil, none},
	{"sysadmin", authz.AdminAll, rNone, "", nil, none},
	{"sysadmin", none, rSession, "", nil, none},

	// Partner P1, orgAccess all.
	{"padmin", authz.DevicesRead, rNone, "O1", nil, none},
	{"padmin", authz.DevicesWrite, rNone, "O2", nil, none},
	{"padmin", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"padmin", authz.UsersWrite, rNone, "P1", nil, none},
	{"padmin", authz.UsersWrite, rNone, "P2", errHidden, none},
	{"padmin", authz.SitesDelete, rNone, "O1/S1", nil, none},
	{"padmin", authz.DevicesRead, rNone, "O1/-", nil, none},
	{"padmin", authz.DevicesRead, rNone, "O1/S1/-", nil, none},
	{"padmin", authz.UsersWrite, rTenant, "", nil, none},
	{"padmin", authz.UsersWrite, rFull, "", nil, none},
	{"padmin", authz.UsersDelete, rFull, "O2", nil, none},
	{"padmin", authz.DevicesRead, rOrg, "", nil, none},
	{"padmin", authz.OrgsWrite, rMFA, "", errMFA, none},
	{"padmin+mfa", authz.OrgsWrite, rMFA, "O1", nil, none},
	{"padmin", authz.AdminAll, rNone, "", nil, none},
	{"padmin", authz.BillingManage, rNone, "P1", nil, none},

	// Partner P1, orgAccess selected [O1].
	{"padmin-sel", authz.DevicesRead, rNone, "O1", nil, none},
	{"padmin-sel", authz.DevicesRead, rNone, "O2", errHidden, none},
	{"padmin-sel", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"padmin-sel", authz.DevicesExecute, rNone, "O1/S2", nil, none},
	{"padmin-sel", authz.UsersWrite, rFull, "", errFull, none},
	{"padmin-sel", authz.UsersRead, rFull, "O1", errFull, none},
	{"padmin-sel", authz.UsersWrite, rTenant, "", nil, none},
	{"padmin-sel", authz.OrgsRead, rNone, "P1", nil, none},
	{"padmin-sel-empty", authz.DevicesRead, rNone, "O1", errHidden, none},
	{"padmin-sel-empty", authz.UsersWrite, rFull, "", errFull, none},

	// Partner P1, orgAccess none (and unset, which must behave as none).
	{"padmin-none", authz.DevicesRead, rNone, "O1", errHidden, none},
	{"padmin-none", authz.DevicesRead, rNone, "O2", errHidden, none},
	{"padmin-none", authz.UsersWrite, rFull, "", errFull, none},
	{"padmin-none", authz.UsersRead, rTenant, "", nil, none},
	{"padmin-none", authz.OrgsRead, rNone, "P1", nil, none},
	{"padmin-unset", authz.DevicesRead, rNone, "O1", errHidden, none},
	{"padmin-unset", authz.UsersWrite, rFull, "", errFull, none},

	// Another partner (P2, orgAccess all).
	{"padmin-p2", authz.DevicesRead, rNone, "O3", nil, none},
	{"padmin-p2", authz.DevicesRead, rNone, "O1", errHidden, none},
	{"padmin-p2", authz.UsersWrite, rNone, "P1", errHidden, none},
	{"padmin-p2", authz.UsersWrite, rNone, "P2", nil, none},
	{"padmin-p2", authz.SitesRead, rNone, "O2/S1", errHidden, none},

	// A partner principal without a partner id reaches nothing.
	{"partner-nopid", authz.DevicesRead, rNone, "OX", errCtx, none},
	{"partner-nopid", authz.UsersWrite, rNone, "P-", errCtx, none},
	{"partner-nopid", authz.UsersWrite, rTenant, "", errCtx, none},

	// Partner Technician and Partner Viewer.
	{"ptech", authz.DevicesExecute, rNone, "O1", nil, none},
	{"ptech", authz.ScriptsExecute, rNone, "O2/S1", nil, none},
	{"ptech", authz.AlertsAck, rNone, "O2", nil, none},
	{"ptech", authz.DevicesWrite, rNone, "O1", errForbid, none},
	{"ptech", authz.UsersRead, rFull, "", errForbid, none},
	{"ptech", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"ptech", authz.DevicesRead, rNone, "O1/S1/-", nil, none},
	{"ptech-sel", authz.DevicesRead, rNone, "O1", nil, none},
	{"ptech-sel", authz.DevicesRead, rNone, "O2", errHidden, none},
	{"ptech-sel", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"ptech-sel", authz.ScriptsExecute, rNone, "O1/S1/G2", nil, none},
	{"pviewer", authz.DevicesRead, rNone, "O2", nil, none},
	{"pviewer", authz.SitesRead, rNone, "O1/S2", nil, none},
	{"pviewer", authz.DevicesExecute, rNone, "O1", errForbid, none},
	{"pviewer", authz.AlertsAck, rNone, "O1", errForbid, none},
	{"pviewer", authz.OrgsRead, rNone, "P1", nil, none},

	// Organization O1: Org Admin.
	{"oadmin", authz.DevicesRead, rNone, "O1", nil, none},
	{"oadmin", authz.DevicesDelete, rNone, "O1/S2", nil, none},
	{"oadmin", authz.DevicesRead, rNone, "O1/-", nil, none},
	{"oadmin", authz.DevicesRead, rNone, "O1/S1/-", nil, none},
	{"oadmin", authz.DevicesRead, rNone, "O2", errHidden, none},
	{"oadmin", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"oadmin", authz.OrgsRead, rNone, "P1", errHidden, none},
	{"oadmin", authz.OrgsDelete, rNone, "O1", errForbid, none},
	{"oadmin", authz.UsersWrite, rTenant, "O1", nil, none},
	{"oadmin", authz.UsersWrite, rFull, "", nil, none},
	{"oadmin", authz.DevicesRead, rOrg, "", nil, none},
	{"oadmin", authz.OrgsWrite, rMFA, "O1", errMFA, none},
	{"oadmin+mfa", authz.OrgsWrite, rMFA, "O1", nil, none},
	{"oadmin", authz.AdminAll, rNone, "", errForbid, none},
	{"oadmin", authz.BillingManage, rNone, "", errForbid, none},
	{"oadmin", none, rSession, "", nil, none},

	// Organization O2's admin against O1.
	{"oadmin-o2", authz.DevicesRead, rNone, "O1", errHidden, none},
	{"oadmin-o2", authz.UsersRead, rNone, "O1", errHidden, none},
	{"oadmin-o2", authz.SitesRead, rNone, "O1/S1", errHidden, none},
	{"oadmin-o2", authz.DevicesRead, rNone, "O2", nil, none},

	// Org Technician and Org Viewer.
	{"otech", authz.DevicesWrite, rNone, "O1", nil, none},
	{"otech", authz.RemoteAccess, rNone, "O1/S2", nil, none},
	{"otech", authz.ScriptsWrite, rNone, "O1", errForbid, none},
	{"otech", authz.UsersRead, rTenant, "", errForbid, none},
	{"oviewer", authz.DevicesRead, rNone, "O1", nil, none},
	{"oviewer", authz.DevicesWrite, rNone, "O1", errForbid, none},
	{"oviewer", authz.AlertsRead, rNone, "O2", errHidden, none},

	// Site-restricted to S1 (and to S1, S2).
	{"otech-s1", authz.DevicesRead, rNone, "O1/S1", nil, none},
	{"otech-s1", authz.DevicesRead, rNone, "O1/S2", errHidden, none},
	{"otech-s1", authz.DevicesRead, rNone, "O1/-", errHidden, none},
	{"otech-s1", authz.DevicesExecute, rNone, "O1/S1", nil, none},
	{"otech-s1", authz.DevicesDelete, rNone, "O1/S1", errForbid, none},
	{"otech-s1", authz.RemoteAccess, rNone, "O1/S2", errHidden, none},
	{"otech-s1", authz.ScriptsExecute, rNone, "O1/S1/G1", nil, none},
	{"otech-s1", authz.DevicesRead, rNone, "O2/S1", errHidden, none},
	{"otech-s1", authz.SitesRead, rNone, "O1", nil, none},
	{"otech-s12", authz.DevicesRead, rNone, "O1/S2", nil, none},
	{"otech-s12", authz.DevicesRead, rNone, "O1/S3", errHidden, none},

	// Device-group-restricted to G1, and site S1 + group G1.
	{"otech-g1", authz.DevicesRead, rNone, "O1/S1/G1", nil, none},
	{"otech-g1", authz.DevicesRead, rNone, "O1/S1/G2", errHidden, none},
	{"otech-g1", authz.DevicesRead, rNone, "O1/S1/G1+G2", nil, none},
	{"otech-g1", authz.DevicesRead, rNone, "O1/S1/-", errHidden, none},
	{"otech-g1", authz.DevicesExecute, rNone, "O1/S2/G1", nil, none},
	{"otech-g1", authz.DevicesRead, rNone, "O2/S1/G1", errHidden, none},
	{"otech-g1", authz.DevicesRead, rNone, "O1/-/G1", nil, none},
	{"otech-s1g1", authz.DevicesRead, rNone, "O1/S1/G1", nil, none},
	{"otech-s1g1", authz.DevicesRead, rNone, "O1/S2/G1", errHidden, none},
	{"otech-s1g1", authz.DevicesRead, rNone, "O1/S1/G2", errHidden, none},

	// Organization scope without an organization.
	{"org-noorg", authz.DevicesRead, rOrg, "", errOrgCtx, none},
	{"org-noorg", authz.UsersWrite, rTenant, "", errCtx, none},
	{"org-noorg", authz.DevicesRead, rNone, "O1", errHidden, none},

	// Wildcards in custom roles: resource:* and *:*, never beyond the tenant.
	{"custom-devwild", authz.DevicesDelete, rNone, "O1", nil, none},
	{"custom-devwild", authz.DevicesExecute, rNone, "O1/S1", nil, none},
	{"custom-devwild", authz.ScriptsRead, rNone, "O1", errForbid, none},
	{"custom-devwild", authz.AdminAll, rNone, "", errForbid, none},
	{"custom-star-org", authz.OrgsDelete, rNone, "O1", nil, none},
	{"custom-star-org", authz.SSOAdmin, rNone, "O2", errHidden, none},
	{"custom-star-org", authz.AuditExport, rMFA, "", errMFA, none},

	// API keys: scope rules and the creator's ceiling.
	{"key-empty", authz.DevicesRead, rNone, "O1", errKey, none},
	{"key-empty", authz.UsersRead, rNone, "", errKey, none},
	{"key-empty", none, rNone, "O1", nil, none},
	{"key-empty", none, rSession, "", errSession, none},
	{"key-star", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-star", authz.UsersWrite, rNone, "O1", nil, none},
	{"key-star", authz.DevicesRead, rNone, "O2", errHidden, none},
	{"key-star", authz.OrgsDelete, rNone, "", errKey, none},
	{"key-star", authz.AdminAll, rNone, "", errKey, none},
	{"key-star", authz.OrgsWrite, rMFA, "", errMFA, none},
	{"key-star", none, rSession, "", errSession, none},
	{"key-star", authz.AuditRead, rTenant, "", nil, none},
	{"key-star-sa", authz.AdminAll, rNone, "", nil, none},
	{"key-star-sa", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-devread", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-devread", authz.DevicesRead, rNone, "O1/S1/G1", nil, none},
	{"key-devread", authz.DevicesWrite, rNone, "O1", errKey, none},
	{"key-devread", authz.ScriptsRead, rNone, "", errKey, none},
	{"key-devread", authz.DevicesRead, rNone, "O3", errHidden, none},
	{"key-devwild", authz.DevicesDelete, rNone, "O1", nil, none},
	{"key-devwild", authz.ScriptsRead, rNone, "O1", errKey, none},
	{"key-starstar", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-starstar", authz.OrgsDelete, rNone, "O1", errKey, none},
	{"key-ceiling", authz.ScriptsWrite, rNone, "O1", errKey, none},
	{"key-ceiling", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-sp", authz.DevicesRead, rNone, "O1", nil, none},
	{"key-sp", authz.AlertsAck, rNone, "O1", nil, none},
	{"key-sp", authz.DevicesWrite, rNone, "O1", errKey, none},
	{"key-unknown", authz.DevicesRead, rNone, "O1", errKey, none},

	// RequireAny: at least one of the listed permissions.
	{"oviewer", authz.DevicesWrite, rNone, "", nil, authz.DevicesRead},
	{"oviewer", authz.DevicesWrite, rNone, "", errForbid, authz.ScriptsWrite},
	{"key-devread", authz.ScriptsRead, rNone, "O1", nil, authz.DevicesRead},
	{"key-ceiling", authz.ScriptsWrite, rNone, "", errKey, authz.UsersRead},
	{"ptech", authz.DevicesWrite, rNone, "O3", errHidden, authz.DevicesExecute},
}

// matrix is what each seeded role may do, written from the role descriptions
// ("Permissions and system roles"), not from system.go: one line per catalogue
// permission listing the roles that hold it. Every role not listed is refused.
// Each cell is a row: the role's principal, at its own scope, unrestricted.
var matrix = []struct {
	perm    authz.Permission
	holders string
}{
	{authz.DevicesRead, "SA PA PT PV OA OT OV"},
	{authz.DevicesWrite, "SA PA OA OT"},
	{authz.DevicesDelete, "SA PA OA"},
	{authz.DevicesExecute, "SA PA PT OA OT"},
	{authz.ScriptsRead, "SA PA PT PV OA OT OV"},
	{authz.ScriptsWrite, "SA PA OA"},
	{authz.ScriptsDelete, "SA PA OA"},
	{authz.ScriptsExecute, "SA PA PT OA OT"},
	{authz.AlertsRead, "SA PA PT PV OA OT OV"},
	{authz.AlertsWrite, "SA PA OA"},
	{authz.AlertsAck, "SA PA PT OA OT"},
	{authz.UsersRead, "SA PA OA"},
	{authz.UsersWrite, "SA PA OA"},
	{authz.UsersDelete, "SA PA OA"},
	{authz.UsersInvite, "SA PA OA"},
	{authz.OrgsRead, "SA PA PT PV OA"},
	{authz.OrgsWrite, "SA PA OA"},
	{authz.OrgsDelete, "SA PA"},
	{authz.SitesRead, "SA PA PT PV OA OT OV"},
	{authz.SitesWrite, "SA PA OA"},
	{authz.SitesDelete, "SA PA OA"},
	{authz.AutomationsRead, "SA PA OA"},
	{authz.AutomationsWrite, "SA PA OA"},
	{authz.AutomationsDelete, "SA PA OA"},
	{authz.TopologyRead, "SA PA OA"},
	{authz.TopologyWrite, "SA PA OA"},
	{authz.VulnRiskAccept, "SA PA OA"},
	{authz.RemoteAccess, "SA PA OA OT"},
	{authz.AuditRead, "SA PA OA"},
	{authz.AuditExport, "SA PA OA"},
	{authz.SettingsRead, "SA PA OA"},
	{authz.SettingsWrite, "SA PA OA"},
	{authz.ReportsRead, "SA PA"},
	{authz.ReportsWrite, "SA PA"},
	{authz.BackupRead, "SA PA"},
	{authz.BackupWrite, "SA PA"},
	{authz.BillingManage, "SA PA"},
	{authz.SSOAdmin, "SA PA"},
	{authz.AdminAll, "SA PA"},
}

var matrixWho = []struct{ abbr, who string }{
	{"SA", "sysadmin"}, {"PA", "padmin"}, {"PT", "ptech"}, {"PV", "pviewer"},
	{"OA", "oadmin"}, {"OT", "otech"}, {"OV", "oviewer"},
}

// allRows is the whole table: the hand-written rows and the matrix cells.
func allRows() []row {
	out := slices.Clone(rows)
	for _, m := range matrix {
		holders := strings.Fields(m.holders)
		for _, w := range matrixWho {
			var want error = errForbid
			if slices.Contains(holders, w.abbr) {
				want = nil
			}
			out = append(out, row{who: w.who, perm: m.perm, want: want})
		}
	}
	return out
}

// decide runs a row the way a service method would.
func decide(ctx context.Context, r row) error {
	var p *authz.Principal
	var err error
	switch {
	case r.perm == none:
		p, err = authz.Authenticated(ctx)
	case r.or != none:
		p, err = authz.RequireAny(ctx, r.perm, r.or)
	default:
		p, err = authz.Require(ctx, r.perm)
	}
	if err != nil {
		return err
	}
	if err := r.rule.apply(p); err != nil {
		return err
	}
	return reach(p, r.at)
}

// sameRefusal: the refusal is want itself or a copy of it (a 403 for a
// missing permission carries what is missing in its details).
func sameRefusal(got, want error) bool {
	if got == nil || want == nil {
		return got == want
	}
	return errors.Is(got, want)
}

// namesRequired checks that a 403 for a missing permission or key scope names
// it in details.required (issue 35: the caller learns what to ask for).
func namesRequired(t *testing.T, err error, perm authz.Permission) {
	t.Helper()
	fe, _ := fault.As(err)
	d, _ := fe.Details.(map[string]any)
	if d["required"] != perm.String() {
		t.Fatalf("details %v do not name the missing %s", fe.Details, perm)
	}
}

func describe(err error) string {
	if err == nil {
		return "allowed"
	}
	if fe, ok := fault.As(err); ok {
		return fmt.Sprintf("%q (%s)", fe.Message, fe.Code)
	}
	return err.Error()
}

func TestPolicy(t *testing.T) {
	all := allRows()
	if len(all) < 150 {
		t.Fatalf("the table has %d rows, want at least 150", len(all))
	}
	for _, r := range all {
		t.Run(r.String(), func(t *testing.T) {
			ps := principals(t)
			p, ok := ps[r.who]
			if !ok {
				t.Fatalf("unknown principal %q", r.who)
			}
			ctx := context.Background()
			if p != nil {
				ctx = authz.WithPrincipal(ctx, p)
			}
			got := decide(ctx, r)
			if !sameRefusal(got, r.want) {
				t.Fatalf("got %s, want %s", describe(got), describe(r.want))
			}
			if r.want == authz.ErrForbidden || r.want == authz.ErrKeyScope {
				namesRequired(t, got, r.perm)
			}
			if p == nil {
				return
			}
			// Every decision is recorded for the router's check.
			if !(authz.Tracker{}).Checked(ctx) {
				t.Fatal("no authorization decision was recorded")
			}
			// Holds (the ceiling check) agrees with Require on the permission
			// alone, for a caller that has a context to act in.
			if r.perm != none && r.or == none {
				_, err := authz.Require(ctx, r.perm)
				if (p.Holds(r.perm) && p.HasContext()) != (err == nil) {
					t.Fatalf("Holds(%s) = %v but Require says %s", r.perm, p.Holds(r.perm), describe(err))
				}
			}
		})
	}
	t.Logf("%d rows (%d hand-written, %d from the role matrix)", len(all), len(rows), len(all)-len(rows))
}

// TestPolicyCoverage fails when the table misses a permission constant
// (and of the catalogue additions), a seeded role, a context rule or a refusal.
func TestPolicyCoverage(t *testing.T) {
	ps := principals(t)
	all := allRows()
	allowed, refused := map[authz.Permission]bool{}, map[authz.Permission]bool{}
	roles, rules, wants := map[string]bool{}, map[rule]bool{}, map[error]bool{}
	scopes, access := map[authz.Scope]bool{}, map[authz.OrgAccess]bool{}
	keys := 0
	for _, r := range all {
		for _, perm := range []authz.Permission{r.perm, r.or} {
			if perm == none {
				continue
			}
			if r.want == nil {
				allowed[perm] = true
			} else {
				refused[perm] = true
			}
		}
		rules[r.rule] = true
		wants[r.want] = true
		if p := ps[r.who]; p != nil {
			roles[p.RoleName] = true
			scopes[p.Scope] = true
			if p.Scope == authz.ScopePartner {
				access[p.OrgAccess] = true
			}
			if p.Kind == authz.KindAPIKey {
				keys++
			}
		}
	}
	for _, c := range authz.Catalog {
		if !allowed[c.Permission] {
			t.Errorf("permission %s has no row where it is allowed", c.Permission)
		}
		if !refused[c.Permission] {
			t.Errorf("permission %s has no row where it is refused", c.Permission)
		}
	}
	for _, m := range matrix {
		if !authz.Known(m.perm) {
			t.Errorf("matrix names %s, which is not in the catalogue", m.perm)
		}
	}
	if len(matrix) != len(authz.Catalog) {
		t.Errorf("matrix has %d permissions, the catalogue %d", len(matrix), len(authz.Catalog))
	}
	for _, r := range role.SystemRoles() {
		if !roles[r.Name] {
			t.Errorf("seeded role %s has no row", r.Name)
		}
	}
	for _, r := range []rule{rNone, rTenant, rFull, rOrg, rMFA, rSession} {
		if !rules[r] {
			t.Errorf("context rule %q has no row", r)
		}
	}
	for _, e := range []error{nil, errUnauth, errForbid, errKey, errCtx, errFull, errOrgCtx, errMFA, errSession, errHidden} {
		if !wants[e] {
			t.Errorf("outcome %s has no row", describe(e))
		}
	}
	for _, s := range []authz.Scope{authz.ScopeNone, authz.ScopeSystem, authz.ScopePartner, authz.ScopeOrg} {
		if !scopes[s] {
			t.Errorf("scope %q has no row", s)
		}
	}
	for _, a := range []authz.OrgAccess{authz.OrgAccessAll, authz.OrgAccessSelected, authz.OrgAccessNone} {
		if !access[a] {
			t.Errorf("partner orgAccess %q has no row", a)
		}
	}
	if keys == 0 {
		t.Error("no API-key rows")
	}
}

// TestRefusalTexts pins each refusal to the spec's status and message.
func TestRefusalTexts(t *testing.T) {
	cases := []struct {
		err  error
		kind fault.Kind
		msg  string
		code string
	}{
		{authz.ErrUnauthenticated, fault.KindUnauthorized, "Authentication required", fault.CodeUnauthorized},
		{authz.ErrForbidden, fault.KindForbidden, "Insufficient permissions", fault.CodeForbidden},
		{authz.ErrKeyScope, fault.KindForbidden, "API key does not have required permissions", fault.CodeForbidden},
		{authz.ErrContextRequired, fault.KindForbidden, "Partner or organization context required", fault.CodeForbidden},
		{authz.ErrFullPartnerAccess, fault.KindForbidden, "Full partner organization access required", fault.CodeForbidden},
		{authz.ErrOrgContextRequired, fault.KindForbidden, "Organization context required", fault.CodeForbidden},
		{authz.ErrMFARequired, fault.KindForbidden, "MFA required", fault.CodeMFARequired},
	}
	for _, c := range cases {
		fe, ok := fault.As(c.err)
		if !ok || fe.Kind != c.kind || fe.Message != c.msg || fe.Code != c.code {
			t.Errorf("%v: got %+v, want kind %d %q %s", c.err, fe, c.kind, c.msg, c.code)
		}
	}
}

// TestVisible is the list-side table: which organizations a caller's lists include.
func TestVisible(t *testing.T) {
	ps := principals(t)
	cases := []struct {
		who  string
		want authz.Visibility
	}{
		{"sysadmin", authz.Visibility{All: true}},
		{"padmin", authz.Visibility{PartnerID: "P1"}},
		{"padmin-p2", authz.Visibility{PartnerID: "P2"}},
		{"padmin-sel", authz.Visibility{OrgIDs: []string{"O1"}}},
		{"padmin-sel-empty", authz.Visibility{}},
		{"padmin-none", authz.Visibility{}},
		{"padmin-unset", authz.Visibility{}},
		{"oadmin", authz.Visibility{OrgIDs: []string{"O1"}}},
		{"oadmin-o2", authz.Visibility{OrgIDs: []string{"O2"}}},
		{"otech-s1", authz.Visibility{OrgIDs: []string{"O1"}}},
		{"org-noorg", authz.Visibility{}},
		{"noscope", authz.Visibility{}},
		{"key-star", authz.Visibility{OrgIDs: []string{"O1"}}},
	}
	for _, c := range cases {
		got := ps[c.who].Visible()
		if got.All != c.want.All || got.PartnerID != c.want.PartnerID || !slices.Equal(got.OrgIDs, c.want.OrgIDs) {
			t.Errorf("%s: Visible() = %+v, want %+v", c.who, got, c.want)
		}
	}
	// The list a caller gets must not alias the principal's own slice.
	p := ps["padmin-sel"]
	v := p.Visible()
	v.OrgIDs[0] = "O2"
	if p.OrgIDs[0] != "O1" {
		t.Error("Visible shares its OrgIDs with the principal")
	}
}
