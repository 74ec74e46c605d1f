package api_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gale-rmm/gale/shared/api"
)

// decisionsCodes is the error code list of docs/decisions.md#error-body, in
// its order, credential_sign_in_required included (issue 30: "Account
// changes need a password or passkey sign-in", docs/decisions.md#sso-sessions).
var decisionsCodes = []string{"validation_failed", "bad_request", "not_found", "method_not_allowed", "conflict",
	"forbidden", "unauthorized", "payload_too_large", "rate_limited", "MFA_REQUIRED", "mfa_enrollment_required",
	"credential_sign_in_required", "wrong_status", "race_lost", "not_implemented", "unavailable", "internal"}

func TestErrorCodeEnumIsTheDecisionsList(t *testing.T) {
	doc := load(t)
	code := doc.Components.Schemas["Error"].Value.Properties["code"].Value
	var got []string
	for _, v := range code.Enum {
		got = append(got, fmt.Sprint(v))
	}
	if !slices.Equal(got, decisionsCodes) {
		t.Errorf("Error.code enum = %v\nwant %v", got, decisionsCodes)
	}
	// Each code has one line of description, and it says what answers it.
	for _, c := range decisionsCodes {
		if n := strings.Count(code.Description, "- `"+c+"`:"); n != 1 {
			t.Errorf("Error.code description has %d entries for %s, want 1", n, c)
		}
	}
	for c, says := range map[string]string{"validation_failed": "malformed path id", "bad_request": "names no field",
		"unavailable": "Retry-After", "mfa_enrollment_required": "428", "internal": "500"} {
		line := code.Description[strings.Index(code.Description, "- `"+c+"`:"):]
		if end := strings.Index(line[2:], "\n- "); end >= 0 {
			line = line[:end+2]
		}
		if !strings.Contains(line, says) {
			t.Errorf("Error.code %s is described as %q; it should say %q", c, line, says)
		}
	}
}

// Every operation a signed-in user calls documents Force MFA's 428, except the
// enrolment routes; every operation that accepts an API key documents its 429
// and 503 with Retry-After and the X-RateLimit-* headers on every answer.
func TestEveryOperationDocumentsTheCommonAnswers(t *testing.T) {
	doc := load(t)
	var users, keys, enrol int
	for p, item := range doc.Paths.Map() {
		for m, op := range item.Operations() {
			name := m + " " + p
			user, key := false, false
			if op.Security != nil {
				for _, req := range *op.Security {
					_, u := req["bearerAuth"]
					_, k := req["apiKeyAuth"]
					user, key = user || u, key || k
				}
			}
			_, has428 := op.Responses.Map()["428"]
			switch {
			case user && api.Enrol(p):
				enrol++
				if has428 {
					t.Errorf("%s is an enrolment route and documents 428", name)
				}
			case user:
				users++
				if !has428 {
					t.Errorf("%s does not document Force MFA's 428", name)
				}
			}
			if !key {
				continue
			}
			keys++
			for _, code := range []string{"429", "503"} {
				r := op.Responses.Map()[code]
				if r == nil || r.Value.Headers["Retry-After"] == nil {
					t.Errorf("%s: %s without Retry-After", name, code)
				}
			}
			for code, r := range op.Responses.Map() {
				for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"} {
					if r.Value.Headers[h] == nil {
						t.Errorf("%s: %s lacks %s", name, code, h)
					}
				}
			}
		}
	}
	if users < 50 || keys < 5 || enrol < 10 {
		t.Errorf("%d user, %d key and %d enrolment operations: the document is not what this test expects", users, keys, enrol)
	}
}

// The assembler keeps what a fragment wrote and adds the rest.
func TestMergeCompletesAFragmentsOperations(t *testing.T) {
	frags, err := api.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	extra, err := api.DecodeFragment("x", []byte(`
paths:
  /api/v1/x:
    get:
      security: [{bearerAuth: []}, {apiKeyAuth: []}]
      responses:
        '200': {description: ok}
        '404': {$ref: '#/components/responses/NotFound'}
        '429': {description: own}
  /api/v1/auth/mfa/x:
    get:
      security: [{bearerAuth: []}]
      responses:
        '200': {description: ok}
  /api/v1/redirect:
    get:
      security: []
      responses:
        '302': {description: to the provider}
        '400': {$ref: '#/components/responses/BadRequest'}
`))
	if err != nil {
		t.Fatal(err)
	}
	merged, err := api.Merge(append(frags, extra))
	if err != nil {
		t.Fatal(err)
	}
	resp := func(p, code string) map[string]any {
		r, _ := merged["paths"].(map[string]any)[p].(map[string]any)["get"].(map[string]any)["responses"].(map[string]any)[code].(map[string]any)
		return r
	}
	if r := resp("/api/v1/x", "428"); r["$ref"] != "#/components/responses/KeyedPreconditionRequired" {
		t.Errorf("428 = %v", r)
	}
	if r := resp("/api/v1/redirect", "default"); r["$ref"] != "#/components/responses/Default" {
		t.Errorf("redirect's default = %v", r)
	}
	if r := resp("/api/v1/x", "default"); r != nil {
		t.Errorf("an operation with a 2xx got a default %v", r)
	}
	if r := resp("/api/v1/auth/mfa/x", "428"); r != nil {
		t.Errorf("enrolment route got 428 %v", r)
	}
	if r := resp("/api/v1/x", "429"); r["description"] != "own" || r["headers"] == nil {
		t.Errorf("own 429 = %v: kept, with the rate-limit headers", r)
	}
	if r := resp("/api/v1/x", "404"); r["$ref"] != "#/components/responses/KeyedNotFound" {
		t.Errorf("404 = %v", r)
	}
	if r := resp("/api/v1/x", "503"); r["$ref"] != "#/components/responses/KeyedUnavailable" {
		t.Errorf("503 = %v", r)
	}
	if _, err := openapi3.NewLoader().LoadFromData(mustJSON(t, merged)); err != nil {
		t.Errorf("completed document does not load: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
