// Package fault holds Gale's typed errors. Domain packages return them; the HTTP
// edge (httpapi) maps each Kind to a status code and the error envelope (Error
// in the OpenAPI document, shared/api). Nothing else decides a status code.
package fault

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Kind classifies an error for the edge.
type Kind int

const (
	KindInternal Kind = iota
	KindBadRequest
	KindValidation
	KindUnauthorized
	KindForbidden
	KindNotFound
	KindMethodNotAllowed
	KindConflict
	KindTooLarge
	KindPreconditionRequired
	KindRateLimited
	KindNotImplemented
	KindUnavailable
)

// Stable machine codes: the Error.code enum of the OpenAPI document (a test
// in shared/api holds the two equal).
const (
	CodeValidation            = "validation_failed"
	CodeBadRequest            = "bad_request"
	CodeNotFound              = "not_found"
	CodeConflict              = "conflict"
	CodeForbidden             = "forbidden"
	CodeUnauthorized          = "unauthorized"
	CodeRateLimited           = "rate_limited"
	CodeMFARequired           = "MFA_REQUIRED"
	CodeMFAEnrollmentRequired = "mfa_enrollment_required"
	CodeCredentialSignIn      = "credential_sign_in_required"
	CodeWrongStatus           = "wrong_status"
	CodeRaceLost              = "race_lost"
	CodeNotImplemented        = "not_implemented"
	CodeInternal              = "internal"
	CodeTooLarge              = "payload_too_large"
	CodeMethodNotAllowed      = "method_not_allowed"
	CodeUnavailable           = "unavailable"
)

// Error is a client-facing error. Message is shown verbatim; Details is encoded as is.
type Error struct {
	sentinel bool
	// origin is the error this one was copied from (Wrap, WithCode, WithDetails),
	// so errors.Is(copy, original) holds for package-level errors.
	origin  *Error
	Kind    Kind
	Code    string
	Message string
	Details any
	// RetryAfter, in seconds, for rate limits.
	RetryAfter int
	// Extra fields merged into the body (e.g. enrollUrl of the 428 answer).
	Extra map[string]any
	// Cause is kept for logs and errors.Is; never shown to the client.
	Cause error
}

func (e *Error) Error() string {
	if e.Cause != nil {
		return e.Message + ": " + e.Cause.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Cause }

// Is lets errors.Is(err, fault.ErrNotFound) match any error of the same kind, and
// a copy (Wrap, WithCode, WithDetails) match the error it was made from.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t != nil && (t == e.origin || (t.sentinel && t.Kind == e.Kind))
}

// Sentinels for errors.Is by kind.
var (
	ErrNotFound     = &Error{Kind: KindNotFound, Code: CodeNotFound, Message: "Not found", sentinel: true}
	ErrConflict     = &Error{Kind: KindConflict, Code: CodeConflict, Message: "Conflict", sentinel: true}
	ErrForbidden    = &Error{Kind: KindForbidden, Code: CodeForbidden, Message: "Forbidden", sentinel: true}
	ErrUnauthorized = &Error{Kind: KindUnauthorized, Code: CodeUnauthorized, Message: "Unauthorized", sentinel: true}
	ErrValidation   = &Error{Kind: KindValidation, Code: CodeValidation, Message: "Validation failed", sentinel: true}
	ErrBadRequest   = &Error{Kind: KindBadRequest, Code: CodeBadRequest, Message: "Bad request", sentinel: true}
	ErrRateLimited  = &Error{Kind: KindRateLimited, Code: CodeRateLimited, Message: "Too many requests", sentinel: true}
)

// New builds an error of kind with a verbatim message and the kind's default code.
func New(kind Kind, msg string) *Error {
	return &Error{Kind: kind, Code: defaultCode(kind), Message: msg}
}

// NotFound is 404 with message.
func NotFound(msg string) *Error { return New(KindNotFound, msg) }

// Conflict is 409 with message.
func Conflict(msg string) *Error { return New(KindConflict, msg) }

