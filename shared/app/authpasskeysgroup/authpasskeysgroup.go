// Package authpasskeysgroup wires the auth-passkeys function (/api/v1/auth/passkeys
// and /api/v1/auth/mfa/passkey). Passkeys are their own function because
// WebAuthn verification would push the auth function past its size budget.
package authpasskeysgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/signingroup"
	"github.com/gale-rmm/gale/shared/mfa"
	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/tenant"
)

// AuthPasskeys builds the passkey routes.
func AuthPasskeys(d *app.Deps) (http.Handler, error) {
	svc, err := Passkeys(d)
	if err != nil {
		return nil, err
	}
	rt := d.Router()
	(&passkey.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}

// Passkeys builds the passkey service with the WebAuthn relying party of the
// configuration (WEBAUTHN_RP_ID, WEBAUTHN_RP_NAME, WEBAUTHN_ORIGINS).
func Passkeys(d *app.Deps) (*passkey.Service, error) {
	rp, err := passkey.RelyingParty(d.Cfg.WebAuthnRPID, d.Cfg.WebAuthnRPName, d.Cfg.WebAuthnOrigins)
	if err != nil {
		return nil, err
	}
	return &passkey.Service{Store: passkey.Store{St: d.Store}, Users: d.Users, SignIn: signingroup.SignIn(d),
		Policy: mfa.OrgPolicy{Users: d.Users, Orgs: tenant.Store{St: d.Store}}, Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock: d.Clock, RP: rp}, nil
}
