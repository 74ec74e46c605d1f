package mfa

import (
	"context"
	"fmt"
	"strings"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/shared/valid"
)

// Sent answers the routes that send a code by SMS. The number is masked.
type Sent struct {
	Success          bool   `json:"success"`
	SentTo           string `json:"sentTo"`
	ExpiresInSeconds int    `json:"expiresInSeconds"`
}

// StartPhone sends a 6-digit code to phone (E.164) to prove the caller holds it;
// the code is stored hashed for 10 minutes. A number cannot be changed while SMS
// MFA is enabled (it would move the second factor with only a session).
func (s *Service) StartPhone(ctx context.Context, phone string) (*Sent, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	phone = strings.TrimSpace(phone)
	f := fault.Fields{}
	valid.Phone(f, "phoneNumber", phone)
	if err := f.Err(); err != nil {
		return nil, err
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	if u.SMSEnrolled() {
		return nil, ErrPhoneInUse
	}
	if err := s.Limits.Allow(ctx, ratelimit.PhoneVerifyUser, u.ID); err != nil {
		return nil, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.PhoneVerifyPhone, ratelimit.Hash(phone)); err != nil {
		return nil, err
	}
	code, err := digits(codeDigits)
	if err != nil {
		return nil, err
	}
	exp := s.Clock.Now().Add(PhoneCodeTTL)
	k := phoneKey(u.ID)
	if err := s.St.Do(ctx, store.Put(codeItem{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)},
		CodeHash: s.hasher().hash("phone", u.ID, phone, code), PhoneNumber: phone, ExpiresAt: clock.Format(exp)})); err != nil {
		return nil, fmt.Errorf("phone verification of %s: %w", u.ID, err)
	}
	if err := s.SMS.SendSMS(ctx, phone, fmt.Sprintf("Your Gale verification code is %s. It expires in 10 minutes.", code)); err != nil {
		return nil, err
	}
	return &Sent{Success: true, SentTo: maskPhone(phone), ExpiresInSeconds: int(PhoneCodeTTL.Seconds())}, nil
}

// Phone answers ConfirmPhone.
type Phone struct {
	PhoneNumber   string `json:"phoneNumber"`
	PhoneVerified bool   `json:"phoneVerified"`
}

// ConfirmPhone checks the code StartPhone sent and records the number as verified.
func (s *Service) ConfirmPhone(ctx context.Context, code string) (*Phone, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	code = strings.TrimSpace(code)
	if !isDigits(code, codeDigits) {
		return nil, fault.Invalid("code", "must be the 6-digit code sent by SMS")
	}
	ck := phoneKey(p.UserID)
	var pending codeItem
	u, found, err := s.profileWith(ctx, p.UserID, ck, &pending)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoPhoneCheck
	}
	if err := s.Limits.Allow(ctx, ratelimit.MFAVerify, u.ID); err != nil {
		return nil, err
	}
	h := s.hasher().hash("phone", u.ID, pending.PhoneNumber, code)
	if !sameCode(pending.CodeHash, h) {
		return nil, ErrCode
	}
	if u.SMSEnrolled() {
		return nil, ErrPhoneInUse
	}
	ch := s.change(u).set("phoneNumber", pending.PhoneNumber).set("phoneVerified", true)
	tx := (&store.Tx{}).Add(ch.write(u.ID), spendCodeWrite(ck, h))
	if err := s.commit(ctx, tx); err != nil {
		return nil, err
	}
	return &Phone{PhoneNumber: pending.PhoneNumber, PhoneVerified: true}, nil
}

