// Package signin owns password sign-in: login (with the MFA hand-off), refresh,
// logout, the caller's own account view, registration and password reset/change.
// Every sign-in ends in Complete, which starts a session, records user.login and
// raises the user.login event in one transaction, so MFA verification and SSO
// exchange finish sign-in exactly the same way. Switching to another
// membership of a signed-in account (switch.go, "Scope switching") is not a
// sign-in: it records auth.switch and starts a session without a new factor.
//
// Rows it owns:
//
//	MFA temp token   MFATEMP#<sha256> / MFATEMP   {userId, ttl 5 min; after an SSO first    single use
//	                                              factor idp and the membership it served}
//	attempt count    ATTEMPT#login#<hash(e-mail)> / ATTEMPT (shared/attempt, rule Lockout)
//	reset token      USER#<uid> / PWRESET         {tokenHash (SHA-256), expiresAt, ttl 1 h} one per user
//	last membership  USER#<uid> / PROFILE         lastMembership (the user's profile, owned by shared/user): the membership password sign-in resumes
//
// Login answers the same 401 `Invalid email or password` for every failure and
// always runs one Argon2id verification, so neither the text nor the time tells
// whether an e-mail is registered.
//
// # Lockout
//
// Each attempt is counted for its address (the e-mail's hash, so unknown
// addresses count and lock exactly like registered ones) by one conditional
// write BEFORE its password is checked (shared/attempt, rule Lockout): once 5
// attempts have failed, each within 15 minutes of the previous, nothing more
// is counted or verified for 15 minutes after the last, however many attempts
// arrive at once, and every one answers the same 401 (a locked attempt reads
// nothing: the same work for known and unknown addresses). A verified
// password takes its count back in the write that follows it (the sign-in's
// transaction, or the MFA temp token's); a disabled account or an
// organization enforcing SSO keeps it. A count whose answer was lost is
// counted once (its token), or at worst twice: never toward unlocking. A
// password reset deletes the row (it proves the mailbox). Accepting an
// invitation into an existing account checks the same password and counts
// on the same row (CountPassword).
//
// # Registration
//
// POST /auth/register {name, email, password} and POST /auth/register-partner
// {partnerName, name, email, password} exist only with ENABLE_REGISTRATION=true;
// otherwise both answer 404 `Not Found` before reading the body, exactly like an
// unknown route. Both answer 201 with the login response and the refresh cookie.
// register creates an active user with no membership; register-partner creates,
// in one transaction, the partner, a partner-owned copy of Partner Admin named
// "Administrator" (`*:*`, Force MFA on, not a system role, so the partner can
// adjust it), the user with a partner membership (orgAccess all) and the audit
// records partner.register, role.create and user.register. Rate limits count
// per source IP after validation (5 and 3 per hour).
//
// A taken e-mail is 409 `Email is already registered`, whatever the existing
// account's status (active, invited, disabled, SSO-only), so the answer says no
// more than "an account exists". The password is hashed before the attempt on
// both paths (same time), and the per-IP limits, which count every valid
// attempt, bound how many addresses one client can probe.
//
// # Password reset and change
//
// POST /auth/forgot-password {email} always answers 200 with the same body; an
// active user gets a link `<APP_URL>/reset-password?token=<token>` by e-mail. The
// token is "<userId>.<32 random bytes, base64url>", stored only as its SHA-256
// in the user's single PWRESET row, so a new request replaces (invalidates) the
// previous link. Invited and disabled users, and unknown addresses, get no
// e-mail. A failed send is logged, not answered, so it cannot reveal an account.
//
// POST /auth/reset-password {token, password} (the field is `token`): the token
// is spent by a conditional delete in the same transaction that sets
// passwordHash and passwordChangedAt, revokes every session and token
// (tokensValidAfter, written in the same profile update because a transaction
// cannot write one item twice) and lifts a login lockout. An unknown, replaced,
// used or expired (1 hour, injected clock) token is 400 `Invalid or expired
// reset token`. 256 random bits need no rate limit; no Argon2id runs for a bad
// token.
//
// POST /auth/change-password {currentPassword, newPassword} (bearer JWT; not an
// enrolment route, so Force MFA's 428 applies): a wrong current password is 401
// `Current password is incorrect` (audited as denied), limited to 5 attempts
// per 5 minutes per user. The new password must differ from the current one.
// The update is conditioned on the verified hash (compare-and-swap: of two
// concurrent changes the loser gets 409 race_lost); the same transaction revokes
// every session and token, drops a pending reset link and starts a fresh
// session for the caller (same scope and mfa claim), answered as the login
// response with a new cookie. It records user.password.change, not user.login.
//
// New passwords: 8-128 characters, not on the common list, minimum entropy
// (CheckPassword); failures name the field (password, newPassword).
package signin

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/gale-rmm/gale/shared/attempt"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/event"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/webhook/eventtype"
)

