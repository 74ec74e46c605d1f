package enrollment

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the enrollment-key routes. A key or organization the caller cannot
// reach is "not found", exactly as if it did not exist.
var (
	ErrNotFound = fault.NotFound("Enrollment key not found")
	ErrSite     = fault.Invalid("siteId", "must be a site of the organization")
	// ErrSiteRequired refuses a site-restricted caller a key wider than its sites.
	ErrSiteRequired = fault.Forbidden("Site-restricted users can create enrollment keys only for their sites")
	// ErrGroupRestricted refuses a device-group-restricted caller: the devices a
	// key enrolls join no group, so the key would reach beyond its groups.
	ErrGroupRestricted = fault.Forbidden("Device-group-restricted users cannot create enrollment keys")
	ErrConcurrent      = fault.Conflict("Enrollment key was changed concurrently").WithCode(fault.CodeRaceLost)
)

func invalid(path, msg string) error { return fault.Invalid(path, msg) }
