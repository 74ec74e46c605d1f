// Package mfa owns the code-based second factors of sign-in: TOTP (setup, enable,
// disable), SMS (phone verification, the SMS factor, login and step-up codes),
// recovery codes, and the organization MFA policy applied to them. Passkeys live
// in shared/passkey; this package reads only the profile's passkeyCount, which
// shared/passkey keeps.
//
// Rows, all in the user's partition (user.ProfileKey holds the factors):
//
//	TOTP setup     USER#<uid> / MFA#SETUP   {secret, codes (both sealed), ttl 10 min}   replaced by a new setup; deleted on enable
//	phone check    USER#<uid> / MFA#PHONE   {phoneNumber, codeHash, ttl 10 min}         deleted on confirm
//	SMS code       USER#<uid> / MFA#SMS     {codeHash, ttl 5 min}                       login or step-up code; deleted when used
//
// Profile attributes: mfaSecret (sealed with shared/secret for "totp:<uid>"),
// mfaEnabled, mfaMethod (the primary method offered at login), mfaSmsEnabled,
// mfaRecoveryCodes (HMAC-SHA256 hashes; a spent one becomes "-"), mfaLastStep
// (the TOTP time step last accepted), phoneNumber, phoneVerified, version.
//
// Every code is single use, by compare-and-swap in the transaction that acts on
// it: a TOTP code sets mfaLastStep under the condition mfaLastStep < step; a
// recovery code replaces its hash under the condition that the hash is still
// there; an SMS or phone code deletes its item under the condition that the
// hash matches. At sign-in these conditions ride in sign-in's own profile update
// (signin.CompleteWith), with the temp token's spend, so a sign-in fails when any
// of them was spent concurrently. Setting changes also compare-and-swap the
// profile's version.
//
// Primary method: enabling TOTP makes it primary; enabling SMS makes it primary
// only when no TOTP is enrolled; disabling leaves passkey primary when the user
// still has one (mfaEnabled stays true, under the condition passkeyCount > 0),
// otherwise MFA is off.
//
// Organization policy (tenant security settings) applies to a user through their
// organization memberships, strictest first: requireMfa when any organization
// requires it, a method allowed only when every organization allows it. Partner
// and system staff have no organization policy. The reading is Policy
// (OrgPolicy), shared with shared/passkey.
//
// ENABLE_2FA=false answers 403 on setup, verify, enable, recovery-codes,
// sms/enable and sms/send (disable and the phone routes stay open); sign-in then
// never asks for a second factor, and Force MFA is waived (shared/auth).
package mfa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/secret"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
)

// SignIn is what MFA needs of password sign-in (signin.Service).
type SignIn interface {
	PendingUser(ctx context.Context, tempToken string) (*user.User, error)
	Pending(ctx context.Context, tempToken string) (*signin.Pending, error)
	FinishPending(ctx context.Context, pd *signin.Pending, c signin.Client, pc signin.ProfileChange,
		extra ...*store.Write) (signin.Result, error)
}

// Policy reads the organization MFA policy binding a user's account: whether
// MFA is required and which methods are allowed (OrgPolicy, the
// one reading shared/passkey uses too).
type Policy interface {
	UserMFAPolicy(ctx context.Context, userID string) (requireMFA bool, allowedMethods []string, err error)
}

// SMSSender sends a text message (notify.Notifier).
type SMSSender interface {
	SendSMS(ctx context.Context, phone, text string) error
}

// Service runs the MFA routes.
type Service struct {
	St      *store.Store
	Users   user.Store
	SignIn  SignIn
	Limits  ratelimit.Limiter
	Clock   clock.Clock
	Box     *secret.Box // seals TOTP secrets and pending recovery codes
	CodeKey []byte      // HMAC key of stored code hashes
	SMS     SMSSender
	Policy  Policy // nil: no organization policy
	// Enable2FA false (ENABLE_2FA=false) refuses the factor routes; sign-in
	// never asks for a second factor then.
	Enable2FA bool
}

// Lifetimes of the spec's limits table.
const (
	SetupTTL      = 10 * time.Minute
	PhoneCodeTTL  = 10 * time.Minute
	SMSCodeTTL    = signin.TempTokenTTL
	codeDigits    = 6
	methodTOTP    = "totp"
	methodSMS     = "sms"
	methodPasskey = "passkey"
)