// SSOPolicy tells whether an organization enforces SSO (password login refused).
type SSOPolicy interface {
	Enforced(ctx context.Context, orgID string) (bool, error)
}

// Service signs users in.
type Service struct {
	St        *store.Store
	Users     user.Store
	Sessions  *session.Manager
	Events    *event.Publisher
	Limits    ratelimit.Limiter
	Clock     clock.Clock
	Enable2FA bool
	SSO       SSOPolicy // nil: no SSO provider can enforce
	// Queue takes the password-reset jobs of ForgotPassword (notify.Queue).
	Queue MailQueue
	// Mail sends the reset e-mail in SendPasswordReset (the mailer's SES notifier).
	Mail Mailer
	// AppURL is the web application's base URL, for the reset link.
	AppURL string
	// EnableRegistration opens /auth/register and /auth/register-partner.
	EnableRegistration bool
}

// ErrInvalidCredentials is every login failure's answer.
var ErrInvalidCredentials = fault.Unauthorized("Invalid email or password")

// Lifetimes.
const (
	TempTokenTTL = 5 * time.Minute
	LockDuration = 15 * time.Minute
)

// Result is the login, MFA-verify and SSO-exchange response (AuthLoginResponse
// in the OpenAPI document).
type Result struct {
	User             *Account `json:"user,omitempty"`
	Tokens           *Tokens  `json:"tokens,omitempty"`
	MFARequired      bool     `json:"mfaRequired"`
	MFAMethod        string   `json:"mfaMethod,omitempty"`
	TempToken        string   `json:"tempToken,omitempty"`
	PasskeyAvailable bool     `json:"passkeyAvailable,omitempty"`
	// Refresh goes into the cookie, never the body.
	Refresh *session.Pair `json:"-"`
}

// Tokens is the body part of an issued pair.
type Tokens struct {
	AccessToken      string `json:"accessToken"`
	ExpiresInSeconds int    `json:"expiresInSeconds"`
}

// Account is the user as sign-in and /auth/me show it.
type Account struct {
	ID                string          `json:"id"`
	Email             string          `json:"email"`
	Name              string          `json:"name"`
	Status            user.Status     `json:"status"`
	AvatarURL         string          `json:"avatarUrl,omitempty"`
	MFAEnabled        bool            `json:"mfaEnabled"`
	MFAMethod         string          `json:"mfaMethod,omitempty"`
	PhoneNumber       string          `json:"phoneNumber,omitempty"`
	PhoneVerified     bool            `json:"phoneVerified"`
	LastLoginAt       string          `json:"lastLoginAt,omitempty"`
	Scope             authz.Scope     `json:"scope,omitempty"`
	PartnerID         string          `json:"partnerId,omitempty"`
	OrgID             string          `json:"orgId,omitempty"`
	RoleID            string          `json:"roleId,omitempty"`
	OrgAccess         authz.OrgAccess `json:"orgAccess,omitempty"`
	PasswordSet       bool            `json:"passwordSet"`
	PasswordChangedAt string          `json:"passwordChangedAt,omitempty"`
}

// NewAccount renders u with its active membership m (nil for none).
func NewAccount(u *user.User, m *user.Membership) *Account {
	a := &Account{ID: u.ID, Email: u.Email, Name: u.Name, Status: u.Status, AvatarURL: u.AvatarURL,
		MFAEnabled: u.MFAEnabled, MFAMethod: u.MFAMethod, PhoneNumber: u.PhoneNumber, PhoneVerified: u.PhoneVerified,
		LastLoginAt: u.LastLoginAt, PasswordSet: u.PasswordHash != "", PasswordChangedAt: u.PasswordChangedAt}
	if m != nil {
		a.Scope, a.PartnerID, a.OrgID, a.RoleID, a.OrgAccess = m.Scope, m.PartnerID, m.OrgID, m.RoleID, m.OrgAccess
	}
	return a
}

