package httpapi

import (
	"bytes"
	"context"
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

// limitKey carries the body cap of the route serving a request (Route.MaxBody;
// the router sets it).
type limitKey struct{}

// routeLimit is the body cap of the route serving ctx's request (0 outside one).
func routeLimit(ctx context.Context) int64 {
	n, _ := ctx.Value(limitKey{}).(int64)
	return n
}

// Decode reads a JSON object body into v strictly: unknown fields, wrong types,
// trailing data and bodies over MaxBody (or the route's own limit) are client
// errors naming the field.
func Decode(r *http.Request, v any) error { return DecodeLimit(r, v, MaxBody) }

// DecodeLimit is Decode with a body limit in bytes (413 beyond it; the route's
// Route.MaxBody, when smaller, wins). A body must be sent as application/json:
// a form or text body is refused rather than guessed at.
func DecodeLimit(r *http.Request, v any, limit int64) error {
	body, err := ReadJSON(r, limit)
	if err != nil {
		return err
	}
	return DecodeBytes(body, v)
}

// ReadJSON reads a body that must be sent as application/json (a body of
// another media type is refused) through ReadBody's cap: what Decode reads,
// for a handler that also looks at the raw body.
func ReadJSON(r *http.Request, limit int64) ([]byte, error) {
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		if r.ContentLength != 0 {
			return nil, fault.Invalid("Content-Type", "must be application/json")
		}
	}
	return ReadBody(r, limit)
}

// ReadBody reads r's body through a hard cap: limit bytes, or the route's
// Route.MaxBody when that is smaller. A declared Content-Length over the cap is
// refused before a byte is read; a body that turns out longer stops being read
// at the cap. Either is 413 `payload_too_large`.
func ReadBody(r *http.Request, limit int64) ([]byte, error) {
	if rl := routeLimit(r.Context()); rl > 0 && rl < limit {
		limit = rl
	}
	tooLarge := func() error {
		return fault.New(fault.KindTooLarge, "Request body too large").WithDetails(map[string]any{"limitBytes": limit})
	}
	if r.ContentLength > limit {
		return nil, tooLarge()
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	size := int64(512)
	if r.ContentLength > 0 {
		size = r.ContentLength + 1 // the extra byte sees a body longer than declared
	}
	buf := make([]byte, 0, size)
	lr := io.LimitReader(r.Body, limit+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := lr.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return nil, tooLarge()
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				return nil, tooLarge()
			}
			return nil, fault.BadRequest("Could not read request body").Wrap(err)
		}
	}
}

// DecodeBytes strictly decodes a JSON object, in time and memory linear in its
// size: one pass (checkShape) refuses nesting deeper than MaxDepth, duplicate
// keys and fields the target does not have, then encoding/json fills v.
func DecodeBytes(body []byte, v any) error {
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return fault.Invalid("body", "a JSON object is required")
	}
	if trimmed[0] != '{' {
		return fault.Invalid("body", "must be a JSON object")
	}
	shapeErr := checkShape(trimmed, reflect.TypeOf(v))
	if shapeErr != nil && shapeErr != errSyntax {
		return shapeErr
	}
	if err := json.Unmarshal(trimmed, v); err != nil {
		return decodeError(err)
	}
	if shapeErr != nil { // encoding/json accepted what the checker did not: refuse anyway
		return fault.Invalid("body", "invalid JSON")
	}
	return nil
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
	body, err := ReadBody(r, MaxBody)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	var none struct{}
	return DecodeBytes(body, &none)
}
