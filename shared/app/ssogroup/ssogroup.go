// Package ssogroup wires the sso function (/api/v1/sso): the provider
// service on the outbound guard and client (OUTBOUND_ALLOW_CIDRS,
// OUTBOUND_CA_FILE), the encryption box of client secrets, accounts and
// memberships from shared/user, and shared/signin to finish sign-ins.
package ssogroup

import (
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/signingroup"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/sso"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// Timeout bounds one call to an identity provider.
const Timeout = 10 * time.Second

// SSO builds the sso group.
func SSO(d *app.Deps) (http.Handler, error) {
	svc, err := Service(d)
	if err != nil {
		return nil, err
	}
	rt := d.Router()
	(&sso.Handler{Svc: svc}).Routes(rt)
	return d.Edge(rt), nil
}

// Service builds the /sso service. Building it does no I/O beyond reading the
// CA file when one is set.
func Service(d *app.Deps) (*sso.Service, error) {
	b, err := secret.New(d.Cfg.EncryptionKey)
	if err != nil {
		return nil, fmt.Errorf("sso secrets: %w", err)
	}
	g, err := outbound.NewGuard(d.Cfg.OutboundAllowCIDRs)
	if err != nil {
		return nil, err
	}
	client, err := outbound.NewHTTPClient(g, d.Cfg.OutboundCAFile, Timeout)
	if err != nil {
		return nil, err
	}
	return &sso.Service{St: sso.Store{St: d.Store}, Orgs: tenant.Store{St: d.Store}, Roles: d.Roles,
		Accounts: Accounts{Store: d.Users}, SignIn: signingroup.SignIn(d), Clock: d.Clock, Box: b, Guard: g, HTTP: client,
		AppURL: d.Cfg.AppURL, APIURL: d.Cfg.APIURL}, nil
}

// Accounts adapts shared/user to sso.Accounts.
type Accounts struct{ user.Store }

// Accepted reports whether m grants its role.
func (Accounts) Accepted(m *user.Membership) bool { return m.Active() }

// AccountWrites create u (active, no password) with its e-mail guard.
func (Accounts) AccountWrites(u *user.User) []*store.Write { return user.CreateWrites(u) }

// MembershipWrite creates m as accepted: the account's own SSO sign-in
// accepts it.
func (Accounts) MembershipWrite(m *user.Membership) *store.Write {
	m.Status = user.MemberActive
	return user.AddMembershipWrite(m)
}

// StillAccepted holds a transaction to m being active: present, and active or
// without a status (memberships older than membership status).
func (Accounts) StillAccepted(m *user.Membership) *store.Write {
	k := user.MembershipKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	st := expression.Name("status")
	return store.Assert(k.PK, k.SK, store.Present().And(expression.AttributeNotExists(st).Or(st.Equal(expression.Value(string(user.MemberActive))))))
}