// Client is the request metadata of a sign-in.
type Client struct{ IP, SourceIP, UserAgent string }

// Login checks e-mail and password.
func (s *Service) Login(ctx context.Context, email, password string, c Client) (Result, error) {
	// Public route: no principal exists yet; rate limits stand in for authorization.
	email = user.NormalizeEmail(email)
	if err := s.Limits.Allow(ctx, ratelimit.LoginIP, c.SourceIP); err != nil {
		return Result{}, err
	}
	subject := ratelimit.Hash(email)
	if err := s.Limits.Allow(ctx, ratelimit.LoginIPEmail, c.SourceIP+"|"+subject); err != nil {
		return Result{}, err
	}
	// Counted before the password is checked: a burst cannot get more
	// verifications than the lock allows. Unknown addresses count alike.
	try, err := s.CountPassword(ctx, email)
	if errors.Is(err, attempt.ErrLocked) {
		return Result{}, ErrInvalidCredentials // nothing read, nothing verified
	}
	if err != nil {
		return Result{}, err
	}
	u, err := s.lookup(ctx, email)
	if err != nil {
		return Result{}, err
	}
	hash := ""
	if u != nil {
		hash = u.PasswordHash
	}
	ok := verify(hash, password) // one Argon2id run for known and unknown addresses
	if !ok || u == nil || u.Status != user.StatusActive {
		return Result{}, ErrInvalidCredentials // the count stays
	}
	ms, err := s.Users.Memberships(ctx, u.ID)
	if err != nil {
		return Result{}, err
	}
	return s.AfterPassword(ctx, u, resume(u, ms), c, try.Refund())
}

// Lockout is the login lock: 5 failed attempts, each within 15 minutes of
// the previous, lock an address for 15 minutes after the last.
var Lockout = attempt.Rule{Name: "login", Limit: 5, Window: LockDuration}

// verify checks a password against its hash (passhash.Verify); tests wrap it
// to count and hold verifications.
var verify = passhash.Verify

// CountPassword counts one attempt at the password of the account of email
// (normalized) against Lockout, before the password is checked:
// attempt.ErrLocked when the address is locked (do not check it then). Every
// path that checks an account's password to sign in counts here, so none
// gives more guesses than the lock.
func (s *Service) CountPassword(ctx context.Context, email string) (attempt.Try, error) {
	return attempt.Counter{St: s.St, Clock: s.Clock}.Take(ctx, Lockout, ratelimit.Hash(email))
}

// ErrSSOEnforced refuses a password sign-in into an organization that enforces SSO.
var ErrSSOEnforced = fault.Forbidden("Password login is disabled for this organization; sign in with SSO")

// AfterPassword finishes a sign-in whose password was verified (login, an
// accepted invitation) in membership m: refused when m's organization
// enforces SSO, the MFA hand-off when the account has a second factor,
// otherwise Complete. Every password path ends here, so none skips either.
// extra (e.g. the refund of the attempt's count) rides in the write that
// finishes the step, the sign-in's transaction or the temp token's.
func (s *Service) AfterPassword(ctx context.Context, u *user.User, m *user.Membership, c Client, extra ...*store.Write) (Result, error) {
	if m != nil && m.OrgID != "" && s.SSO != nil {
		enforced, err := s.SSO.Enforced(ctx, m.OrgID)
		if err != nil {
			return Result{}, err
		}
		if enforced {
			return Result{}, ErrSSOEnforced
		}
	}
	if s.Enable2FA && u.MFAEnabled {
		return s.pendingMFA(ctx, u, nil, "", extra...)
	}
	return s.Complete(ctx, u, m, false, c, extra...)
}

// maxEmail bounds an e-mail address (up to 255 characters).
const maxEmail = 255

