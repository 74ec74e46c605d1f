package client

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
)

// APIError is an error answer of the API (the Error envelope): the status,
// the machine code (ErrorCode's values), the human message and, for 400
// validation_failed, the messages per field (JSON path of the bad field).
// Refusals say what to do next in their details: Required and AnyOf name the
// permission or key scope a 403 lacks, Hint the next step in words.
type APIError struct {
	Status      int
	Code        string
	Message     string
	FieldErrors map[string][]string
	RequestID   string
	// RetryAfter is the seconds to wait on 429.
	RetryAfter int
	// EnrollURL is where to enrol a second factor: the envelope's on 428
	// (Force MFA), details.enrollUrl on 403 MFA_REQUIRED.
	EnrollURL string
	// Required is the permission or key scope a 403 names (details.required);
	// AnyOf every one that would do when the route takes several.
	Required string
	AnyOf    []string
	// Hint is details.hint: what to do next (e.g. sign in again after
	// enrolling TOTP, wait for the next TOTP code, use X-API-Key).
	Hint string
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d %s: %s", e.Status, e.Code, e.Message)
	fields := make([]string, 0, len(e.FieldErrors))
	for f := range e.FieldErrors {
		fields = append(fields, f)
	}
	sort.Strings(fields)
	for _, f := range fields {
		fmt.Fprintf(&b, "; %s: %s", f, strings.Join(e.FieldErrors[f], ", "))
	}
	return b.String()
}

// Answer is what every generated XxxWithResponse result offers.
type Answer interface {
	StatusCode() int
	GetBody() []byte
}

// OK passes a generated result on when its status is 2xx and turns any other
// answer into *APIError, so that callers test one error:
//
//	r, err := client.OK(c.ListApiKeysWithResponse(ctx, &client.ListApiKeysParams{}))
func OK[R Answer](r R, err error) (R, error) {
	if err != nil {
		return r, err
	}
	if s := r.StatusCode(); s < 200 || s > 299 {
		return r, decodeError(s, r.GetBody())
	}
	return r, nil
}

func decodeError(status int, body []byte) *APIError {
	var env struct {
		Error      string          `json:"error"`
		Code       string          `json:"code"`
		RequestID  string          `json:"requestId"`
		RetryAfter int             `json:"retryAfter"`
		EnrollURL  string          `json:"enrollUrl"`
		Details    json.RawMessage `json:"details"`
	}
	e := &APIError{Status: status}
	if json.Unmarshal(body, &env) != nil || env.Error == "" {
		// Not the envelope (a proxy's page): the status text stands in.
		e.Message = http.StatusText(status)
		return e
	}
	e.Code, e.Message, e.RequestID, e.RetryAfter, e.EnrollURL = env.Code, env.Error, env.RequestID, env.RetryAfter, env.EnrollURL
	var d struct {
		FieldErrors map[string][]string `json:"fieldErrors"`
		Required    string              `json:"required"`
		AnyOf       []string            `json:"anyOf"`
		EnrollURL   string              `json:"enrollUrl"`
		Hint        string              `json:"hint"`
	}
	// details is an object where it says what to do; a few refusals carry
	// another JSON value there (a passkey ceremony's reason string), no hint.
	if json.Unmarshal(env.Details, &d) != nil {
		return e
	}
	e.FieldErrors, e.Required, e.AnyOf, e.Hint = d.FieldErrors, d.Required, d.AnyOf, d.Hint
	if e.EnrollURL == "" {
		e.EnrollURL = d.EnrollURL
	}
	return e
}