// Forbidden is 403 with message.
func Forbidden(msg string) *Error { return New(KindForbidden, msg) }

// Unauthorized is 401 with message.
func Unauthorized(msg string) *Error { return New(KindUnauthorized, msg) }

// BadRequest is 400 with message.
func BadRequest(msg string) *Error { return New(KindBadRequest, msg) }

// RateLimited is 429 with retryAfter seconds.
func RateLimited(msg string, retryAfter int) *Error {
	if retryAfter < 1 {
		retryAfter = 1
	}
	e := New(KindRateLimited, msg)
	e.RetryAfter = retryAfter
	return e
}

// Internal wraps cause as a 500; the cause is logged, never shown.
func Internal(cause error) *Error {
	return &Error{Kind: KindInternal, Code: CodeInternal, Message: "Internal Server Error", Cause: cause}
}

// Unavailable is 503 `Service unavailable`: a dependency is down, stalled or
// throttling. The client may retry after retryAfter seconds; cause is logged.
func Unavailable(cause error, retryAfter int) *Error {
	if retryAfter < 1 {
		retryAfter = 1
	}
	e := New(KindUnavailable, "Service unavailable")
	e.RetryAfter, e.Cause = retryAfter, cause
	return e
}

// NotImplemented is 501 for route groups whose feature is not built yet.
func NotImplemented() *Error { return New(KindNotImplemented, "Not implemented") }

// WithCode returns a copy with another machine code.
func (e *Error) WithCode(code string) *Error { c := e.copy(); c.Code = code; return c }

// WithDetails returns a copy with details.
func (e *Error) WithDetails(d any) *Error { c := e.copy(); c.Details = d; return c }

// Wrap returns a copy carrying cause for logs and errors.Is.
func (e *Error) Wrap(cause error) *Error { c := e.copy(); c.Cause = cause; return c }

func (e *Error) copy() *Error {
	c := *e
	if e.origin == nil {
		c.origin = e
	}
	return &c
}

func defaultCode(k Kind) string {
	switch k {
	case KindBadRequest:
		return CodeBadRequest
	case KindValidation:
		return CodeValidation
	case KindUnauthorized:
		return CodeUnauthorized
	case KindForbidden:
		return CodeForbidden
	case KindNotFound:
		return CodeNotFound
	case KindMethodNotAllowed:
		return CodeMethodNotAllowed
	case KindConflict:
		return CodeConflict
	case KindTooLarge:
		return CodeTooLarge
	case KindPreconditionRequired:
		return CodeMFAEnrollmentRequired
	case KindRateLimited:
		return CodeRateLimited
	case KindNotImplemented:
		return CodeNotImplemented
	case KindUnavailable:
		return CodeUnavailable
	}
	return CodeInternal
}

// As returns err as *Error when it is one (or wraps one).
func As(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	return nil, false
}

// Fields collects validation messages by JSON path; its Err is nil when empty.
type Fields map[string][]string

// Add records msg for path.
func (f Fields) Add(path, msg string) { f[path] = append(f[path], msg) }

// Addf records a formatted message for path.
func (f Fields) Addf(path, format string, args ...any) { f.Add(path, fmt.Sprintf(format, args...)) }

// Merge adds other's messages under prefix (e.g. "conditions.0").
func (f Fields) Merge(prefix string, other Fields) {
	for k, v := range other {
		p := k
		if prefix != "" {
			p = prefix + "." + k
		}
		f[p] = append(f[p], v...)
	}
}

// Err is the 400 `Validation failed` error, or nil when no field failed.
func (f Fields) Err() error {
	if len(f) == 0 {
		return nil
	}
	return &Error{Kind: KindValidation, Code: CodeValidation, Message: "Validation failed",
		Details: map[string]any{"fieldErrors": map[string][]string(f)}}
}

// String lists the failing paths, for logs and test messages.
func (f Fields) String() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(keys, ",")
}

// Invalid is a validation error for a single field.
func Invalid(path, msg string) error {
	f := Fields{}
	f.Add(path, msg)
	return f.Err()
}