// lookup reads the user by e-mail (nil when unknown). An address longer than
// any account's is unknown without a read: its guard key would exceed
// DynamoDB's 2048-byte partition key, which DynamoDB refuses (a 500).
func (s *Service) lookup(ctx context.Context, email string) (*user.User, error) {
	if len(email) > maxEmail {
		return nil, nil
	}
	ek := user.EmailKey(email)
	var g user.EmailGuard
	err := s.St.Get(ctx, ek.PK, ek.SK, &g)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	// An unknown address reads a profile that cannot exist, so both paths
	// make the same calls.
	id := unknownUserID
	if err == nil {
		id = g.UserID
	}
	u, err := s.Users.Get(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return u, err
}

// unknownUserID is no account's id (ids are random v4 UUIDs; this is not one).
const unknownUserID = "00000000-0000-0000-0000-000000000000"

// lockKey is the attempt row of the address with hash subject.
func lockKey(subject string) store.KeyRef { return attempt.Key(Lockout, subject) }

// primaryMembership picks the scope a password sign-in acts in: system, then
// partner, then the oldest organization membership, among the active ones
// (pending invitations and suspended memberships grant nothing); nil when the
// user has none.
func (s *Service) primaryMembership(ctx context.Context, userID string) (*user.Membership, error) {
	ms, err := s.Users.Memberships(ctx, userID)
	if err != nil {
		return nil, err
	}
	return primary(ms), nil
}

// primary is primaryMembership's choice among ms.
func primary(ms []user.Membership) *user.Membership {
	ms = slices.DeleteFunc(ms, func(m user.Membership) bool { return !m.Active() })
	if len(ms) == 0 {
		return nil
	}
	rank := map[authz.Scope]int{authz.ScopeSystem: 0, authz.ScopePartner: 1, authz.ScopeOrg: 2}
	sort.SliceStable(ms, func(i, j int) bool {
		if rank[ms[i].Scope] != rank[ms[j].Scope] {
			return rank[ms[i].Scope] < rank[ms[j].Scope]
		}
		return ms[i].CreatedAt < ms[j].CreatedAt
	})
	return &ms[0]
}

// TempToken is a pending MFA sign-in. An SSO first factor binds it to the
// provider and the membership the provider serves, so the second factor
// finishes the same SSO session (FinishPending); a password's takes the
// primary membership then.
type TempToken struct {
	store.Keys
	UserID    string      `dynamodbav:"userId"`
	IdP       string      `dynamodbav:"idp,omitempty"`
	Scope     authz.Scope `dynamodbav:"scope,omitempty"`
	PartnerID string      `dynamodbav:"partnerId,omitempty"`
	OrgID     string      `dynamodbav:"orgId,omitempty"`
	CreatedAt string      `dynamodbav:"createdAt"`
	ExpiresAt string      `dynamodbav:"expiresAt"`
}

func tempKey(token string) store.KeyRef {
	sum := sha256.Sum256([]byte(token))
	return store.KeyRef{PK: "MFATEMP#" + hex.EncodeToString(sum[:]), SK: "MFATEMP"}
}

// pendingMFA stores the temp token of u's second factor; idp and m bind it
// when an identity provider was the first factor. extra rides in the same
// transaction (a password sign-in's refund of its attempt count).
func (s *Service) pendingMFA(ctx context.Context, u *user.User, m *user.Membership, idp string, extra ...*store.Write) (Result, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return Result{}, fmt.Errorf("temp token: %w", err)
	}
	tok := "mfa_" + base64.RawURLEncoding.EncodeToString(b)
	k := tempKey(tok)
	exp := s.Clock.Now().Add(TempTokenTTL)
	t := TempToken{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)}, UserID: u.ID, IdP: idp,
		CreatedAt: clock.Stamp(s.Clock.Now()), ExpiresAt: clock.Stamp(exp)}
	if idp != "" && m != nil {
		t.Scope, t.PartnerID, t.OrgID = m.Scope, m.PartnerID, m.OrgID
	}
	put := store.PutNew(t)
	if len(extra) == 0 {
		if err := s.St.Do(ctx, put); err != nil {
			return Result{}, err
		}
	} else if err := s.St.Commit(ctx, (&store.Tx{}).Add(put).Add(extra...)); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			return Result{}, ErrInvalidCredentials // e.g. the count's row reset meanwhile
		}
		return Result{}, err
	}
	method := u.MFAMethod
	if method == "" {
		method = "totp"
	}
	// The profile counts passkeys (kept by shared/passkey in the same transaction
	// as each add and delete), so no passkey read is needed here.
	return Result{MFARequired: true, MFAMethod: method, TempToken: tok, PasskeyAvailable: u.PasskeyCount > 0}, nil
}

// ErrTempToken answers an unknown, used or expired MFA temp token.
var ErrTempToken = fault.Unauthorized("Invalid or expired MFA token")

