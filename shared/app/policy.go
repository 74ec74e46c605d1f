package app

import (
	"github.com/gale-rmm/gale/shared/mfa"
	"github.com/gale-rmm/gale/shared/tenant"
)

// NewMFAPolicy is the organization MFA policy reader (mfa.OrgPolicy) that
// shared/mfa and shared/passkey both use, so the two can never disagree on it.
func NewMFAPolicy(d *Deps) mfa.OrgPolicy {
	return mfa.OrgPolicy{Users: d.Users, Orgs: tenant.Store{St: d.Store}}
}
