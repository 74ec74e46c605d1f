// Package authgroup wires the auth function (/api/v1/auth, except passkeys):
// sign-in, registration, password flows, invitation acceptance, TOTP, SMS,
// recovery codes and the requester's account deletion routes.
package authgroup

import (
	"net/http"

	"github.com/gale-rmm/gale/shared/app/signingroup"
	"github.com/gale-rmm/gale/shared/tenant"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/deletiongroup"
	"github.com/gale-rmm/gale/shared/deletion"
	"github.com/gale-rmm/gale/shared/invite"
	"github.com/gale-rmm/gale/shared/mfa"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/signin"
)

// Auth builds the /auth group. Building it does no I/O: the system
// administrator is created by the sweeper's bootstrap job (and by the local
// runtime), never on a cold start.
func Auth(d *app.Deps) (http.Handler, error) {
	rt := d.Router()
	(&signin.Handler{Svc: signingroup.SignIn(d)}).Routes(rt)
	mfaSvc, err := MFA(d)
	if err != nil {
		return nil, err
	}
	(&mfa.Handler{Svc: mfaSvc}).Routes(rt)
	(&invite.Handler{Svc: Invite(d)}).Routes(rt)
	del := deletiongroup.Service(d)
	del.Verify = passhash.Verify
	(&deletion.Handler{Svc: del}).Routes(rt)
	(&session.KeysHandler{Keys: d.Sessions.Signer.Keys}).Routes(rt)
	return d.Edge(rt), nil
}

// Invite builds the accept-invite and invitation preview service.
func Invite(d *app.Deps) *invite.Service {
	return &invite.Service{St: d.Store, SignIn: signingroup.SignIn(d), Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock}, Clock: d.Clock}
}

// MFA builds the TOTP, SMS and recovery-code service.
func MFA(d *app.Deps) (*mfa.Service, error) {
	box, err := secret.New(d.Cfg.EncryptionKey, d.Cfg.PreviousEncryptionKeys...)
	if err != nil {
		return nil, err
	}
	return &mfa.Service{St: d.Store, Users: d.Users, SignIn: signingroup.SignIn(d), Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock},
		Clock: d.Clock, Box: box, CodeKey: secret.Derive(d.Cfg.EncryptionKey, "mfa-codes"), SMS: d.Notify,
		Policy: mfa.OrgPolicy{Users: d.Users, Orgs: tenant.Store{St: d.Store}}, Enable2FA: d.Cfg.Enable2FA}, nil
}