// PendingUser returns the user of an unexpired temp token without spending it.
func (s *Service) PendingUser(ctx context.Context, token string) (*user.User, error) {
	pd, err := s.Pending(ctx, token)
	if err != nil {
		return nil, err
	}
	return pd.User, nil
}

// Pending is a sign-in waiting for its second factor (an unexpired temp token).
type Pending struct {
	User  *user.User
	token string
	t     TempToken
}

// Pending reads the sign-in of an unexpired temp token without spending it.
func (s *Service) Pending(ctx context.Context, token string) (*Pending, error) {
	var t TempToken
	k := tempKey(token)
	if err := s.St.Get(ctx, k.PK, k.SK, &t); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, ErrTempToken
		}
		return nil, err
	}
	u, err := s.Users.Get(ctx, t.UserID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrTempToken
	}
	if err != nil {
		return nil, err
	}
	// A password change or reset (tokensValidAfter) also voids pending sign-ins.
	if u.Status != user.StatusActive || (u.TokensValidAfter != "" && t.CreatedAt < u.TokensValidAfter) {
		return nil, ErrTempToken
	}
	return &Pending{User: u, token: token, t: t}, nil
}

// FinishPending completes pending sign-in pd after its second factor: the
// temp token is spent in the sign-in's transaction (with pc and extra, the
// factor's own proofs), the tokens carry mfa: true, and an SSO first factor's
// session stays bound to its provider and to the membership it served
// (ErrTempToken when that membership no longer grants its role); a
// password's signs in the primary membership.
func (s *Service) FinishPending(ctx context.Context, pd *Pending, c Client, pc ProfileChange, extra ...*store.Write) (Result, error) {
	ms, err := s.Users.Memberships(ctx, pd.User.ID)
	if err != nil {
		return Result{}, err
	}
	var m *user.Membership
	if pd.t.IdP == "" {
		m = resume(pd.User, ms)
	} else {
		i := slices.IndexFunc(ms, func(m user.Membership) bool {
			return m.Scope == pd.t.Scope && m.PartnerID == pd.t.PartnerID && m.OrgID == pd.t.OrgID && m.State(pd.User) == user.MemberActive
		})
		if i < 0 {
			return Result{}, ErrTempToken
		}
		m = &ms[i]
	}
	return s.complete(ctx, pd.User, m, true, pd.t.IdP, c, pc, append([]*store.Write{SpendTemp(pd.token)}, extra...)...)
}

// SpendTemp is the write that consumes a temp token, to commit with the sign-in:
// of two concurrent verifications only one can spend it.
func SpendTemp(token string) *store.Write {
	k := tempKey(token)
	return store.Delete(k.PK, k.SK).Exists()
}

// Complete finishes a sign-in: session, lastLoginAt, audit user.login and the
// user.login event in one transaction (plus extra writes, e.g. spending a temp
// token, whose condition failing fails the sign-in). Extra writes must not touch
// the user's profile: a transaction writes an item once, so a proof kept on the
// profile goes through CompleteWith.
func (s *Service) Complete(ctx context.Context, u *user.User, m *user.Membership, mfa bool, c Client, extra ...*store.Write) (Result, error) {
	return s.CompleteWith(ctx, u, m, mfa, c, ProfileChange{}, extra...)
}

// ProfileChange is a SET clause and a condition merged into the sign-in's own
// update of the user's profile (e.g. spending a TOTP time step or a recovery
// code with compare-and-swap). Placeholders must not collide with :now, :active
// and #s.
type ProfileChange struct {
	// Set adds assignments to the sign-in's profile update.
	Set func(expression.UpdateBuilder) expression.UpdateBuilder
	// Cond is ANDed with the active-status check.
	Cond *expression.ConditionBuilder
}

// CompleteWith is Complete with pc merged into the profile update.
func (s *Service) CompleteWith(ctx context.Context, u *user.User, m *user.Membership, mfa bool, c Client, pc ProfileChange, extra ...*store.Write) (Result, error) {
	return s.complete(ctx, u, m, mfa, "", c, pc, extra...)
}

