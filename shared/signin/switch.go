package signin

// # Scope switching
//
// GET /auth/me lists the account's active, accepted memberships
// ({id, scope, partnerId, orgId, name, roleId, roleName}; name is the
// organization's or partner's, "System" for the system scope) beside the
// user. It costs one Query of the account's membership rows and one
// BatchGetItem of the profile with the names (organizations, partners,
// custom roles; system roles are code) after authentication, however many
// memberships (at most 100 names a batch; an account has few).
//
// POST /auth/switch {membershipId} (a user session; API keys are refused)
// answers the login response for another active, accepted membership of
// the same account. Everything else is 404 `Membership not found`: another
// account's id, a suspended membership, a pending invitation, a removed or
// unknown one, the session's own membership, and any membership at all for a
// session an identity provider opened (a provider serves one membership of an
// account, the one its session is in: docs/decisions.md#sso-sessions).
//
// MFA: the new session keeps the current session's mfa claim, never more.
// With ENABLE_2FA, a session without a second factor cannot switch where
// sign-in would have asked for one: an account with a second factor gets 403
// `MFA required` (sign in again with it), and a membership whose role forces
// MFA on an account without TOTP gets the same 428 mfa_enrollment_required a
// login's session would get on its first request.
//
// One transaction: the new session, the end of the current one (conditioned
// on its being live, so of two concurrent switches from one session one wins
// and the other is 401), the account's lastMembership (conditioned on the
// account being active with the tokensValidAfter it had, so a "sign out
// everywhere" that lands first voids the switch), an assertion that the
// membership is still the one read and active (a suspension or removal that
// lands first answers 404; one that lands after is refused on the new
// session's next request, since authentication reads the membership), and
// the audit row auth.switch in the target tenant. The transaction's token
// makes a retry after a lost answer apply once.
//
// Refresh tokens stay bound to the membership of their session: a refresh
// reads the membership with the session and answers 401 `Invalid refresh
// token` once it is suspended or removed. Password sign-in (and its MFA
// hand-off) resumes lastMembership while it is active, otherwise the order
// of primary: system, partner, oldest organization.

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/auth"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// ErrMembershipNotFound answers every switch to a membership the session may
// not take.
var ErrMembershipNotFound = fault.NotFound("Membership not found")

// SystemName names the system scope in the membership list.
const SystemName = "System"

// MembershipView is one entry of GET /auth/me's memberships.
type MembershipView struct {
	ID        string      `json:"id"`
	Scope     authz.Scope `json:"scope"`
	PartnerID string      `json:"partnerId,omitempty"`
	OrgID     string      `json:"orgId,omitempty"`
	Name      string      `json:"name"`
	RoleID    string      `json:"roleId"`
	RoleName  string      `json:"roleName"`
}

// Me returns the caller's account with MFA and phone status and the
// account's active memberships.
func (s *Service) Me(ctx context.Context) (*Account, []MembershipView, error) {
	p, err := authz.Authenticated(ctx)
	if err != nil {
		return nil, nil, err
	}
	ms, err := s.Users.Memberships(ctx, p.UserID)
	if err != nil {
		return nil, nil, err
	}
	u, names, err := s.profileAndNames(ctx, p.UserID, ms)
	if err != nil {
		return nil, nil, err
	}
	var m *user.Membership
	if p.Scope != authz.ScopeNone {
		m = &user.Membership{Scope: p.Scope, PartnerID: p.PartnerID, OrgID: p.OrgID, RoleID: p.RoleID, OrgAccess: p.OrgAccess}
	}
	out := []MembershipView{}
	for i := range ms {
		if v, ok := names.view(u, &ms[i]); ok {
			out = append(out, v)
		}
	}
	return NewAccount(u, m), out, nil
}

// names holds the stored rows a membership list is named from.
type names map[string]store.Item

