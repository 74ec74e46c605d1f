package role

import "github.com/gale-rmm/gale/shared/fault"

// Errors of the role service, with the spec's texts where it gives one.
var (
	// ErrNotFound is an unknown role or one of an owner the caller cannot see.
	ErrNotFound = fault.NotFound("Role not found")
	// ErrOrgNotFound is an orgId the caller cannot access (or that does not exist).
	ErrOrgNotFound = fault.NotFound("Organization not found")

	ErrModifySystem = fault.Forbidden("Cannot modify system roles")
	ErrDeleteSystem = fault.Forbidden("Cannot delete system roles")
	// ErrWildcard refuses `*:*` (directly or through a parent) to a caller who
	// does not hold it (described on POST /roles in the OpenAPI document).
	ErrWildcard = fault.Forbidden("Only a holder of *:* can assign the *:* permission")
	// ErrCeiling refuses permissions the caller does not hold themselves.
	ErrCeiling = fault.Forbidden("Cannot grant permissions you do not hold")
	// ErrAboveLevel: editing, deleting or re-parenting a role that (or whose
	// inheriting roles) holds a permission the caller lacks.
	ErrAboveLevel = fault.Forbidden("Cannot change a role that holds permissions you do not hold")

	// ErrInUse (users hold the role) and ErrInherited (no user, but child roles
	// inherit from it) carry details {userCount, childRoleCount}.
	ErrInUse     = fault.BadRequest("Cannot delete role with assigned users")
	ErrInherited = fault.BadRequest("Cannot delete role inherited by other roles")
	ErrCircular  = fault.BadRequest("Circular role inheritance")
	ErrTooDeep   = fault.BadRequest("Role inheritance is too deep")
	ErrNoUpdates = fault.BadRequest("No updates provided")

	ErrNameTaken = fault.Conflict("A role with this name already exists")
	// ErrChanged is a lost compare-and-swap: the role, its parent chain or its
	// children changed between read and write. Reading again and retrying is safe.
	ErrChanged = fault.Conflict("Role was changed by another request; retry").WithCode(fault.CodeRaceLost)
)