// complete is CompleteWith for a session opened by identity provider idp
// ("" for the account's own credential).
func (s *Service) complete(ctx context.Context, u *user.User, m *user.Membership, mfa bool, idp string, c Client, pc ProfileChange, extra ...*store.Write) (Result, error) {
	claims := session.Claims{MFA: mfa}
	if m != nil {
		claims = MemberClaims(m, mfa)
	}
	claims.IdP = idp
	pair, w, err := s.Sessions.Start(u.ID, claims, c.IP, c.UserAgent)
	if err != nil {
		return Result{}, err
	}
	now := clock.Format(s.Clock.Now())
	tx := (&store.Tx{}).Add(w, signedInWrite(u.ID, now, pc)).Add(extra...)
	orgID, partnerID := "", ""
	if m != nil {
		orgID, partnerID = m.OrgID, m.PartnerID
	}
	actor := audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser), IP: c.IP, UserAgent: c.UserAgent}
	details := map[string]any{"mfa": mfa}
	if idp != "" {
		details["providerId"] = idp
	}
	tx.Add(audit.Put(s.Clock, audit.Entry{Actor: actor, OrgID: orgID, PartnerID: partnerID, Action: "user.login",
		ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email, Details: details}))
	ev, err := event.New(s.Clock, eventtype.UserLogin, orgID, map[string]any{"userId": u.ID, "email": u.Email, "mfa": mfa})
	if err != nil {
		return Result{}, err
	}
	if err := s.Events.Commit(ctx, tx, ev); err != nil {
		var te *store.TxError
		if errors.As(err, &te) {
			// The user was disabled, or a single-use proof was spent concurrently.
			return Result{}, ErrInvalidCredentials
		}
		return Result{}, err
	}
	u.LastLoginAt = now
	return Result{User: NewAccount(u, m), Tokens: &Tokens{AccessToken: pair.AccessToken, ExpiresInSeconds: pair.ExpiresInSeconds},
		Refresh: &pair}, nil
}

// AfterFirstFactor finishes a sign-in whose first factor was identity
// provider idp (shared/sso's exchange) in membership m, the one idp serves:
// the same MFA hand-off as a password login when the account has a second
// factor (bound to idp and m), otherwise a session bound to idp in m. An
// identity provider's own MFA claims are not trusted for the mfa claim.
func (s *Service) AfterFirstFactor(ctx context.Context, u *user.User, m *user.Membership, idp string, c Client) (Result, error) {
	if s.Enable2FA && u.MFAEnabled {
		return s.pendingMFA(ctx, u, m, idp)
	}
	return s.complete(ctx, u, m, false, idp, c, ProfileChange{})
}

// PrimaryMembership exposes the membership choice for MFA and SSO completion.
func (s *Service) PrimaryMembership(ctx context.Context, userID string) (*user.Membership, error) {
	return s.primaryMembership(ctx, userID)
}

// Refresh rotates a refresh token into a new pair.
func (s *Service) Refresh(ctx context.Context, token string, c Client) (Result, error) {
	// Public route (cookie-authenticated): the token itself is the credential.
	if err := s.Limits.Allow(ctx, ratelimit.Refresh, c.SourceIP); err != nil {
		return Result{}, err
	}
	uid, sid, ok := session.ParseRefresh(strings.TrimSpace(token))
	if !ok {
		return Result{}, session.ErrRefreshInvalid
	}
	pk, sk := user.ProfileKey(uid), session.Key(uid, sid)
	items, err := s.St.BatchGet(ctx, pk, sk)
	if err != nil {
		return Result{}, err
	}
	pi, ok1 := items[pk.PK+"|"+pk.SK]
	si, ok2 := items[sk.PK+"|"+sk.SK]
	if !ok1 || !ok2 {
		return Result{}, session.ErrRefreshInvalid
	}
	var u user.User
	var sess session.Session
	if err := store.Unmarshal(pi, &u); err != nil {
		return Result{}, err
	}
	if err := store.Unmarshal(si, &sess); err != nil {
		return Result{}, err
	}
	if u.Status != user.StatusActive || !sess.Live(s.Clock.Now(), u.TokensValidAfter) {
		return Result{}, session.ErrRefreshInvalid
	}
	m, err := s.sessionMembership(ctx, &u, &sess)
	if err != nil {
		return Result{}, err
	}
	if m != nil {
		// The hint follows the membership's role as it is now (a role changed
		// since the last token is prefetched again from this one on).
		sess.Role = HintOf(m.RoleOwner, m.RoleID)
	}
	pair, err := s.Sessions.Rotate(ctx, &sess, token, session.Fingerprint(c.SourceIP, c.UserAgent))
	if errors.Is(err, session.ErrRefreshRace) || errors.Is(err, session.ErrRefreshReused) {
		// A spent token came back: a suspicious event either way.
		actor := audit.Actor{ID: u.ID, Email: u.Email, Type: string(authz.KindUser), IP: c.IP, UserAgent: c.UserAgent}
		if aerr := audit.Log(ctx, s.St, audit.Entry{Actor: actor, OrgID: sess.OrgID, PartnerID: sess.PartnerID,
			Action: "auth.refresh.reuse", ResourceType: "session", ResourceID: sess.ID,
			Details: map[string]any{"familyRevoked": errors.Is(err, session.ErrRefreshReused)}}); aerr != nil {
			slog.WarnContext(ctx, "refresh reuse not audited", "err", aerr)
		}
	}
	if err != nil {
		return Result{}, err
	}
	return Result{User: NewAccount(&u, m), Tokens: &Tokens{AccessToken: pair.AccessToken, ExpiresInSeconds: pair.ExpiresInSeconds},
		Refresh: &pair}, nil
}

