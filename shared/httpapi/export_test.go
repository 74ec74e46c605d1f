package httpapi

import "reflect"

// CheckShape exposes the one-pass checker to the cost tests.
func CheckShape(body []byte, v any) error { return checkShape(body, reflect.TypeOf(v)) }
