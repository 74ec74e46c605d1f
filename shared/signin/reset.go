package signin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Mailer sends e-mail: notify.Queue in the request path, the SES notifier in
// the mailer.
type Mailer interface {
	SendEmail(ctx context.Context, e notify.Email) error
}

// MailQueue takes jobs for the mailer (notify.Queue).
type MailQueue interface {
	Enqueue(ctx context.Context, m notify.Message) error
}

// ResetTTL is how long a password-reset link is valid.
const ResetTTL = time.Hour

// ChangePasswordLimit bounds current-password guesses through change-password:
// 5 attempts per 5 minutes per user, like the other password re-entries
// (account deletion, passkeys).
var ChangePasswordLimit = ratelimit.Rule{Name: "change-password-user", Limit: 5, Window: 5 * time.Minute}

// Errors of password reset and change.
var (
	ErrResetToken      = fault.BadRequest("Invalid or expired reset token")
	ErrCurrentPassword = fault.Unauthorized("Current password is incorrect")
	ErrPasswordRace    = fault.Conflict("Password was changed by another request").WithCode(fault.CodeRaceLost)
)

// ResetRequested is the forgot-password answer's message, the same whether or
// not the e-mail belongs to an account.
const ResetRequested = "If an account exists for that email, a password reset link has been sent."

// resetToken is a user's pending reset: one per user, so a new request replaces
// (and so invalidates) the previous one.
type resetToken struct {
	store.Keys
	UserID    string `dynamodbav:"userId"`
	TokenHash string `dynamodbav:"tokenHash"`
	ExpiresAt string `dynamodbav:"expiresAt"`
}

func resetKey(userID string) store.KeyRef { return user.Key(userID, "PWRESET") }

func hashSecret(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// newResetToken returns "<userId>.<43 characters of base64url randomness>".
func newResetToken(userID string) (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("reset token: %w", err)
	}
	return userID + "." + base64.RawURLEncoding.EncodeToString(b), nil
}

func parseResetToken(token string) (userID string, ok bool) {
	id, secret, found := strings.Cut(strings.TrimSpace(token), ".")
	if !found || !valid.IsUUID(id) || len(secret) != 43 {
		return "", false
	}
	return id, true
}

// ForgotPassword asks the mailer to e-mail a reset link to the active account
// with that address, if there is one. The request itself only validates,
// counts the per-IP limit (shared/ratelimit) and enqueues the job (one SQS
// send), so it does the same work and answers the same for a known and an
// unknown address; SendPasswordReset does the rest in the mailer.
func (s *Service) ForgotPassword(ctx context.Context, email string, c Client) error {
	// Public route: anyone may ask; the per-IP limit stands in for authorization.
	f := fault.Fields{}
	email = strings.TrimSpace(email)
	valid.Email(f, "email", email)
	if err := f.Err(); err != nil {
		return err
	}
	if err := s.Limits.Allow(ctx, ratelimit.ForgotPassword, c.SourceIP); err != nil {
		return err
	}
	if s.Queue == nil {
		return errors.New("signin: no mail queue configured")
	}
	return s.Queue.Enqueue(ctx, notify.Message{Kind: notify.KindPasswordReset, To: email,
		IP: c.IP, SourceIP: c.SourceIP, UserAgent: c.UserAgent})
}

// SendPasswordReset is the mailer's half of ForgotPassword: for an active
// account with the address m.To it stores a new reset token (replacing any
// earlier one) with its audit record, then e-mails the link. Anything else
// (no account, invited, disabled) sends nothing. An error is returned only
// when retrying could help.
func (s *Service) SendPasswordReset(ctx context.Context, m notify.Message) error {
	c := Client{IP: m.IP, SourceIP: m.SourceIP, UserAgent: m.UserAgent}
	u, err := s.Users.ByEmail(ctx, user.NormalizeEmail(m.To))
	if user.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if u.Status != user.StatusActive {
		return nil // invited users accept their invitation; disabled users may not sign in
	}
	mem, err := s.primaryMembership(ctx, u.ID)
	if err != nil {
		return err
	}
	token, err := newResetToken(u.ID)
	if err != nil {
		return err
	}
	now := s.Clock.Now()
	exp := now.Add(ResetTTL)
	k := resetKey(u.ID)
	orgID, partnerID := tenantOf(mem)
	tx := (&store.Tx{}).Add(
		store.Put(resetToken{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)}, UserID: u.ID,
			TokenHash: hashSecret(token), ExpiresAt: clock.Stamp(exp)}),
		audit.Put(s.Clock, audit.Entry{Actor: actor(u, c), OrgID: orgID, PartnerID: partnerID,
			Action: "user.password.reset_requested", ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"expiresAt": clock.Format(exp)}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		return fmt.Errorf("store reset token of %s: %w", u.ID, err)
	}
	return s.sendReset(ctx, u, token)
}

func (s *Service) sendReset(ctx context.Context, u *user.User, token string) error {
	if s.Mail == nil {
		return errors.New("signin: no mailer configured")
	}
	link := s.AppURL + "/reset-password?token=" + url.QueryEscape(token)
	return s.Mail.SendEmail(ctx, notify.Email{To: u.Email, Subject: "Reset your Gale password", Text: fmt.Sprintf(
		"Hello %s,\n\nSomeone (hopefully you) asked to reset the password of your Gale account %s.\n\n"+
			"Open this link within 1 hour to choose a new password:\n\n%s\n\n"+
			"The link works once. If you did not ask for it, ignore this e-mail: your password stays as it is.\n",
		u.Name, u.Email, link)})
}

