// Package invite finishes an invitation: POST /auth/invite/preview shows what a
// token is for, POST /auth/accept-invite sets the invited user's password and
// signs them in. It sits apart from shared/user, which issues invitations,
// because finishing one ends in signin.Complete and signin imports user.
//
// A token names a user and a scope; each scope's invitation is its own row, so
// one tenant's invitation never revokes another's. Acceptance is two
// transactions. The first spends the token (conditional delete on its hash:
// single use), turns the membership from invited to active and records
// user.invite.accept; for a new account it also sets the password, the
// optional name and status active (conditioned on status invited). An account
// that already exists accepts with its own current password (checked with the
// same Argon2id work as a sign-in) and keeps its name and credentials: the
// inviter never changes them. An existing account without a password (one an
// identity provider provisioned: its provider signs it in for that tenant
// only) sets its first password here (conditioned on still having none), as
// a new account does: the invitation mailed to the address proves it. The second transaction is signin.Complete in
// the invited membership, which answers the login response (or the MFA step
// when the account has a second factor). They cannot be one: Complete's own
// profile update requires status active. Should the second fail, the
// membership is active and the user signs in normally.
//
// An unknown, replaced (re-invited), used or expired (7 days, injected clock)
// token is 400 `Invalid or expired invitation`, for both routes. Acceptance is
// limited to 10 per hour per source IP, counted after validation; tokens carry
// 256 random bits, so preview needs no limit. An existing account's password
// attempt also counts on its login lock (signin.CountPassword) before the
// password is checked: a locked account answers 401 `Invalid password`
// without a check, so invitations add no guesses to the lockout's five.
package invite

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/gale-rmm/gale/shared/attempt"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// ErrToken answers every unusable invitation token.
var ErrToken = fault.BadRequest("Invalid or expired invitation")

// ErrPassword answers an existing account's acceptance with a wrong password.
var ErrPassword = fault.Unauthorized("Invalid password")

// Service previews and accepts invitations.
type Service struct {
	St     *store.Store
	SignIn *signin.Service
	Limits ratelimit.Limiter
	Clock  clock.Clock
}

// pending is a live invitation with its user and membership.
type pending struct {
	u   *user.User
	inv *user.Invite
	m   *user.Membership
}

// find reads the invitation a token names (one BatchGet of invitation row,
// profile and membership) and checks hash, expiry, that the membership still
// awaits acceptance and that the account is not disabled.
func (s *Service) find(ctx context.Context, token string) (*pending, error) {
	ref, ok := user.ParseInviteToken(token)
	if !ok {
		return nil, ErrToken
	}
	ik, pk, mk := ref.Keys()
	items, err := s.St.BatchGet(ctx, ik, pk, mk)
	if err != nil {
		return nil, err
	}
	ii, ok1 := items[ik.PK+"|"+ik.SK]
	pi, ok2 := items[pk.PK+"|"+pk.SK]
	mi, ok3 := items[mk.PK+"|"+mk.SK]
	if !ok1 || !ok2 || !ok3 {
		return nil, ErrToken
	}
	var u user.User
	var inv user.Invite
	var m user.Membership
	for _, d := range []struct {
		item store.Item
		out  any
	}{{pi, &u}, {ii, &inv}, {mi, &m}} {
		if err := store.Unmarshal(d.item, d.out); err != nil {
			return nil, err
		}
	}
	h := user.HashToken(token)
	if subtle.ConstantTimeCompare([]byte(h), []byte(inv.TokenHash)) != 1 || !inv.Live(s.Clock.Now()) ||
		!m.Pending(&u) || u.Status == user.StatusDisabled {
		return nil, ErrToken
	}
	return &pending{u: &u, inv: &inv, m: &m}, nil
}

// Preview is the answer of POST /auth/invite/preview.
type Preview struct {
	Email     string `json:"email"`
	Name      string `json:"name"`
	ScopeName string `json:"scopeName"`
}

// Preview shows whom a token invites and where.
func (s *Service) Preview(ctx context.Context, token string) (*Preview, error) {
	// Public route: the invitation token is the credential.
	if strings.TrimSpace(token) == "" {
		return nil, fault.Invalid("token", "is required")
	}
	pd, err := s.find(ctx, token)
	if err != nil {
		return nil, err
	}
	name, err := user.ScopeName(ctx, s.St, pd.inv.Scope, pd.inv.PartnerID, pd.inv.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrToken // the organization or partner is gone
	}
	if err != nil {
		return nil, err
	}
	return &Preview{Email: pd.u.Email, Name: pd.u.Name, ScopeName: name}, nil
}

// AcceptInput is the body of POST /auth/accept-invite.
type AcceptInput struct {
	Token    string  `json:"token"`
	Password string  `json:"password"`
	Name     *string `json:"name"`
}

