package device

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the device routes. A device the caller cannot reach is "not found".
var (
	ErrNotFound       = fault.NotFound("Device not found")
	ErrGroupNotFound  = fault.Invalid("groupId", "must be a device group of the device's organization")
	ErrDecommissioned = fault.Conflict("Device is already decommissioned").WithCode(fault.CodeWrongStatus)
	ErrGroupScope     = fault.Forbidden("Device-group-restricted users can move devices only between their groups")
	ErrConcurrent     = fault.Conflict("Device was changed concurrently").WithCode(fault.CodeRaceLost)
	ErrNoUpdates      = fault.BadRequest("No updates provided")
)
