package mfa

import (
	"context"
	"slices"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// OrgPolicy reads the organization MFA policy binding a user's account. MFA
// factors belong to the account, not to one session's scope, so it combines the
// security settings of every organization the user is a member of, strictest
// wins: MFA is required when any of them requires it, and a method is allowed
// only when every one of them allows it. Partner, system and scope-less
// memberships carry no policy. Cost: one query of the user's memberships and one
// GetItem of security settings per organization membership. It is the Policy of
// this package and of shared/passkey, so the two can never disagree on it.
type OrgPolicy struct {
	Users user.Store
	Orgs  tenant.Store
}

// UserMFAPolicy implements Policy (and passkey.Policy).
func (p OrgPolicy) UserMFAPolicy(ctx context.Context, userID string) (requireMFA bool, allowedMethods []string, err error) {
	allowed := slices.Clone(tenant.MFAMethods)
	ms, err := p.Users.Memberships(ctx, userID)
	if err != nil {
		return false, nil, err
	}
	for _, m := range ms {
		if m.Scope != authz.ScopeOrg || m.OrgID == "" {
			continue
		}
		sec, err := p.Orgs.SecuritySettings(ctx, m.OrgID)
		if err != nil {
			return false, nil, err
		}
		requireMFA = requireMFA || sec.RequireMFA
		allowed = slices.DeleteFunc(allowed, func(x string) bool { return !slices.Contains(sec.AllowedMFAMethods, x) })
	}
	return requireMFA, allowed, nil
}