// sessionMembership reads the membership session sess of u acts in (nil for
// a session without one): a refresh token stays bound to it, and is refused
// (ErrRefreshInvalid) once its tenant suspended or removed it, before the
// token is spent. One GetItem, after the session names the membership.
func (s *Service) sessionMembership(ctx context.Context, u *user.User, sess *session.Session) (*user.Membership, error) {
	if sess.Scope == authz.ScopeNone {
		return nil, nil
	}
	m, err := s.Users.Membership(ctx, u.ID, sess.Scope, sess.PartnerID, sess.OrgID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, session.ErrRefreshInvalid
	}
	if err != nil {
		return nil, err
	}
	if m.State(u) != user.MemberActive {
		return nil, session.ErrRefreshInvalid
	}
	return m, nil
}

// RevokeOthers ends every session of the caller but the current one: their
// refresh tokens stop working and their access tokens are refused at once
// (authentication reads the session). Offered after a factor or the password
// changes. It answers how many sessions it ended.
func (s *Service) RevokeOthers(ctx context.Context) (int, error) {
	// Ending the account's other sessions (its password ones among them) is
	// account-wide: an identity provider's session may not.
	p, err := authz.AccountOwner(ctx)
	if err != nil {
		return 0, err
	}
	others, err := s.Sessions.Others(ctx, p.UserID, p.SessionID)
	if err != nil {
		return 0, err
	}
	// A transaction holds 100 writes; the audit record is one of them.
	for start := 0; start < len(others); start += store.MaxTxItems - 1 {
		tx := &store.Tx{}
		for i := start; i < min(start+store.MaxTxItems-1, len(others)); i++ {
			tx.Add(s.Sessions.RevokeWrite(&others[i]))
		}
		if start == 0 {
			tx.Add(audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID,
				Action: "user.sessions.revoke_others", ResourceType: "user", ResourceID: p.UserID, ResourceName: p.Email,
				Details: map[string]any{"sessions": len(others)}}))
		}
		if err := s.St.Commit(ctx, tx); err != nil {
			return 0, fmt.Errorf("revoke other sessions of %s: %w", p.UserID, err)
		}
	}
	return len(others), nil
}

// Logout revokes every token of the caller. A session an identity provider
// opened ends only itself: revoking every token of the account would let a
// tenant's provider end the account's own sessions elsewhere
// (docs/decisions.md#sso-sessions).
func (s *Service) Logout(ctx context.Context) error {
	p, err := authz.Authenticated(ctx)
	if err != nil {
		return err
	}
	end := user.RevokeSessionsWrite(p.UserID, s.Clock.Now())
	if p.IdP != "" {
		end = s.Sessions.RevokeOneWrite(p.UserID, p.SessionID)
	}
	tx := (&store.Tx{}).Add(end,
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "user.logout",
			ResourceType: "user", ResourceID: p.UserID, ResourceName: p.Email}))
	ev, err := event.New(s.Clock, eventtype.UserLogout, p.OrgID, map[string]any{"userId": p.UserID, "email": p.Email})
	if err != nil {
		return err
	}
	return s.Events.Commit(ctx, tx, ev)
}
