package app

import (
	"github.com/gale-rmm/gale/shared/mfa"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/tenant"
)

// MFA builds the TOTP, SMS and recovery-code service.
func (d *Deps) MFA() (*mfa.Service, error) {
	box, err := secret.New(d.Cfg.EncryptionKey)
	if err != nil {
		return nil, err
	}
	return &mfa.Service{St: d.Store, Users: d.Users, SignIn: d.SignIn(), Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock: d.Clock, Box: box, CodeKey: secret.Derive(d.Cfg.EncryptionKey, "mfa-codes"), SMS: d.EnableNotify(),
		Settings: tenant.Store{St: d.Store}, Enable2FA: d.Cfg.Enable2FA}, nil
}
