package passkey

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the passkey routes. The spec gives none of these texts.
var (
	// ErrPassword answers a wrong current password at the step-up.
	ErrPassword = fault.Unauthorized("Current password is incorrect")
	// ErrNotFound is an unknown passkey id, or another user's.
	ErrNotFound = fault.NotFound("Passkey not found")
	// ErrMethodNotAllowed refuses registration when an organization of the
	// user excludes passkey from its allowedMfaMethods.
	ErrMethodNotAllowed = fault.Forbidden("Passkey MFA is not allowed by your organization")
	// ErrLastFactor refuses deleting the account's last MFA factor while the
	// caller's role forces MFA or an organization of the user requires it.
	ErrLastFactor = fault.Forbidden("Cannot delete the last MFA factor while MFA is required")
	// ErrLimit refuses a registration beyond MaxPerUser.
	ErrLimit = fault.Conflict("Passkey limit reached")
	// ErrDuplicate is a credential the user has already registered.
	ErrDuplicate = fault.Conflict("Passkey already registered")
	// ErrConcurrent is a registration or deletion that lost a race with another
	// change of the account's MFA factors; the client starts again.
	ErrConcurrent = fault.Conflict("MFA settings changed concurrently; try again")
	// ErrRegistrationChallenge is a registration without a live challenge (never
	// issued, already used, or older than 5 minutes).
	ErrRegistrationChallenge = fault.BadRequest("Passkey registration challenge expired or already used")
	// ErrRegistration is an attestation the relying party (RP) refused.
	ErrRegistration = fault.BadRequest("Passkey registration failed")
	// ErrLoginChallenge is an assertion without a live challenge.
	ErrLoginChallenge = fault.Unauthorized("Passkey challenge expired or already used")
	// ErrAssertion is an assertion the relying party (RP) refused, or one that lost the
	// compare-and-swap on the sign count or the temp token.
	ErrAssertion = fault.Unauthorized("Passkey verification failed")
	// ErrCloned is an assertion whose sign count did not increase: a cloned
	// authenticator or a replay. Nothing is stored.
	ErrCloned = fault.Unauthorized("Passkey refused: its signature counter did not increase (possible cloned authenticator)")
	// ErrNoPasskeys answers login options for a user without passkeys.
	ErrNoPasskeys = fault.BadRequest("No passkey is registered for this account")
)
