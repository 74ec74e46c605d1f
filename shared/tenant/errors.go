package tenant

import (
	"errors"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/store"
)

// Errors of the tenancy routes. Anything of an organization the caller cannot
// reach is "not found", exactly as if it did not exist.
var (
	ErrOrgNotFound     = fault.NotFound("Organization not found")
	ErrSiteNotFound    = fault.NotFound("Site not found")
	ErrGroupNotFound   = fault.NotFound("Device group not found")
	ErrPartnerNotFound = fault.NotFound("Partner not found")

	ErrOrgNotEmpty   = fault.Conflict("Organization is not empty")
	ErrSiteNotEmpty  = fault.Conflict("Site is not empty")
	ErrGroupNotEmpty = fault.Conflict("Device group has devices")

	ErrNoUpdates = fault.BadRequest("No updates provided")

	ErrPartnerOrSystem = fault.Forbidden("Partner or system scope required")
	ErrStatusScope     = fault.Forbidden("Only partner or system scope can change an organization's status")
	ErrSiteRestricted  = fault.Forbidden("Site-restricted users cannot create or delete sites")
	ErrSiteRequired    = fault.Forbidden("Site-restricted users can create device groups only within their sites")
	ErrGroupRestricted = fault.Forbidden("Device-group-restricted users cannot create or delete device groups")
)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// failedOn reports whether write w (its handle) of a cancelled transaction
// failed its condition; an emulator that gives no reasons counts as every write.
func failedOn(err error, w *store.Write) bool {
	var te *store.TxError
	return errors.As(err, &te) && te.FailedOn(w)
}

// conditionFailed reports whether err is a failed condition of a transaction.
func conditionFailed(err error) bool { return errors.Is(err, store.ErrConditionFailed) }
