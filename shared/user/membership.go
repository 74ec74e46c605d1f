package user

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
)

// # Membership states
//
// A membership is a state machine, not a set of flags. Its states:
//
//	invited            invited, not accepted; grants nothing
//	invited_suspended  an invitation its tenant suspended; still not accepted; grants nothing
//	active             accepted by the account; grants its role
//	suspended          accepted, then suspended by its tenant; grants nothing
//	(removed)          no row
//
// A membership written before states existed has none: it is invited while
// its account is invited, active otherwise (Membership.State).
//
// Operations and who performs them: accept is the account's own acceptance
// (POST /auth/accept-invite with the account's password, or its passkey or
// SSO sign-in finishing an invitation); every other operation is a tenant-side
// write under /api/v1/users (suspend and restore are PATCH status disabled and
// active, rename is PATCH name, role is POST /users/:id/role, resend is POST
// /users/resend-invite, remove is DELETE /users/:id or RemoveMembership).
//
// The transition table (Transitions; "-" is a refusal, the state stays):
//
//	from \ op          accept   suspend            restore   rename             role               resend   remove
//	invited            active   invited_suspended  -         invited            invited            invited  (removed)
//	invited_suspended  -        invited_suspended  invited   invited_suspended  invited_suspended  -        (removed)
//	active             -        suspended          active    active             active             -        (removed)
//	suspended          -        suspended          active    suspended          suspended          -        (removed)
//
// So `active` is reached from an unaccepted state only by accept, and no
// sequence of tenant-side writes turns an invitation into an active
// membership: suspending an invitation keeps it unaccepted and restoring it
// returns it to invited. Re-inviting after a removal starts again at invited
// (a new membership id), and the removal revoked the keys the user created
// there (RemoveMembership), so nothing of the old membership comes back.
//
// Until a membership is accepted its tenant sees only what it sent (e-mail,
// the name it gave, role, status) and never the account's own name, MFA state
// or last sign-in; a rename changes only the name it gave. Account-wide
// fields change only through a tenant that holds every accepted membership
// of the account, its own included (holdsAccount; system scope holds every
// account): for an accepted membership, rename renames the account and is
// 403 for any other tenant, and suspend by such a holder disables the
// account itself (its membership keeps its state). The table test
// (membership_test.go) plays every cell by every member of the cast.

// MemberInvitedSuspended is an invitation its tenant suspended (see the table).
const MemberInvitedSuspended MemberStatus = "invited_suspended"

// MemberRemoved is the pseudo-state of a membership without a row.
const MemberRemoved MemberStatus = "removed"

// Op is an operation of the transition table.
type Op string

// Operations on a membership.
const (
	OpAccept  Op = "accept"
	OpSuspend Op = "suspend"
	OpRestore Op = "restore"
	OpRename  Op = "rename"
	OpRole    Op = "role"
	OpResend  Op = "resend"
	OpRemove  Op = "remove"
)

// States lists the states of the table, Ops its operations (in table order).
var (
	States = []MemberStatus{MemberInvited, MemberInvitedSuspended, MemberActive, MemberSuspended}
	Ops    = []Op{OpAccept, OpSuspend, OpRestore, OpRename, OpRole, OpResend, OpRemove}
)

// Transitions is the table of the package doc: the state each operation leads
// to; an operation missing from a state's row is refused.
var Transitions = map[MemberStatus]map[Op]MemberStatus{
	MemberInvited: {OpAccept: MemberActive, OpSuspend: MemberInvitedSuspended, OpRename: MemberInvited,
		OpRole: MemberInvited, OpResend: MemberInvited, OpRemove: MemberRemoved},
	MemberInvitedSuspended: {OpSuspend: MemberInvitedSuspended, OpRestore: MemberInvited,
		OpRename: MemberInvitedSuspended, OpRole: MemberInvitedSuspended, OpRemove: MemberRemoved},
	MemberActive: {OpSuspend: MemberSuspended, OpRestore: MemberActive, OpRename: MemberActive,
		OpRole: MemberActive, OpRemove: MemberRemoved},
	MemberSuspended: {OpSuspend: MemberSuspended, OpRestore: MemberActive, OpRename: MemberSuspended,
		OpRole: MemberSuspended, OpRemove: MemberRemoved},
}

// Next is the state op leads to from from; ok is false when the table refuses it.
func Next(from MemberStatus, op Op) (MemberStatus, bool) {
	to, ok := Transitions[from][op]
	return to, ok
}

// State is m's state in the table (a membership without one counts by its
// account: invited while the account is, active otherwise).
func (m *Membership) State(u *User) MemberStatus {
	if m.Status == "" {
		if u != nil && u.Status == StatusInvited {
			return MemberInvited
		}
		return MemberActive
	}
	return m.Status
}

// Accepted reports whether the account accepted m (active or suspended).
func (m *Membership) Accepted(u *User) bool {
	st := m.State(u)
	return st == MemberActive || st == MemberSuspended
}

// statusIs is the condition "m's stored status is still what was read".
func statusIs(m *Membership) expression.ConditionBuilder {
	if m.Status == "" {
		return expression.Name("status").AttributeNotExists()
	}
	return expression.Name("status").Equal(expression.Value(m.Status))
}

// versionIs is the condition "m's stored version is still what was read".
func versionIs(m *Membership) expression.ConditionBuilder {
	if m.Version == 0 {
		return expression.Name("version").AttributeNotExists()
	}
	return store.Is("version", m.Version)
}
