package apikey

import (
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/fault"
)

// Errors of the key routes, with the messages of the OpenAPI document. A key
// or organization the caller cannot reach is "not found".
var (
	ErrNotFound        = fault.NotFound("API key not found")
	ErrRevokedUpdate   = fault.BadRequest("Cannot update revoked API key")
	ErrExpiredUpdate   = fault.BadRequest("Cannot update expired API key")
	ErrAlreadyRevoked  = fault.BadRequest("API key is already revoked")
	ErrNoUpdates       = fault.BadRequest("No updates provided")
	ErrCeiling         = authz.ErrCeiling
	ErrCreatorGone     = fault.Conflict("The API key's creator no longer has access to its organization").WithCode(fault.CodeWrongStatus)
	ErrBeyondPrincipal = fault.Invalid("scopes", "must be within the service principal's scopes")
	ErrKeyRestricted   = fault.Forbidden("Site-restricted users cannot manage API keys, which are organization-wide")
	ErrConcurrent      = fault.Conflict("API key was changed concurrently").WithCode(fault.CodeRaceLost)
)
