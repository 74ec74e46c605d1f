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
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/outbound"
	"github.com/gale-rmm/gale/shared/ratelimit"
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
	b, err := secret.New(d.Cfg.EncryptionKey, d.Cfg.PreviousEncryptionKeys...)
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
		Accounts: Accounts{Store: d.Users, Clock: d.Clock}, SignIn: signingroup.SignIn(d),
		Limits: ratelimit.Limiter{St: d.Store, Clock: d.Clock}, Clock: d.Clock, Box: b, Guard: g, HTTP: client,
		AppURL: d.Cfg.AppURL, APIURL: d.Cfg.APIURL}, nil
}

// Accounts adapts shared/user to sso.Accounts.
type Accounts struct {
	user.Store
	Clock clock.Clock
}

// Grants reports whether m is in the active state of shared/user's table.
func (Accounts) Grants(u *user.User, m *user.Membership) bool { return m.State(u) == user.MemberActive }

// Accepted reports whether the account accepted m (active or suspended).
func (Accounts) Accepted(u *user.User, m *user.Membership) bool { return m.Accepted(u) }

// Pending reports whether m awaits the account's acceptance.
func (Accounts) Pending(u *user.User, m *user.Membership) bool {
	return m.State(u) == user.MemberInvited
}

// AcceptWrites accept invitation m of invited account u (the table's accept
// transition, by the account's own SSO sign-in): m becomes active while it is
// the same invitation still awaiting acceptance, the account active while it
// is still invited and without a password (credentialless, as the linking
// rules read it), and the invitation token is spent.
func (a Accounts) AcceptWrites(u *user.User, m *user.Membership) []*store.Write {
	st := expression.Name("status")
	mk := user.MembershipKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	invited := st.Equal(expression.Value(string(user.MemberInvited))).Or(expression.AttributeNotExists(st))
	member := store.Change(mk.PK, mk.SK, expression.Set(st, expression.Value(string(user.MemberActive))).
		Remove(expression.Name("invitedName"))).When(store.Is("id", m.ID).And(invited))
	pk := user.ProfileKey(u.ID)
	account := store.Change(pk.PK, pk.SK, expression.Set(st, expression.Value(string(user.StatusActive))).
		Set(expression.Name("updatedAt"), expression.Value(clock.Format(a.Clock.Now()))).
		Add(expression.Name("version"), expression.Value(1))).
		When(store.Is("status", string(user.StatusInvited)).And(expression.Name("passwordHash").AttributeNotExists())).Exists()
	ik := user.InviteKey(m.UserID, m.Scope, m.PartnerID, m.OrgID)
	return []*store.Write{member, account, store.Delete(ik.PK, ik.SK)}
}

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
