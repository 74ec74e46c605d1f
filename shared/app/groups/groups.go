// Package groups is the registry of every route group's builder, for the
// processes that serve them all: the local runtime, the invoke tool and tests.
// A Lambda function's main imports only its own group's wiring package, so the
// dependencies (and package initialisers) of other groups are not linked into it.
package groups

import (
	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/accessreviewsgroup"
	"github.com/gale-rmm/gale/shared/app/admingroup"
	"github.com/gale-rmm/gale/shared/app/agentsgroup"
	"github.com/gale-rmm/gale/shared/app/alertsgroup"
	"github.com/gale-rmm/gale/shared/app/apikeysgroup"
	"github.com/gale-rmm/gale/shared/app/auditlogsgroup"
	"github.com/gale-rmm/gale/shared/app/authgroup"
	"github.com/gale-rmm/gale/shared/app/authpasskeysgroup"
	"github.com/gale-rmm/gale/shared/app/devicesgroup"
	"github.com/gale-rmm/gale/shared/app/enrollmentkeysgroup"
	"github.com/gale-rmm/gale/shared/app/filtersgroup"
	"github.com/gale-rmm/gale/shared/app/healthgroup"
	"github.com/gale-rmm/gale/shared/app/organizationsgroup"
	"github.com/gale-rmm/gale/shared/app/pamgroup"
	"github.com/gale-rmm/gale/shared/app/rolesgroup"
	"github.com/gale-rmm/gale/shared/app/scriptsgroup"
	"github.com/gale-rmm/gale/shared/app/searchgroup"
	"github.com/gale-rmm/gale/shared/app/serviceprincipalsgroup"
	"github.com/gale-rmm/gale/shared/app/sitesgroup"
	"github.com/gale-rmm/gale/shared/app/ssogroup"
	"github.com/gale-rmm/gale/shared/app/usersgroup"
	"github.com/gale-rmm/gale/shared/app/webhooksgroup"
)

// Builders maps each HTTP function of routes.Groups to its builder.
func Builders() map[string]app.Builder {
	return map[string]app.Builder{
		"health":             healthgroup.Health,
		"api-keys":           apikeysgroup.APIKeys,
		"enrollment-keys":    enrollmentkeysgroup.EnrollmentKeys,
		"service-principals": serviceprincipalsgroup.ServicePrincipals,
		"filters":            filtersgroup.Filters,
		"audit-logs":         auditlogsgroup.AuditLogs,
		"search":             searchgroup.Search,
		"users":              usersgroup.Users,
		"roles":              rolesgroup.Roles,
		"auth":               authgroup.Auth,
		"auth-passkeys":      authpasskeysgroup.AuthPasskeys,
		"sso":                ssogroup.SSO,
		"access-reviews":     accessreviewsgroup.AccessReviews,
		"admin":              admingroup.Admin,
		"pam":                pamgroup.PAM,
		"devices":            devicesgroup.Devices,
		"agents":             agentsgroup.Agents,
		"webhooks":           webhooksgroup.Webhooks,
		"organizations":      organizationsgroup.Organizations,
		"sites":              sitesgroup.Sites,
		"scripts":            scriptsgroup.Scripts,
		"alerts":             alertsgroup.Alerts,
	}
}
