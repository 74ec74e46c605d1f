package app

import (
	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/ratelimit"
)

// Passkeys builds the passkey service with the WebAuthn relying party of the
// configuration (WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGINS).
func (d *Deps) Passkeys() (*passkey.Service, error) {
	rp, err := passkey.RelyingParty(d.Cfg.WebAuthnRPID, d.Cfg.WebAuthnRPName, d.Cfg.WebAuthnOrigins)
	if err != nil {
		return nil, err
	}
	return &passkey.Service{Store: passkey.Store{St: d.Store}, Users: d.Users, SignIn: d.SignIn(),
		Policy: d.MFAPolicy(), Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock: d.Clock, RP: rp}, nil
}