func setupKey(uid string) store.KeyRef { return user.Key(uid, "MFA#SETUP") }
func phoneKey(uid string) store.KeyRef { return user.Key(uid, "MFA#PHONE") }
func smsKey(uid string) store.KeyRef   { return user.Key(uid, "MFA#SMS") }

// Contexts bound into sealed values, so one cannot be moved to another user or use.
func totpContext(uid string) string  { return "totp:" + uid }
func codesContext(uid string) string { return "recovery-setup:" + uid }

type setupItem struct {
	store.Keys
	Secret    string `dynamodbav:"secret"`
	Codes     string `dynamodbav:"codes"`
	ExpiresAt string `dynamodbav:"expiresAt"`
}

type codeItem struct {
	store.Keys
	CodeHash    string `dynamodbav:"codeHash"`
	PhoneNumber string `dynamodbav:"phoneNumber,omitempty"`
	ExpiresAt   string `dynamodbav:"expiresAt"`
}

func (s *Service) hasher() codeHasher { return codeHasher{key: s.CodeKey} }

// caller returns the signed-in user making an own-account MFA change; every
// one is account-wide, so an SSO session is refused (authz.AccountOwner).
func caller(ctx context.Context) (*authz.Principal, error) { return authz.AccountOwner(ctx) }

// SetupResult is the TOTP setup response (AuthMFASetup in the OpenAPI document).
type SetupResult struct {
	Secret        string   `json:"secret"`
	OTPAuthURL    string   `json:"otpAuthUrl"`
	QRCodeDataURL string   `json:"qrCodeDataUrl"`
	RecoveryCodes []string `json:"recoveryCodes"`
}

// Setup begins TOTP enrolment: a new secret and recovery codes, held sealed for
// 10 minutes until Enable confirms a code. A new setup replaces a pending one.
func (s *Service) Setup(ctx context.Context) (*SetupResult, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !s.Enable2FA {
		return nil, ErrTwoFactorOff
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if u.TOTPEnrolled() {
		return nil, ErrTOTPEnabled
	}
	if err := s.allow(ctx, u.ID, methodTOTP, ErrTOTPNotAllowed); err != nil {
		return nil, err
	}
	key, err := newKey(u.Email)
	if err != nil {
		return nil, err
	}
	qr, err := qrDataURL(key)
	if err != nil {
		return nil, err
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	sealedSecret, err := s.Box.Seal([]byte(key.Secret()), totpContext(u.ID))
	if err != nil {
		return nil, err
	}
	// Held sealed, not hashed: Enable returns the same codes the setup showed.
	raw, err := json.Marshal(codes)
	if err != nil {
		return nil, err
	}
	sealedCodes, err := s.Box.Seal(raw, codesContext(u.ID))
	if err != nil {
		return nil, err
	}
	exp := s.Clock.Now().Add(SetupTTL)
	k := setupKey(u.ID)
	if err := s.St.Do(ctx, store.Put(setupItem{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)},
		Secret: sealedSecret, Codes: sealedCodes, ExpiresAt: clock.Format(exp)})); err != nil {
		return nil, fmt.Errorf("mfa setup of %s: %w", u.ID, err)
	}
	return &SetupResult{Secret: key.Secret(), OTPAuthURL: key.URL(), QRCodeDataURL: qr, RecoveryCodes: codes}, nil
}

// Enabled answers the routes that turn a factor on.
type Enabled struct {
	RecoveryCodes []string `json:"recoveryCodes"`
	MFAEnabled    bool     `json:"mfaEnabled"`
	MFAMethod     string   `json:"mfaMethod"`
}

