package apikey

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
)

// Errors of the key routes, with the messages of the OpenAPI document. A key,
// principal or organization the caller cannot reach is "not found".
var (
	ErrNotFound          = fault.NotFound("API key not found")
	ErrSPNotFound        = fault.NotFound("Service principal not found")
	ErrRevokedUpdate     = fault.BadRequest("Cannot update revoked API key")
	ErrExpiredUpdate     = fault.BadRequest("Cannot update expired API key")
	ErrAlreadyRevoked    = fault.BadRequest("API key is already revoked")
	ErrNoUpdates         = fault.BadRequest("No updates provided")
	ErrCeiling           = authz.ErrCeiling
	ErrCreatorGone       = fault.Conflict("The API key's creator no longer has access to its organization").WithCode(fault.CodeWrongStatus)
	ErrBeyondPrincipal   = fault.Invalid("scopes", "must be within the service principal's scopes")
	ErrKeyNotUserCreated = fault.Invalid("keyId", "must be a user-created API key (a service principal's key never moves)")
	ErrKeyRestricted     = fault.Forbidden("Site-restricted users cannot manage API keys, which are organization-wide")
	ErrSPRestricted      = fault.Forbidden("Site-restricted users cannot manage service principals, which are organization-wide")
	ErrSPDisabled        = fault.Conflict("Service principal is disabled").WithCode(fault.CodeWrongStatus)
	ErrConcurrent        = fault.Conflict("API key was changed concurrently").WithCode(fault.CodeRaceLost)
	ErrSPConcurrent      = fault.Conflict("Service principal was changed concurrently").WithCode(fault.CodeRaceLost)
	ErrKeyOtherOrg       = fault.Invalid("keyId", "must be an API key of the principal's organization")
	ErrKeyNotActive      = fault.Invalid("keyId", "must be an active API key")
	ErrOwnedAlready      = fault.Invalid("keyId", "already belongs to this service principal")
	errKeyFormat         = fault.Unauthorized("Invalid API key format")
	errKeyUnknown        = fault.Unauthorized("Invalid API key")
	errKeyRevoked        = fault.Unauthorized("API key is revoked")
	errKeyExpired        = fault.Unauthorized("API key is expired")
	errLimitedMessage    = "Rate limit exceeded"
)