// Accept sets the password of an invited user, activates them, spends the
// token and signs them in to the membership they were invited to.
func (s *Service) Accept(ctx context.Context, in AcceptInput, c signin.Client) (signin.Result, error) {
	// Public route: the invitation token is the credential; a per-IP limit guards it.
	if err := validateAccept(&in); err != nil {
		return signin.Result{}, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.AcceptInvite, c.SourceIP); err != nil {
		return signin.Result{}, err
	}
	pd, err := s.find(ctx, in.Token)
	if err != nil {
		return signin.Result{}, err
	}
	u, inv, m := pd.u, pd.inv, *pd.m
	actor := audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser), IP: c.IP, UserAgent: c.UserAgent}
	tx := (&store.Tx{}).Add(
		user.SpendInviteWrite(inv),
		acceptWrite(&m),
		audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: inv.OrgID, PartnerID: inv.PartnerID, Action: "user.invite.accept",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email}))
	w, changed, err := s.credential(ctx, u, in)
	if err != nil {
		return signin.Result{}, err
	}
	if err := s.St.Commit(ctx, tx.Add(w)); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return signin.Result{}, ErrToken // spent or replaced concurrently
		}
		return signin.Result{}, fmt.Errorf("accept invitation of %s: %w", u.ID, err)
	}
	if changed {
		u.Version++
	}
	m.Status, m.InvitedName = user.MemberActive, ""
	// The invitation is accepted; the sign-in that follows is a password
	// sign-in like any other: an organization enforcing SSO refuses it (the
	// account signs in with SSO next) and an account with a second factor
	// gets the MFA hand-off, never tokens on the password alone.
	return s.SignIn.AfterPassword(ctx, u, &m, c)
}

// validateAccept checks the token, the name (trimming it in in) and the
// password's strength.
func validateAccept(in *AcceptInput) error {
	f := fault.Fields{}
	if strings.TrimSpace(in.Token) == "" {
		f.Add("token", "is required")
	}
	if in.Name != nil {
		n := strings.TrimSpace(*in.Name)
		in.Name = &n
		valid.Name(f, "name", n, user.MaxName)
	}
	if err := f.Err(); err != nil {
		return err
	}
	return signin.CheckPassword("password", in.Password)
}

// credential is what the acceptance does with the account u and the
// password of in: the write that joins the acceptance's transaction, and
// whether it changes the account's row (its version then moves).
func (s *Service) credential(ctx context.Context, u *user.User, in AcceptInput) (*store.Write, bool, error) {
	now := clock.Format(s.Clock.Now())
	if u.Status == user.StatusInvited {
		// A new account: the invitation sets its password and name.
		hash, err := passhash.Hash(in.Password)
		if err != nil {
			return nil, false, err
		}
		if in.Name != nil {
			u.Name = *in.Name
		}
		u.Status, u.PasswordHash, u.PasswordChangedAt, u.UpdatedAt = user.StatusActive, hash, now, now
		return activateWrite(u), true, nil
	}
	if u.PasswordHash == "" {
		// An account without a password (an identity provider's) gets its
		// first one, as a new account does: the invitation mailed to its
		// address proves it (docs/decisions.md#sso-sessions).
		hash, err := passhash.Hash(in.Password)
		if err != nil {
			return nil, false, err
		}
		u.PasswordHash, u.PasswordChangedAt, u.UpdatedAt = hash, now, now
		return firstPasswordWrite(u), true, nil
	}
	// An existing account proves itself with its own password; the
	// invitation changes nothing of it. The attempt counts on the account's
	// login lock before the password is checked, so an invitation is no way
	// around the lockout; a right password takes its count back in the
	// acceptance's transaction.
	try, err := s.SignIn.CountPassword(ctx, u.Email)
	if errors.Is(err, attempt.ErrLocked) {
		return nil, false, ErrPassword
	}
	if err != nil {
		return nil, false, err
	}
	if !passhash.Verify(u.PasswordHash, in.Password) {
		return nil, false, ErrPassword
	}
	return try.Refund(), false, nil
}

// Handler serves the two invitation routes of /api/v1/auth.
type Handler struct{ Svc *Service }

// Routes registers accept-invite and invite/preview.
func (h *Handler) Routes(rt *httpapi.Router) {
	rt.Add(
		// Public: the invitation token is the credential; a per-IP limit guards acceptance.
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/accept-invite", Access: httpapi.Public, Handle: h.accept},
		// Public: the token is the credential (256 random bits).
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/invite/preview", Access: httpapi.Public, Handle: h.preview},
	)
}

func (h *Handler) accept(w http.ResponseWriter, r *http.Request) error {
	var in AcceptInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	res, err := h.Svc.Accept(r.Context(), in, signin.ClientOf(r))
	if err != nil {
		return err
	}
	signin.WriteResult(w, http.StatusOK, res)
	return nil
}

func (h *Handler) preview(w http.ResponseWriter, r *http.Request) error {
	var in struct {
		Token string `json:"token"`
	}
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	p, err := h.Svc.Preview(r.Context(), in.Token)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, p)
	return nil
}
