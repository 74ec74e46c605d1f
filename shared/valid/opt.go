package valid

import (
	"encoding/json"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
)

// Opt is a PATCH body field that may be omitted (Set false), null (Value nil)
// or a value. A value of the wrong type is kept as Bad instead of failing the
// whole decode, so the service reports it under the field's own name beside
// the body's other problems.
type Opt[T any] struct {
	Set   bool
	Value *T
	Bad   bool
}

// UnmarshalJSON records presence and the value.
func (o *Opt[T]) UnmarshalJSON(b []byte) error {
	o.Set = true
	if string(b) == "null" {
		return nil
	}
	var v T
	if err := json.Unmarshal(b, &v); err != nil {
		o.Bad = true
		return nil
	}
	o.Value = &v
	return nil
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

// Required adds "is required" at path when v is absent, and returns v
// trimmed.
func Required(f fault.Fields, path string, v *string) string {
	if v == nil {
		f.Add(path, "is required")
		return ""
	}
	return strings.TrimSpace(*v)
}
