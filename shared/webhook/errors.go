package webhook

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the webhook routes, with the OpenAPI document's texts. A webhook or
// organization the caller cannot reach is "not found".
var (
	ErrNotFound         = fault.NotFound("Webhook not found")
	ErrDeliveryNotFound = fault.NotFound("Webhook delivery not found")
	ErrOrgNotFound      = fault.NotFound("Organization not found")
	ErrOrgContext       = fault.BadRequest("Organization context required")
	ErrOnlyFailed       = fault.BadRequest("Only failed deliveries can be retried").WithCode(fault.CodeWrongStatus)
	ErrNoUpdates        = fault.BadRequest("No updates provided")
	ErrSystemOnly       = fault.Forbidden("Insufficient permissions")
)

// invalidURL is 400 `Invalid webhook URL`, the reason under details.reason and
// details.fieldErrors.url.
func invalidURL(reason string) error {
	return fault.New(fault.KindValidation, "Invalid webhook URL").WithDetails(map[string]any{
		"reason": reason, "fieldErrors": map[string][]string{"url": {reason}}})
}
