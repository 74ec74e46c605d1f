package app

import (
	"context"

	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/tenant"
)

// Passkeys builds the passkey service with the WebAuthn relying party of the
// configuration (WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGINS).
func (d *Deps) Passkeys() (*passkey.Service, error) {
	rp, err := passkey.RelyingParty(d.Cfg.WebAuthnRPID, d.Cfg.WebAuthnRPName, d.Cfg.WebAuthnOrigins)
	if err != nil {
		return nil, err
	}
	return &passkey.Service{Store: passkey.Store{St: d.Store}, Users: d.Users, SignIn: d.SignIn(),
		Policy: orgMFAPolicy{tenant.Store{St: d.Store}}, Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock: d.Clock, RP: rp}, nil
}

// orgMFAPolicy reads an organization's MFA policy from its security settings.
type orgMFAPolicy struct{ st tenant.Store }

func (o orgMFAPolicy) MFAPolicy(ctx context.Context, orgID string) (passkey.Policy, error) {
	sec, err := o.st.SecuritySettings(ctx, orgID)
	if err != nil {
		return passkey.Policy{}, err
	}
	return passkey.Policy{RequireMFA: sec.RequireMFA, AllowedMethods: sec.AllowedMFAMethods}, nil
}
