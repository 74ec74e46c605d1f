// Package signingroup wires the sign-in service and creates accounts outside
// the invitation flow: the configured system administrator (Bootstrap, run by
// the sweeper's bootstrap job and the local runtime, never on a cold start) and
// the demo users. Only the functions that sign people in or create accounts
// import it, so only they link password hashing and the password rules.
package signingroup

import (
	"context"
	"errors"
	"fmt"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/sso/enforce"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// SignIn builds the sign-in service (used by the auth and auth-passkeys groups).
func SignIn(d *app.Deps) *signin.Service {
	return &signin.Service{St: d.Store, Users: d.Users, Sessions: d.Sessions, Events: d.Events,
		Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock}, Clock: d.Clock, Enable2FA: d.Cfg.Enable2FA,
		Queue: d.Notify, Mail: d.Notify, AppURL: d.Cfg.AppURL, EnableRegistration: d.Cfg.EnableRegistration,
		SSO: enforce.Store{St: d.Store}}
}

// Bootstrap creates the system administrator named by
// SYSTEM_ADMIN_EMAIL / SYSTEM_ADMIN_PASSWORD if that e-mail is not taken. In
// production a weak or missing password is refused.
func Bootstrap(ctx context.Context, d *app.Deps) error {
	_, err := BootstrapCount(ctx, d)
	return err
}

// BootstrapCount is Bootstrap as a sweeper job: it answers 1 when it created the
// administrator, 0 when there was nothing to do.
func BootstrapCount(ctx context.Context, d *app.Deps) (int, error) {
	email, pw := user.NormalizeEmail(d.Cfg.SystemAdminEmail), d.Cfg.SystemAdminPassword
	if email == "" {
		return 0, nil
	}
	if err := signin.CheckPassword("SYSTEM_ADMIN_PASSWORD", pw); err != nil {
		if d.Cfg.Production() || pw == "" {
			return 0, fmt.Errorf("bootstrap: SYSTEM_ADMIN_PASSWORD is missing or too weak: %w", err)
		}
	}
	if _, err := d.Users.ByEmail(ctx, email); err == nil {
		return 0, nil
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	_, err := CreateUser(ctx, d, NewUser{Email: email, Name: "System Administrator",
		Scope: authz.ScopeSystem, RoleID: role.SystemAdminID}, pw)
	switch {
	case errors.Is(err, ErrEmailTaken):
		return 0, nil
	case err != nil:
		return 0, err
	}
	return 1, nil
}

// NewUser describes an active user created outside the invitation flow
// (bootstrap, demo data).
type NewUser = user.NewActive

// ErrEmailTaken is CreateUser's answer for an address already registered.
var ErrEmailTaken = user.ErrEmailTaken

// CreateUser creates an active user with one membership of a built-in role
// and the given password (user.CreateActive).
func CreateUser(ctx context.Context, d *app.Deps, n NewUser, password string) (*user.User, error) {
	h, err := passhash.Hash(password)
	if err != nil {
		return nil, err
	}
	n.PasswordHash, n.RoleOwner = h, role.SystemOwner
	return user.CreateActive(ctx, d.Store, d.Clock, n)
}
