package principal

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the principal routes, with the messages of the OpenAPI document. A
// principal or organization the caller cannot reach is "not found".
var (
	ErrNotFound          = fault.NotFound("Service principal not found")
	ErrKeyNotUserCreated = fault.Invalid("keyId", "must be a user-created API key (a service principal's key never moves)")
	ErrRestricted        = fault.Forbidden("Site-restricted users cannot manage service principals, which are organization-wide")
	ErrDisabled          = fault.Conflict("Service principal is disabled").WithCode(fault.CodeWrongStatus)
	ErrConcurrent        = fault.Conflict("Service principal was changed concurrently").WithCode(fault.CodeRaceLost)
	ErrKeyOtherOrg       = fault.Invalid("keyId", "must be an API key of the principal's organization")
	ErrKeyNotActive      = fault.Invalid("keyId", "must be an active API key")
	ErrOwnedAlready      = fault.Invalid("keyId", "already belongs to this service principal")
)
