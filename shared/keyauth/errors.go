package keyauth

import "github.com/gale-rmm/gale/shared/fault"

// Refusals of X-API-Key, with the messages of the OpenAPI document's apiKeyAuth.
var (
	errKeyFormat      = fault.Unauthorized("Invalid API key format")
	errKeyUnknown     = fault.Unauthorized("Invalid API key")
	errKeyRevoked     = fault.Unauthorized("API key is revoked")
	errKeyExpired     = fault.Unauthorized("API key is expired")
	errLimitedMessage = "Rate limit exceeded"
)