// profileAndNames reads account userID's profile and the names of ms (their
// organizations, partners and custom roles) in one batch.
func (s *Service) profileAndNames(ctx context.Context, userID string, ms []user.Membership) (*user.User, names, error) {
	pk := user.ProfileKey(userID)
	refs := []store.KeyRef{pk}
	for _, m := range ms {
		switch m.Scope {
		case authz.ScopeOrg:
			refs = append(refs, tenant.OrgKey(m.OrgID))
		case authz.ScopePartner:
			k := tenant.PartnerKeys(m.PartnerID)
			refs = append(refs, store.KeyRef{PK: k.PK, SK: k.SK})
		}
		if m.RoleOwner != role.SystemOwner {
			refs = append(refs, role.Key(m.RoleOwner, m.RoleID))
		}
	}
	items, err := s.St.BatchGet(ctx, refs...)
	if err != nil {
		return nil, nil, fmt.Errorf("memberships of %s: %w", userID, err)
	}
	pi, ok := items[pk.PK+"|"+pk.SK]
	if !ok {
		return nil, nil, fmt.Errorf("get user %s: %w", userID, store.ErrNotFound)
	}
	var u user.User
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, nil, err
	}
	return &u, names(items), nil
}

// view renders m of account u; ok is false for a membership that grants
// nothing (pending, suspended) or whose tenant or role is gone.
func (n names) view(u *user.User, m *user.Membership) (MembershipView, bool) {
	if m.State(u) != user.MemberActive {
		return MembershipView{}, false
	}
	v := MembershipView{ID: m.ID, Scope: m.Scope, PartnerID: m.PartnerID, OrgID: m.OrgID, RoleID: m.RoleID, Name: SystemName}
	switch m.Scope {
	case authz.ScopeOrg:
		k := tenant.OrgKey(m.OrgID)
		var o tenant.Organization
		if !n.read(k, &o) {
			return MembershipView{}, false
		}
		v.Name, v.PartnerID = o.Name, o.PartnerID
	case authz.ScopePartner:
		k := tenant.PartnerKeys(m.PartnerID)
		var pt tenant.Partner
		if !n.read(store.KeyRef{PK: k.PK, SK: k.SK}, &pt) {
			return MembershipView{}, false
		}
		v.Name = pt.Name
	}
	var r role.Role
	if m.RoleOwner == role.SystemOwner {
		i := slices.IndexFunc(role.SystemRoles(), func(r role.Role) bool { return r.ID == m.RoleID })
		if i < 0 {
			return MembershipView{}, false
		}
		r = role.SystemRoles()[i]
	} else if !n.read(role.Key(m.RoleOwner, m.RoleID), &r) {
		return MembershipView{}, false
	}
	v.RoleName = r.Name
	return v, true
}

// read fills out from the row at k; false when it was not found or unreadable.
func (n names) read(k store.KeyRef, out any) bool {
	it, ok := n[k.PK+"|"+k.SK]
	return ok && store.Unmarshal(it, out) == nil
}

// Switch signs the caller's account into its membership membershipID (see
// the package section "Scope switching").
func (s *Service) Switch(ctx context.Context, membershipID string, c Client) (Result, error) {
	p, err := authz.SignedIn(ctx)
	if err != nil {
		return Result{}, err
	}
	u, m, err := s.switchTarget(ctx, p, membershipID)
	if err != nil {
		return Result{}, err
	}
	if err := s.switchMFA(ctx, p, u, m); err != nil {
		return Result{}, err
	}
	pair, start, err := s.Sessions.Start(u.ID, MemberClaims(m, p.MFA), c.IP, c.UserAgent)
	if err != nil {
		return Result{}, err
	}
	tx := &store.Tx{}
	tx.Add(start)
	end := tx.Include(s.Sessions.EndLiveWrite(u.ID, p.SessionID))
	tx.Add(lastMembershipWrite(u, m.ID))
	member := tx.Include(memberActiveAssert(m))
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: m.OrgID, PartnerID: m.PartnerID, Action: "auth.switch",
		ResourceType: "membership", ResourceID: m.ID, ResourceName: u.Email,
		Details: map[string]any{"scope": m.Scope, "roleId": m.RoleID, "mfa": p.MFA, "sessionId": pair.SessionID}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		switch {
		case errors.As(err, &te) && te.FailedOn(member) && !te.FailedOn(end):
			return Result{}, ErrMembershipNotFound // suspended or removed meanwhile
		case errors.As(err, &te):
			return Result{}, auth.ErrSessionRevoked // this session ended, or every session did
		}
		return Result{}, fmt.Errorf("switch %s to %s: %w", u.ID, m.ID, err)
	}
	return Result{User: NewAccount(u, m), Tokens: &Tokens{AccessToken: pair.AccessToken, ExpiresInSeconds: pair.ExpiresInSeconds},
		Refresh: &pair}, nil
}