// EnableSMS turns on SMS as a second factor to the verified phone and issues a
// new set of recovery codes (replacing any earlier set). SMS becomes the primary
// method unless TOTP is enrolled, which stays primary.
func (s *Service) EnableSMS(ctx context.Context) (*Enabled, error) {
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
	if u.SMSEnrolled() {
		return nil, ErrSMSEnabled
	}
	if !u.PhoneVerified || u.PhoneNumber == "" {
		return nil, ErrPhoneNotVerified
	}
	if err := s.allow(ctx, u.ID, methodSMS, ErrSMSNotAllowed); err != nil {
		return nil, err
	}
	codes, err := newRecoveryCodes()
	if err != nil {
		return nil, err
	}
	method := methodSMS
	if u.TOTPEnrolled() {
		method = methodTOTP
	}
	ch := s.change(u).set("mfaSmsEnabled", true).set("mfaEnabled", true).set("mfaMethod", method).
		set("mfaRecoveryCodes", s.hasher().recoveryHashes(codes))
	// The phone enabled is the verified one read.
	ch.when(store.Is("phoneVerified", true).And(store.Is("phoneNumber", u.PhoneNumber)))
	tx := (&store.Tx{}).Add(ch.write(u.ID),
		audit.Put(s.Clock, audit.Entry{Actor: p.Actor(), OrgID: p.OrgID, PartnerID: p.PartnerID, Action: "auth.mfa.setup",
			ResourceType: "user", ResourceID: u.ID, ResourceName: u.Email,
			Details: map[string]any{"method": methodSMS, "phone": maskPhone(u.PhoneNumber), "primary": method}}))
	if err := s.commit(ctx, tx); err != nil {
		return nil, err
	}
	return &Enabled{RecoveryCodes: codes, MFAEnabled: true, MFAMethod: method}, nil
}

// SendLoginSMS sends the sign-in code of a pending MFA sign-in to the user's
// verified phone. Limits: 3 per 5 minutes per temp token, 5 per 15 minutes per
// phone number.
func (s *Service) SendLoginSMS(ctx context.Context, tempToken string) (*Sent, error) {
	// Public route: the temp token (password already verified) is the credential.
	u, err := s.SignIn.PendingUser(ctx, tempToken)
	if err != nil {
		return nil, err
	}
	return s.sendCode(ctx, u, "temp:"+ratelimit.Hash(tempToken))
}

// SendStepUpSMS sends a code to the signed-in caller's SMS factor, for the
// routes that need a current code (disable, recovery-code rotation).
func (s *Service) SendStepUpSMS(ctx context.Context) (*Sent, error) {
	p, err := caller(ctx)
	if err != nil {
		return nil, err
	}
	u, err := s.Users.Get(ctx, p.UserID)
	if err != nil {
		return nil, err
	}
	return s.sendCode(ctx, u, "user:"+u.ID)
}

func (s *Service) sendCode(ctx context.Context, u *user.User, subject string) (*Sent, error) {
	if !s.Enable2FA {
		return nil, ErrTwoFactorOff
	}
	if !u.SMSEnrolled() {
		return nil, ErrSMSNotEnabled
	}
	if err := s.allow(ctx, u.ID, methodSMS, ErrSMSNotAllowed); err != nil {
		return nil, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.SMSSendTemp, subject); err != nil {
		return nil, err
	}
	if err := s.Limits.Allow(ctx, ratelimit.SMSSendPhone, ratelimit.Hash(u.PhoneNumber)); err != nil {
		return nil, err
	}
	code, err := digits(codeDigits)
	if err != nil {
		return nil, err
	}
	exp := s.Clock.Now().Add(SMSCodeTTL)
	k := smsKey(u.ID)
	// A new code replaces the previous one.
	if err := s.St.Do(ctx, store.Put(codeItem{Keys: store.Keys{PK: k.PK, SK: k.SK, TTL: store.TTL(exp)},
		CodeHash: s.hasher().hash(methodSMS, u.ID, code), ExpiresAt: clock.Format(exp)})); err != nil {
		return nil, fmt.Errorf("sms code of %s: %w", u.ID, err)
	}
	if err := s.SMS.SendSMS(ctx, u.PhoneNumber, fmt.Sprintf("Your Gale sign-in code is %s. It expires in 5 minutes.", code)); err != nil {
		return nil, err
	}
	return &Sent{Success: true, SentTo: maskPhone(u.PhoneNumber), ExpiresInSeconds: int(SMSCodeTTL.Seconds())}, nil
}
