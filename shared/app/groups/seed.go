package groups

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/app/signingroup"

	"github.com/gale-rmm/gale/shared/app"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Fixed ids of the demo data, so a second `make run` finds it.
const (
	DemoPartnerID = "d0000000-0000-4000-8000-000000000001"
	DemoOrgAcmeID = "d0000000-0000-4000-8000-000000000011"
	DemoOrgBetaID = "d0000000-0000-4000-8000-000000000012"
)

// Seeded describes the demo data, for the local runtime's banner.
type Seeded struct {
	Lines []string
}

// Banner is what the local runtime prints after start.
func (s Seeded) Banner() string {
	if len(s.Lines) == 0 {
		return ""
	}
	return "\n" + strings.Join(s.Lines, "\n") + "\n"
}

// Seed bootstraps the system administrator and creates the demo data once: a
// partner with an administrator, two organizations with sites, and an
// organization administrator. It is for local runs only.
func Seed(ctx context.Context, d *app.Deps) (Seeded, error) {
	if err := signingroup.Bootstrap(ctx, d); err != nil {
		return Seeded{}, err
	}
	pw := d.Cfg.SystemAdminPassword
	out := Seeded{Lines: []string{
		"Demo sign-in (POST /api/v1/auth/login with {\"email\", \"password\"}), password for all: " + pw,
		"  system admin:   " + d.Cfg.SystemAdminEmail,
		"  partner admin:  partner-admin@gale.local  (Demo MSP; its role forces MFA: enrol TOTP first)",
		"  org admin:      acme-admin@gale.local     (Acme Corp)",
		"  org technician: beta-tech@gale.local      (Beta Industries)",
	}}
	created, err := tenant.Store{St: d.Store}.Seed(ctx, d.Clock, DemoPartnerID, "Demo MSP", []tenant.SeedOrg{
		{ID: DemoOrgAcmeID, Name: "Acme Corp", Sites: []string{"Headquarters", "Warehouse"}},
		{ID: DemoOrgBetaID, Name: "Beta Industries", Sites: []string{"Main Office"}},
	})
	if err != nil {
		return Seeded{}, fmt.Errorf("seed tenants: %w", err)
	}
	if !created {
		return out, nil
	}
	for _, n := range []signingroup.NewUser{
		{Email: "partner-admin@gale.local", Name: "Demo Partner Admin", Scope: authz.ScopePartner,
			PartnerID: DemoPartnerID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll},
		{Email: "acme-admin@gale.local", Name: "Acme Admin", Scope: authz.ScopeOrg, OrgID: DemoOrgAcmeID, RoleID: role.OrgAdminID},
		{Email: "beta-tech@gale.local", Name: "Beta Technician", Scope: authz.ScopeOrg, OrgID: DemoOrgBetaID, RoleID: role.OrgTechnicianID},
	} {
		if _, err := signingroup.CreateUser(ctx, d, n, pw); err != nil && !errors.Is(err, signingroup.ErrEmailTaken) {
			return Seeded{}, err
		}
	}
	return out, nil
}