// Enable confirms the pending TOTP setup with a current code: the secret and the
// setup's recovery codes become the user's, and TOTP becomes the primary method.
func (s *Service) Enable(ctx context.Context, code string) (*Enabled, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !s.Enable2FA {
		return nil, ErrTwoFactorOff
	}
	code = strings.TrimSpace(code)
	if !isDigits(code, codeDigits) {
		return nil, fault.Invalid("code", "must be the 6-digit code of your authenticator app")
	}
	sk := setupKey(p.UserID)
	var setup setupItem
	u, found, err := s.profileWith(ctx, p.UserID, sk, &setup)
	if err != nil {
		return nil, err
	}
	if u.TOTPEnrolled() {
		return nil, ErrTOTPEnabled
	}
	if !found {
		return nil, ErrNoSetup
	}
	if err := s.allow(ctx, u.ID, methodTOTP, ErrTOTPNotAllowed); err != nil {
		return nil, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.MFAVerify, u.ID); err != nil {
		return nil, err
	}
	sec, err := s.Box.Open(setup.Secret, totpContext(u.ID))
	if err != nil {
		return nil, fmt.Errorf("mfa setup of %s: %w", u.ID, err)
	}
	step, ok, err := matchTOTP(string(sec), code, s.Clock.Now(), 0)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrCode
	}
	raw, err := s.Box.Open(setup.Codes, codesContext(u.ID))
	if err != nil {
		return nil, fmt.Errorf("mfa setup of %s: %w", u.ID, err)
	}
	var codes []string
	if err := json.Unmarshal(raw, &codes); err != nil {
		return nil, fmt.Errorf("mfa setup of %s: %w", u.ID, err)
	}
	ch := s.change(u).set("mfaSecret", setup.Secret).set("mfaEnabled", true).set("mfaMethod", methodTOTP).
		set("mfaRecoveryCodes", s.hasher().recoveryHashes(codes)).set("mfaLastStep", step)
	tx := (&store.Tx{}).Add(ch.write(u.ID),
		// The setup confirmed is the one read: a setup replaced meanwhile fails the change.
		spendSetupWrite(sk, setup.Secret),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "auth.mfa.setup",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email, Details: map[string]any{"method": methodTOTP}}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, err
	}
	return &Enabled{RecoveryCodes: codes, MFAEnabled: true, MFAMethod: methodTOTP}, nil
}

// VerifyLogin finishes an MFA sign-in: a TOTP code, the SMS code sent for this
// sign-in, or an unused recovery code, with the temp token of the password step.
// Tokens are issued with mfa: true.
func (s *Service) VerifyLogin(ctx context.Context, tempToken, code string, c signin.Client) (signin.Result, error) {
	// Public route: the temp token (password already verified) is the credential;
	// the per-user rate limit guards the code.
	pd, err := s.SignIn.Pending(ctx, tempToken)
	if err != nil {
		return signin.Result{}, err
	}
	u := pd.User
	if !s.Enable2FA {
		return signin.Result{}, ErrTwoFactorOff
	}
	pr, err := s.verify(ctx, u, code, func() (*codeItem, error) { return s.smsCode(ctx, u.ID) }, ErrLoginCode)
	if err != nil {
		return signin.Result{}, err
	}
	// The membership (and an SSO first factor's provider) are the first factor's.
	return s.SignIn.FinishPending(ctx, pd, c, pr.profileChange(), pr.write(u.ID))
}

// smsCode reads the user's pending SMS code, nil when there is none.
func (s *Service) smsCode(ctx context.Context, uid string) (*codeItem, error) {
	var it codeItem
	k := smsKey(uid)
	err := s.St.Get(ctx, k.PK, k.SK, &it)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &it, nil
}

// Status answers Disable.
type Status struct {
	MFAEnabled bool   `json:"mfaEnabled"`
	MFAMethod  string `json:"mfaMethod,omitempty"`
}