// switchTarget reads the caller's account and the membership it may switch
// to: ErrMembershipNotFound unless membershipID is another active, accepted
// membership of the account and the session is the account's own credential's.
func (s *Service) switchTarget(ctx context.Context, p *authz.Principal, membershipID string) (*user.User, *user.Membership, error) {
	if p.IdP != "" {
		// An identity provider serves only the membership its session is in.
		return nil, nil, ErrMembershipNotFound
	}
	ms, err := s.Users.Memberships(ctx, p.UserID)
	if err != nil {
		return nil, nil, err
	}
	i := slices.IndexFunc(ms, func(m user.Membership) bool { return m.ID == membershipID })
	if i < 0 {
		return nil, nil, ErrMembershipNotFound
	}
	m := &ms[i]
	if m.Scope == p.Scope && m.PartnerID == p.PartnerID && m.OrgID == p.OrgID {
		return nil, nil, ErrMembershipNotFound // the session's own: not another
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, nil, err
	}
	if u.Status != user.StatusActive || m.State(u) != user.MemberActive {
		return nil, nil, ErrMembershipNotFound
	}
	return u, m, nil
}

// switchMFA refuses a switch that would skip a second factor sign-in would
// ask for (see the package section "Scope switching").
func (s *Service) switchMFA(ctx context.Context, p *authz.Principal, u *user.User, m *user.Membership) error {
	if !s.Enable2FA || p.MFA {
		return nil
	}
	if u.MFAEnabled {
		return authz.ErrMFARequired
	}
	_, force, _, err := role.Store{St: s.St}.Effective(ctx, m.RoleOwner, m.RoleID)
	if errors.Is(err, store.ErrNotFound) {
		return ErrMembershipNotFound // its role is gone: it grants nothing
	}
	if err != nil {
		return err
	}
	if force && !u.TOTPEnrolled() {
		return auth.ErrEnrolmentNeeded
	}
	return nil
}

// lastMembershipWrite records membershipID as u's last switched-to
// membership if the account is still active and no "sign out everywhere"
// (tokensValidAfter) landed since u was read.
func lastMembershipWrite(u *user.User, membershipID string) *store.Write {
	pk := user.ProfileKey(u.ID)
	tva := expression.Name("tokensValidAfter").AttributeNotExists()
	if u.TokensValidAfter != "" {
		tva = store.Is("tokensValidAfter", u.TokensValidAfter)
	}
	return store.Change(pk.PK, pk.SK, expression.Set(expression.Name("lastMembership"), expression.Value(membershipID))).
		When(active().And(tva))
}

// memberActiveAssert checks, in the switch's transaction, that membership m
// is still the one read and grants its role (active, or a row from before
// membership states).
func memberActiveAssert(m *user.Membership) *store.Write {
	st := store.Is("status", string(user.MemberActive)).Or(expression.Name("status").AttributeNotExists())
	return store.Assert(m.PK, m.SK, store.Is("id", m.ID).And(st))
}

// resume picks the membership a password sign-in of u acts in: the one it
// last switched to while it is still active, otherwise primary's choice.
func resume(u *user.User, ms []user.Membership) *user.Membership {
	if u.LastMembership != "" {
		i := slices.IndexFunc(ms, func(m user.Membership) bool { return m.ID == u.LastMembership && m.State(u) == user.MemberActive })
		if i >= 0 {
			return &ms[i]
		}
	}
	return primary(ms)
}
