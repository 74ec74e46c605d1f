package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"reflect"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
)

// MaxBody is the default request body limit (1 MiB); agent ingest uses 32 KB.
const MaxBody = 1 << 20

// WriteJSON encodes v with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	if v == nil || status == http.StatusNoContent {
		return
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// Decode reads a JSON object body into v strictly: unknown fields, wrong types,
// trailing data and bodies over MaxBody are client errors naming the field.
func Decode(r *http.Request, v any) error { return DecodeLimit(r, v, MaxBody) }

// DecodeLimit is Decode with a body limit in bytes (413 beyond it). A body
// must be sent as application/json: a form or text body is refused rather than
// guessed at.
func DecodeLimit(r *http.Request, v any, limit int64) error {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		if r.ContentLength != 0 {
			return fault.Invalid("Content-Type", "must be application/json")
		}
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return fault.BadRequest("Could not read request body").Wrap(err)
	}
	if int64(len(body)) > limit {
		return fault.New(fault.KindTooLarge, "Request body too large").WithDetails(map[string]any{"limitBytes": limit})
	}
	return DecodeBytes(body, v)
}

// DecodeBytes strictly decodes a JSON object.
func DecodeBytes(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return fault.Invalid("body", "a JSON object is required")
	}
	if trimmed[0] != '{' {
		return fault.Invalid("body", "must be a JSON object")
	}
	if path, dup := duplicateKey(trimmed); dup {
		return fault.Invalid(path, "appears more than once")
	}
	dec := json.NewDecoder(bytes.NewReader(trimmed))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			// encoding/json names only the key; the walk names its whole path.
			if ferr := exactFields(trimmed, reflect.TypeOf(v), ""); ferr != nil {
				return ferr
			}
		}
		return decodeError(err)
	}
	// dec.More misses a stray ']' or '}'; only a clean end of input will do.
	if _, err := dec.Token(); err != io.EOF {
		return fault.Invalid("body", "unexpected data after the JSON object")
	}
	return exactFields(trimmed, reflect.TypeOf(v), "")
}

func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fault.Invalid("body", fmt.Sprintf("malformed JSON at offset %d", syn.Offset))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "body"
		}
		return fault.Invalid(field, "must be "+jsonType(typ.Type.Kind().String()))
	case errors.Is(err, io.ErrUnexpectedEOF):
		return fault.Invalid("body", "truncated JSON")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return fault.Invalid(name, "unknown field")
	}
	// Custom UnmarshalJSON methods return *fault.Error with their own field.
	if fe, ok := fault.As(err); ok {
		return fe
	}
	return fault.Invalid("body", "invalid JSON")
}

func jsonType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "an integer"
	case "float32", "float64":
		return "a number"
	case "ptr":
		return "of the documented type"
	}
	return "of the documented type"
}

// EmptyBody accepts the absent body of a route that takes none, or an empty
// object; any field in it is refused by name, as Decode would.
func EmptyBody(r *http.Request) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, MaxBody+1))
	if err != nil {
		return fault.BadRequest("Could not read request body").Wrap(err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return DecodeBytes(body, &none)
}