// Disable turns off TOTP and SMS with a current code (TOTP, SMS or recovery),
// clearing the secret, the phone number and the recovery codes. Passkeys stay:
// when one remains, MFA stays on with passkey as the primary method. Refused
// when an organization of the user requires MFA and no passkey would remain.
func (s *Service) Disable(ctx context.Context, code string) (*Status, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	if code == "" {
		return nil, fault.Invalid("code", "is required")
	}
	u, sms, err := s.profileAndSMS(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if !u.TOTPEnrolled() && !u.SMSEnrolled() {
		if u.MFAEnabled {
			return nil, ErrNoCodeFactor
		}
		return nil, ErrNotEnabled
	}
	pol, err := s.policy(ctx, u.ID)
	if err != nil {
		return nil, err
	}
	passkey := u.PasskeyCount > 0
	if pol.require && !passkey {
		return nil, ErrRequiredByOrg
	}
	pr, err := s.verify(ctx, u, code, func() (*codeItem, error) { return sms, nil }, ErrCode)
	if err != nil {
		return nil, err
	}
	ch := s.change(u).guard(pr)
	// shared/passkey moves passkeyCount by compare-and-swap; the decision holds
	// only while the count is on the same side of zero.
	ch.passkeys(passkey)
	ch.set("phoneVerified", false).set("mfaEnabled", passkey)
	ch.remove("mfaSecret", "mfaRecoveryCodes", "mfaLastStep", "phoneNumber", "mfaSmsEnabled")
	st := &Status{MFAEnabled: passkey}
	if passkey {
		ch.set("mfaMethod", methodPasskey)
		st.MFAMethod = methodPasskey
	} else {
		ch.remove("mfaMethod")
	}
	var removed []string
	if u.TOTPEnrolled() {
		removed = append(removed, methodTOTP)
	}
	if u.SMSEnrolled() {
		removed = append(removed, methodSMS)
	}
	tx := (&store.Tx{}).Add(ch.write(u.ID), pr.write(u.ID),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "auth.mfa.disable",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"methods": removed, "passkeyRemains": passkey, "proof": pr.kind}}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, err
	}
	return st, nil
}

// RotateRecovery replaces every recovery code with a new set of 10. It needs a
// current code (TOTP, SMS or an unused recovery code); a user whose only factor
// is a passkey, who has no code to give, needs a session that passed MFA.
func (s *Service) RotateRecovery(ctx context.Context, code string) ([]string, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	if !s.Enable2FA {
		return nil, ErrTwoFactorOff
	}
	code = strings.TrimSpace(code)
	u, sms, err := s.profileAndSMS(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if !u.MFAEnabled {
		return nil, ErrNotEnabled
	}
	codeFactor := u.TOTPEnrolled() || u.SMSEnrolled() || liveCodes(u.MFARecoveryCodes) > 0
	var pr proof
	switch {
	case code == "" && (codeFactor || !p.MFA):
		return nil, fault.Invalid("code", "is required: a current TOTP, SMS or recovery code")
	case code != "":
		if pr, err = s.verify(ctx, u, code, func() (*codeItem, error) { return sms, nil }, ErrCode); err != nil {
			return nil, err
		}
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	ch := s.change(u).guard(pr)
	ch.set("mfaRecoveryCodes", s.hasher().recoveryHashes(codes))
	if pr.kind == methodTOTP {
		ch.spend(pr)
	}
	tx := (&store.Tx{}).Add(ch.write(u.ID), pr.write(u.ID),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "auth.mfa.recovery_codes.rotate",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"count": len(codes), "proof": pr.kindOr("mfa_session")}}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, err
	}
	return codes, nil
}

// profileAndSMS reads the user and their pending SMS code (nil when none) in one call.
func (s *Service) profileAndSMS(ctx context.Context, uid string) (*user.User, *codeItem, error) {
	var c codeItem
	u, found, err := s.profileWith(ctx, uid, smsKey(uid), &c)
	if err != nil || !found {
		return u, nil, err
	}
	return u, &c, nil
}

// profileWith reads user uid's profile and, in the same call, the item at k of
// their partition into it; found is false when there is no such item.
func (s *Service) profileWith(ctx context.Context, uid string, k store.KeyRef, it any) (*user.User, bool, error) {
	pk := user.ProfileKey(uid)
	items, err := s.St.BatchGet(ctx, pk, k)
	if err != nil {
		return nil, false, err
	}
	pi, ok := items[pk.PK+"|"+pk.SK]
	if !ok {
		return nil, false, fmt.Errorf("user %s: %w", uid, store.ErrNotFound)
	}
	var u user.User
	if err := store.Unmarshal(pi, &u); err != nil {
		return nil, false, err
	}
	ki, ok := items[k.PK+"|"+k.SK]
	if !ok {
		return &u, false, nil
	}
	if err := store.Unmarshal(ki, it); err != nil {
		return nil, false, err
	}
	return &u, true, nil
}

// proof is a verified code and how spending it is written.
type proof struct {
	kind  string // totp, sms, recovery; "" for none
	step  int64
	index int
	hash  string
	// used: a refused TOTP code was the code of a step already accepted.
	used bool
}

