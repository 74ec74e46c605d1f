package mfa

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the MFA routes. The spec gives no texts for these; each says what to
// do next. Wrong, replayed and spent codes share one message, so a guess learns
// nothing about why it failed; only a TOTP code already used adds
// codeUsedHint (issue 35: right after enrolling, the app still shows the code
// the enrolment spent). That tells a caller only that an old code was right:
// replay protection stands, and a spent step says nothing of the next one.
var (
	// ErrTwoFactorOff answers the factor routes when ENABLE_2FA=false.
	ErrTwoFactorOff = fault.Forbidden("Two-factor authentication is disabled on this server")
	// ErrLoginCode is a wrong, replayed or spent code at sign-in (401, like the password step).
	ErrLoginCode = fault.Unauthorized("Invalid MFA code")
	// ErrCode is a wrong, replayed or spent code on an authenticated route.
	ErrCode = fault.BadRequest("Invalid MFA code")

	ErrNoSetup          = fault.BadRequest("No TOTP setup in progress or it expired; start again with /auth/mfa/setup")
	ErrTOTPEnabled      = fault.Conflict("TOTP is already enabled; disable it first to enrol another authenticator")
	ErrSMSEnabled       = fault.Conflict("SMS MFA is already enabled")
	ErrNotEnabled       = fault.BadRequest("MFA is not enabled")
	ErrNoCodeFactor     = fault.BadRequest("No TOTP or SMS factor is enabled; manage passkeys under /auth/passkeys")
	ErrRequiredByOrg    = fault.Forbidden("MFA is required by your organization and cannot be disabled")
	ErrTOTPNotAllowed   = fault.Forbidden("TOTP MFA is not allowed by your organization")
	ErrSMSNotAllowed    = fault.Forbidden("SMS MFA is not allowed by your organization")
	ErrPhoneNotVerified = fault.BadRequest("A verified phone number is required; verify one with /auth/phone/verify")
	ErrNoPhoneCheck     = fault.BadRequest("No phone verification in progress or the code expired; request a new code")
	ErrPhoneInUse       = fault.Conflict("Disable SMS MFA before changing your phone number")
	ErrSMSNotEnabled    = fault.BadRequest("SMS MFA is not enabled for this account")
	ErrRace             = fault.Conflict("MFA settings changed at the same time; try again").WithCode(fault.CodeRaceLost)
)

// codeUsedHint is the details of ErrLoginCode and ErrCode for a TOTP code
// already used: each code is accepted once, so the next one is needed.
var codeUsedHint = map[string]any{"hint": "this code was already used: wait for the next code"}