func tenantOf(m *user.Membership) (orgID, partnerID string) {
	if m == nil {
		return "", ""
	}
	return m.OrgID, m.PartnerID
}

// ResetPassword spends a reset token and sets the new password, ending every
// session and token of the user, in one transaction.
func (s *Service) ResetPassword(ctx context.Context, token, password string, c Client) error {
	// Public route: the reset token is the credential.
	f := fault.Fields{}
	if strings.TrimSpace(token) == "" {
		f.Add("token", "is required")
	}
	checkPassword(f, "password", password)
	if err := f.Err(); err != nil {
		return err
	}
	uid, ok := parseResetToken(token)
	if !ok {
		return ErrResetToken
	}
	pk, rk := user.ProfileKey(uid), resetKey(uid)
	items, err := s.St.BatchGet(ctx, pk, rk)
	if err != nil {
		return err
	}
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	ri, ok2 := items[rk.PK+"|"+rk.SK]
	if !ok1 || !ok2 {
		return ErrResetToken
	}
	var u user.User
	var rt resetToken
	if err := store.Unmarshal(pi, &u); err != nil {
		return err
	}
	if err := store.Unmarshal(ri, &rt); err != nil {
		return err
	}
	h := hashSecret(strings.TrimSpace(token))
	now := s.Clock.Now()
	if subtle.ConstantTimeCompare([]byte(h), []byte(rt.TokenHash)) != 1 || clock.Stamp(now) >= rt.ExpiresAt ||
		u.Status != user.StatusActive {
		return ErrResetToken
	}
	hash, err := passhash.Hash(password)
	if err != nil {
		return err
	}
	m, err := s.primaryMembership(ctx, uid)
	if err != nil {
		return err
	}
	orgID, partnerID := tenantOf(m)
	lk := lockKey(ratelimit.Hash(u.Email))
	tx := (&store.Tx{}).Add(
		// Single use: of two resets with one token only the first finds it.
		spendResetWrite(rk, h),
		passwordWrite(uid, hash, now, nil),
		// A reset proves the mailbox: lift a login lockout.
		store.Delete(lk.PK, lk.SK),
		audit.Put(s.Clock, audit.Entry{Actor: actor(&u, c), OrgID: orgID, PartnerID: partnerID,
			Action: "user.password.reset", ResourceType: "user", ResourceID: uid, ResourceName: u.Email,
			Details: map[string]any{"sessionsRevoked": true}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return ErrResetToken
		}
		return fmt.Errorf("reset password of %s: %w", uid, err)
	}
	return nil
}

// ChangePassword replaces the caller's password after checking the current
// one, ends every session and token of the user (and any pending reset link)
// and starts a fresh session for the caller, in one transaction. The update is conditioned on the password
// hash that was verified, so of two concurrent changes only one succeeds.
func (s *Service) ChangePassword(ctx context.Context, current, next string, c Client) (Result, error) {
	p, err := authz.AccountOwner(ctx)
	if err != nil {
		return Result{}, err
	}
	f := fault.Fields{}
	if current == "" {
		f.Add("currentPassword", "is required")
	}
	checkPassword(f, "newPassword", next)
	if current != "" && next == current {
		f.Add("newPassword", "must differ from the current password")
	}
	if err := f.Err(); err != nil {
		return Result{}, err
	}
	if err := s.Limits.Allow(ctx, ChangePasswordLimit, p.UserID); err != nil {
		return Result{}, err
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return Result{}, err
	}
	if !passhash.Verify(u.PasswordHash, current) {
		if err := audit.Log(ctx, s.St, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
			Action: "user.password.change", ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"reason": "wrong current password"}, Denied: true}); err != nil {
			return Result{}, err
		}
		return Result{}, ErrCurrentPassword
	}
	hash, err := passhash.Hash(next)
	if err != nil {
		return Result{}, err
	}
	// now before Start: the fresh session is created at or after the revocation
	// instant, so it survives it while every earlier session dies.
	now := s.Clock.Now()
	pair, sw, err := s.Sessions.Start(u.ID, session.Claims{Scope: p.Scope, PartnerID: p.PartnerID, OrgID: p.OrgID, MFA: p.MFA,
		Role: HintOf(p.RoleOwner, p.RoleID)},
		c.IP, c.UserAgent)
	if err != nil {
		return Result{}, err
	}
	rk := resetKey(u.ID)
	tx := (&store.Tx{}).Add(
		passwordWrite(u.ID, hash, now, new(store.Is("passwordHash", u.PasswordHash))),
		sw,
		// A reset link asked for before the change must not undo it.
		store.Delete(rk.PK, rk.SK),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
			Action: "user.password.change", ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"sessionsRevoked": true}}))
	if err := s.St.Commit(ctx, tx); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return Result{}, ErrPasswordRace
		}
		return Result{}, fmt.Errorf("change password of %s: %w", u.ID, err)
	}
	u.PasswordHash, u.PasswordChangedAt = hash, clock.Format(now)
	var m *user.Membership
	if p.Scope != authz.ScopeNone {
		m = &user.Membership{Scope: p.Scope, PartnerID: p.PartnerID, OrgID: p.OrgID, RoleID: p.RoleID, OrgAccess: p.OrgAccess}
	}
	return Result{User: NewAccount(u, m), Tokens: &Tokens{AccessToken: pair.AccessToken, ExpiresInSeconds: pair.ExpiresInSeconds},
		Refresh: &pair}, nil
}
