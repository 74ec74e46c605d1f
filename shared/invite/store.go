package invite

import (
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// activateWrite moves the invited user u to active with u's name, password
// hash and times, only while the profile is still invited (compare-and-swap on
// status), and bumps its version.
func activateWrite(u *user.User) *store.Write {
	pk := user.ProfileKey(u.ID)
	upd := expression.Set(expression.Name("status"), expression.Value(user.StatusActive)).
		Set(expression.Name("name"), expression.Value(u.Name)).
		Set(expression.Name("passwordHash"), expression.Value(u.PasswordHash)).
		Set(expression.Name("passwordChangedAt"), expression.Value(u.PasswordChangedAt)).
		Set(expression.Name("updatedAt"), expression.Value(u.UpdatedAt)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(pk.PK, pk.SK, upd).When(store.Is("status", user.StatusInvited)).Exists()
}

// firstPasswordWrite gives active account u its first password (u's hash and
// times) only while it still has none (compare-and-swap: a password set
// meanwhile is never overwritten), and bumps its version.
func firstPasswordWrite(u *user.User) *store.Write {
	pk := user.ProfileKey(u.ID)
	upd := expression.Set(expression.Name("passwordHash"), expression.Value(u.PasswordHash)).
		Set(expression.Name("passwordChangedAt"), expression.Value(u.PasswordChangedAt)).
		Set(expression.Name("updatedAt"), expression.Value(u.UpdatedAt)).
		Add(expression.Name("version"), expression.Value(1))
	return store.Change(pk.PK, pk.SK, upd).
		When(store.Is("status", user.StatusActive).And(expression.Name("passwordHash").AttributeNotExists())).Exists()
}

// acceptWrite turns the invited membership m active (and drops the name the
// inviter gave), only while it is the same membership still awaiting
// acceptance (compare-and-swap on id and state: an invitation suspended
// meanwhile is not accepted; the transition table of shared/user).
func acceptWrite(m *user.Membership) *store.Write {
	upd := expression.Set(expression.Name("status"), expression.Value(user.MemberActive)).
		Remove(expression.Name("invitedName"))
	invited := store.Is("status", string(user.MemberInvited)).Or(expression.Name("status").AttributeNotExists())
	return store.Change(m.PK, m.SK, upd).When(store.Is("id", m.ID).And(invited))
}
