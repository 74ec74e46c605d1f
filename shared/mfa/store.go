package mfa

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
)

// change builds one compare-and-swap update of a user's profile.
type change struct {
	upd  expression.UpdateBuilder
	cond expression.ConditionBuilder
}

// change starts an update of u that bumps its version, under the conditions
// that nobody changed it since it was read and that it is still active.
func (s *Service) change(u *user.User) *change {
	c := &change{upd: expression.Set(expression.Name("updatedAt"), expression.Value(clock.Format(s.Clock.Now()))).
		Add(expression.Name("version"), expression.Value(1))}
	same := store.Is("version", u.Version)
	if u.Version == 0 {
		same = expression.Name("version").AttributeNotExists().Or(same)
	}
	c.cond = same.And(store.Is("status", user.StatusActive))
	return c
}

// set assigns attr.
func (c *change) set(attr string, v any) *change {
	c.upd = c.upd.Set(expression.Name(attr), expression.Value(v))
	return c
}

// remove deletes attrs.
func (c *change) remove(attrs ...string) *change {
	for _, a := range attrs {
		c.upd = c.upd.Remove(expression.Name(a))
	}
	return c
}

// when adds a condition.
func (c *change) when(cond expression.ConditionBuilder) *change {
	c.cond = c.cond.And(cond)
	return c
}

// guard adds the condition that the proof's code is still unspent (TOTP step,
// recovery code kept on the profile); nothing for other proofs.
func (c *change) guard(p proof) *change {
	switch p.kind {
	case methodTOTP:
		return c.when(expression.Name("mfaLastStep").AttributeNotExists().Or(expression.Name("mfaLastStep").LessThan(expression.Value(p.step))))
	case "recovery":
		return c.when(expression.Name(recoverySlot(p.index)).Equal(expression.Value(p.hash)))
	}
	return c
}

// spend records the proof's code as spent on the profile.
func (c *change) spend(p proof) *change {
	switch p.kind {
	case methodTOTP:
		return c.set("mfaLastStep", p.step)
	case "recovery":
		return c.set(recoverySlot(p.index), usedCode)
	}
	return c
}

// passkeys adds the condition that the user has passkeys (has) or none.
func (c *change) passkeys(has bool) *change {
	if has {
		return c.when(expression.Name("passkeyCount").GreaterThan(expression.Value(0)))
	}
	return c.when(expression.Name("passkeyCount").AttributeNotExists().Or(store.Is("passkeyCount", 0)))
}

func (c *change) write(uid string) *store.Write {
	k := user.ProfileKey(uid)
	return store.Change(k.PK, k.SK, c.upd).When(c.cond)
}

func recoverySlot(i int) string { return fmt.Sprintf("mfaRecoveryCodes[%d]", i) }

// profileChange is the proof's spend in the form signin.CompleteWith merges into
// the sign-in's own profile update.
func (p proof) profileChange() signin.ProfileChange {
	switch p.kind {
	case methodTOTP:
		last := expression.Name("mfaLastStep")
		cond := last.AttributeNotExists().Or(last.LessThan(expression.Value(p.step)))
		return signin.ProfileChange{Cond: &cond, Set: func(u expression.UpdateBuilder) expression.UpdateBuilder {
			return u.Set(last, expression.Value(p.step))
		}}
	case "recovery":
		slot := expression.Name(recoverySlot(p.index))
		cond := slot.Equal(expression.Value(p.hash))
		return signin.ProfileChange{Cond: &cond, Set: func(u expression.UpdateBuilder) expression.UpdateBuilder {
			return u.Set(slot, expression.Value(usedCode))
		}}
	}
	return signin.ProfileChange{}
}

// write spends an SMS code (its own item); nil for the other kinds.
func (p proof) write(uid string) *store.Write {
	if p.kind != methodSMS {
		return nil
	}
	return spendCodeWrite(smsKey(uid), p.hash)
}

// spendCodeWrite deletes the code item at k while it still holds hash.
func spendCodeWrite(k store.KeyRef, hash string) *store.Write {
	return store.Delete(k.PK, k.SK).When(store.Is("codeHash", hash))
}

// spendSetupWrite deletes the pending TOTP setup at k while it is the one read.
func spendSetupWrite(k store.KeyRef, secret string) *store.Write {
	return store.Delete(k.PK, k.SK).When(store.Is("secret", secret))
}