func (p proof) kindOr(def string) string {
	if p.kind == "" {
		return def
	}
	return p.kind
}

// verify counts an attempt against u's MFAVerify limit, then checks code
// (check); a wrong, replayed or spent code answers wrong, a TOTP code already
// used with the hint to wait for the next one.
func (s *Service) verify(ctx context.Context, u *user.User, code string, sms func() (*codeItem, error), wrong *fault.Error) (proof, error) {
	if err := s.Limits.Allow(ctx, ratelimit.MFAVerify, u.ID); err != nil {
		return proof{}, err
	}
	pr, ok, err := s.check(ctx, u, code, sms)
	if err != nil {
		return proof{}, err
	}
	if !ok && pr.used {
		return proof{}, wrong.WithDetails(codeUsedHint)
	}
	if !ok {
		return proof{}, wrong
	}
	return pr, nil
}

// check verifies code against u's factors: six digits against the TOTP secret,
// then against the SMS code last sent (sms loads it, only when needed); anything
// else as a recovery code. ok is false for a wrong, replayed or spent code; the
// proof's used tells a TOTP code of a step already accepted.
func (s *Service) check(ctx context.Context, u *user.User, code string, sms func() (*codeItem, error)) (proof, bool, error) {
	code = strings.ReplaceAll(strings.TrimSpace(code), " ", "")
	if isDigits(code, codeDigits) {
		var used bool
		if u.TOTPEnrolled() {
			sec, err := s.Box.Open(u.MFASecret, totpContext(u.ID))
			if err != nil {
				return proof{}, false, fmt.Errorf("totp secret of %s: %w", u.ID, err)
			}
			step, ok, err := matchTOTP(string(sec), code, s.Clock.Now(), u.MFALastStep)
			if err != nil || ok {
				return proof{kind: methodTOTP, step: step}, ok, err
			}
			// Refused; it is the code of a step already spent when it matches
			// with no step excluded (the window's steps are all > 0).
			if _, used, err = matchTOTP(string(sec), code, s.Clock.Now(), 0); err != nil {
				return proof{}, false, err
			}
		}
		if u.SMSEnrolled() {
			it, err := sms()
			if err != nil || it == nil {
				return proof{used: used}, false, err
			}
			h := s.hasher().hash(methodSMS, u.ID, code)
			if sameCode(it.CodeHash, h) {
				return proof{kind: methodSMS, hash: h}, true, nil
			}
		}
		return proof{used: used}, false, nil
	}
	n, ok := normalizeRecovery(code)
	if !ok {
		return proof{}, false, nil
	}
	h := s.hasher().recovery(n)
	i := findRecovery(u.MFARecoveryCodes, h)
	if i < 0 {
		return proof{}, false, nil
	}
	return proof{kind: "recovery", index: i, hash: h}, true, nil
}

// commit runs a settings change; a failed condition is a concurrent change or a
// code spent meanwhile.
func (s *Service) commit(ctx context.Context, tx *store.Tx) error {
	err := s.St.Commit(ctx, tx)
	var te *store.TxError
	if errors.As(err, &te) {
		return ErrRace.Wrap(err)
	}
	return err
}

// policy is the MFA policy that applies to a user.
type policy struct {
	require bool
	allowed []string
}

func (p policy) allows(method string) bool { return slices.Contains(p.allowed, method) }

// allow answers notAllowed when the organization MFA policy of user uid does
// not allow method.
func (s *Service) allow(ctx context.Context, uid, method string, notAllowed error) error {
	pol, err := s.policy(ctx, uid)
	if err != nil {
		return err
	}
	if !pol.allows(method) {
		return notAllowed
	}
	return nil
}

// policy is the organization MFA policy of user uid (Policy; every method
// allowed and MFA optional when none is wired).
func (s *Service) policy(ctx context.Context, uid string) (policy, error) {
	if s.Policy == nil {
		return policy{allowed: append([]string(nil), tenant.MFAMethods...)}, nil
	}
	require, allowed, err := s.Policy.UserMFAPolicy(ctx, uid)
	if err != nil {
		return policy{}, err
	}
	return policy{require: require, allowed: allowed}, nil
}
