package signin

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// Writes of the sign-in service to the user's profile and reset rows. Each
// names the condition that makes it compare-and-swap.

// active is "the account is active".
func active() expression.ConditionBuilder { return store.Is("status", string(user.StatusActive)) }

// passwordWrite sets a new password hash and, in the same update, ends every
// session and token of the user (user.RevokeSessionsWrite's tokensValidAfter: one
// transaction cannot write the profile twice). It needs the user active, and
// also cond when given.
func passwordWrite(userID, hash string, now time.Time, cond *expression.ConditionBuilder) *store.Write {
	pk := user.ProfileKey(userID)
	at := clock.Format(now)
	upd := expression.Set(expression.Name("passwordHash"), expression.Value(hash)).
		Set(expression.Name("passwordChangedAt"), expression.Value(at)).
		Set(expression.Name("updatedAt"), expression.Value(at)).
		Set(expression.Name("tokensValidAfter"), expression.Value(clock.Stamp(now))).
		Add(expression.Name("version"), expression.Value(1))
	c := active()
	if cond != nil {
		c = c.And(*cond)
	}
	return store.Change(pk.PK, pk.SK, upd).When(c).Exists()
}

// spendResetWrite deletes the reset row at k if it still holds tokenHash:
// of two resets with one token only the first finds it.
func spendResetWrite(k store.KeyRef, tokenHash string) *store.Write {
	return store.Delete(k.PK, k.SK).When(store.Is("tokenHash", tokenHash))
}

// signedInWrite stamps the sign-in on an active profile, merged with pc.
func signedInWrite(userID, now string, pc ProfileChange) *store.Write {
	pk := user.ProfileKey(userID)
	upd := expression.Set(expression.Name("lastLoginAt"), expression.Value(now))
	if pc.Set != nil {
		upd = pc.Set(upd)
	}
	c := active()
	if pc.Cond != nil {
		c = c.And(*pc.Cond)
	}
	return store.Change(pk.PK, pk.SK, upd).When(c)
}
