package store

import "github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"

// Expression helpers. Domain store.go files build conditions and updates with
// github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression and hand the builders
// to these constructors; no domain code spells an expression string.

// Change updates the item at pk/sk with upd (expression.Set, Add, Remove...).
func Change(pk, sk string, upd expression.UpdateBuilder) *Write {
	return &Write{key: Key(pk, sk), upd: &upd}
}

// Set updates one attribute of the item at pk/sk.
func Set(pk, sk, attr string, v any) *Write {
	return Change(pk, sk, expression.Set(expression.Name(attr), expression.Value(v)))
}

// Assert only checks cond on the item at pk/sk (transactions only).
func Assert(pk, sk string, cond expression.ConditionBuilder) *Write {
	return &Write{key: Key(pk, sk), check: true, when: &cond}
}

// When sets the write's condition from a builder.
func (w *Write) When(cond expression.ConditionBuilder) *Write { w.when = &cond; return w }

// Present is the condition "an item has this key".
func Present() expression.ConditionBuilder {
	return expression.AttributeExists(expression.Name("PK"))
}

// Absent is the condition "no item has this key".
func Absent() expression.ConditionBuilder {
	return expression.AttributeNotExists(expression.Name("PK"))
}

// Is is the condition attr = v.
func Is(attr string, v any) expression.ConditionBuilder {
	return expression.Name(attr).Equal(expression.Value(v))
}
