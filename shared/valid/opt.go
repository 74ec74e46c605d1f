package valid

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
)

// Opt is a PATCH body field that may be omitted (Set false), null (Value nil)
// or a value. A value of the wrong type is kept as Bad instead of failing the
// whole decode, so the service reports it under the field's own name beside
// the body's other problems (Wrong, NotNull). It is the one way a PATCH body
// tells absent from null.
type Opt[T any] struct {
	Set   bool
	Value *T
	Bad   bool
	// at is the field inside the value that had the wrong type (retryPolicy's
	// "maxRetries"), want what it takes; at is empty when the value itself
	// had the wrong type.
	at, want string
}

// UnmarshalJSON records presence and the value.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	*o = Opt[T]{Set: true}
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		o.Bad = true
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" && te.Type != nil {
			o.at, o.want = te.Field, kindWords(te.Type.Kind())
		}
		return nil
	}
	o.Value = &v
	return nil
}

// JSONShape is T: httpapi's one-pass body check reads an Opt's value as a T,
// so a field inside it that T does not have is refused by its dotted path
// (retryPolicy.maxRetriez), while a value of the wrong type is left to Opt.
func (Opt[T]) JSONShape() reflect.Type { return reflect.TypeFor[T]() }

// Wrong reports whether o was sent with the wrong type, adding the error: at
// path, "must be " + what (what the field takes: "a string", "an object or
// null"), or, when only a field inside the value was wrong, at that field's
// dotted path ("retryPolicy.maxRetries": "must be an integer").
func (o Opt[T]) Wrong(f fault.Fields, path, what string) bool {
	switch {
	case !o.Bad:
		return false
	case o.at != "":
		f.Add(path+"."+o.at, "must be "+o.want)
	default:
		f.Add(path, "must be "+what)
	}
	return true
}

// NotNull is the value of a field that may be omitted but not cleared: nil
// when absent; null adds "must not be null" and a wrong type "must be " + what
// at path (both answer nil).
func (o Opt[T]) NotNull(f fault.Fields, path, what string) *T {
	if o.Wrong(f, path, what) {
		return nil
	}
	if o.Set && o.Value == nil {
		f.Add(path, "must not be null")
	}
	return o.Value
}

// PatchName is the "name" a PATCH body sent, trimmed and checked (Name: 1 to
// max characters); nil when it was absent, null (refused) or not a string.
func PatchName(f fault.Fields, o Opt[string], max int) *string {
	n := o.NotNull(f, "name", "a string")
	if n == nil {
		return nil
	}
	name := strings.TrimSpace(*n)
	Name(f, "name", name, max)
	return &name
}

// OrZero is the value sent, or T's zero value when the field was null or
// absent: for a field where null and the zero value mean the same ("" removes).
func (o Opt[T]) OrZero() T {
	var zero T
	if o.Value == nil {
		return zero
	}
	return *o.Value
}

// kindWords says what a JSON value filling a Go kind must be.
func kindWords(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	}
	return "of the documented type"
}

// Required adds "is required" at path when v is absent, and returns v
// trimmed.
func Required(f fault.Fields, path string, v *string) string {
	if v == nil {
		f.Add(path, "is required")
		return ""
	}
	return strings.TrimSpace(*v)
}
