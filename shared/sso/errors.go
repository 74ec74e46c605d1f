package sso

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the SSO routes, with the OpenAPI document's texts. A provider or
// organization the caller cannot reach is "not found".
var (
	ErrNotFound         = fault.NotFound("SSO provider not found")
	ErrOrgNotFound      = fault.NotFound("Organization not found")
	ErrPartnerNotFound  = fault.NotFound("Partner not found")
	ErrOrgContext       = fault.BadRequest("Organization context required")
	ErrSAML             = fault.BadRequest("SAML is not implemented")
	ErrNoUpdates        = fault.BadRequest("No updates provided")
	ErrClientTaken      = fault.Conflict("An SSO provider with this issuer and client ID already exists")
	ErrAnotherActive    = fault.Conflict("Another SSO provider of this organization is active")
	ErrRaceLost         = fault.Conflict("The SSO provider was changed concurrently; retry").WithCode(fault.CodeRaceLost)
	ErrExchangeCode     = fault.BadRequest("Invalid or expired token exchange code")
	ErrRoleNotFound     = fault.Invalid("defaultRoleId", "role not found")
	ErrRoleScope        = fault.Invalid("defaultRoleId", "must be a role of this organization")
	ErrPartnerRoleScope = fault.Invalid("defaultRoleId", "must be a role of this partner")
	ErrRoleCeiling      = fault.Forbidden("Cannot grant permissions you do not hold")
	ErrDefaultRoleReq   = fault.Invalid("defaultRoleId", "is required when autoProvision is on")
)

// Callback error codes (the spec's and those of
// docs/decisions.md#sso-sign-in-flow), sent as <APP_URL>/login?error=<code>.
const (
	CodeSessionExpired   = "session_expired"
	CodeProviderNotFound = "provider_not_found"
	CodeDomainNotAllowed = "domain_not_allowed"
	CodeUserNotFound     = "user_not_found"
	CodeDefaultRole      = "default_role_required"
	CodeNoOrgAccess      = "no_org_access"
	CodeAccountExists    = "account_exists"
	CodeInvalidState     = "invalid_state"
	CodeTokenExchange    = "token_exchange_failed"
	CodeIDTokenInvalid   = "id_token_invalid"
	CodeEmailMissing     = "email_missing"
	CodeProviderError    = "provider_error"
)

// CallbackError is a callback failure: its Code goes to the application.
type CallbackError struct {
	Code  string
	Cause error
}

func (e *CallbackError) Error() string {
	if e.Cause != nil {
		return "sso callback: " + e.Code + ": " + e.Cause.Error()
	}
	return "sso callback: " + e.Code
}

func (e *CallbackError) Unwrap() error { return e.Cause }

func fail(code string, cause error) error { return &CallbackError{Code: code, Cause: cause} }
