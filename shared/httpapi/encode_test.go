package httpapi_test

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

func quietLog() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

func decodeBody(t *testing.T, rec *httptest.ResponseRecorder) map[string]any {
	t.Helper()
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("Content-Type = %q, want JSON", ct)
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("body %q is not JSON: %v", rec.Body.String(), err)
	}
	return body
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// serveError runs WriteError for err behind the edge middleware.
func serveError(err error) *httptest.ResponseRecorder {
	h := httpapi.Edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteError(w, r, err)
	}), quietLog())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	return rec
}

func TestWriteErrorHidesInternalErrors(t *testing.T) {
	for _, err := range []error{
		errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user gale"),
		fault.Internal(errors.New("dial tcp 10.0.0.7:5432: password authentication failed for user gale")),
		&fault.Error{Kind: fault.KindInternal, Code: "db", Message: "password authentication failed"},
	} {
		rec := serveError(err)
		if rec.Code != http.StatusInternalServerError {
			t.Fatalf("status %d, want 500", rec.Code)
		}
		if strings.Contains(rec.Body.String(), "password") || strings.Contains(rec.Body.String(), "10.0.0.7") {
			t.Fatalf("500 body leaks the cause: %s", rec.Body.String())
		}
		body := decodeBody(t, rec)
		if got := keys(body); strings.Join(got, ",") != "code,error,requestId" {
			t.Fatalf("500 body keys = %v, want exactly code, error, requestId: %s", got, rec.Body.String())
		}
		if body["error"] != "Internal Server Error" || body["code"] != "internal" {
			t.Fatalf("500 body = %s", rec.Body.String())
		}
		if id, _ := body["requestId"].(string); id == "" || id != rec.Header().Get("X-Request-Id") {
			t.Fatalf("requestId %q does not match X-Request-Id %q", body["requestId"], rec.Header().Get("X-Request-Id"))
		}
	}
}

func TestWriteErrorRateLimit(t *testing.T) {
	rec := serveError(fault.RateLimited("Rate limit exceeded", 7))
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("status %d, want 429", rec.Code)
	}
	if got := rec.Header().Get("Retry-After"); got != "7" {
		t.Fatalf("Retry-After = %q, want 7", got)
	}
	body := decodeBody(t, rec)
	if body["retryAfter"] != float64(7) || body["error"] != "Rate limit exceeded" || body["code"] != "rate_limited" {
		t.Fatalf("429 body = %s", rec.Body.String())
	}
	// retryAfter is at least one second.
	if rec := serveError(fault.RateLimited("Rate limit exceeded", 0)); rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("Retry-After for 0 = %q, want 1", rec.Header().Get("Retry-After"))
	}
}

func TestWriteErrorEnvelope(t *testing.T) {
	cause := errors.New("store: ORG#1/USER#2: condition failed")
	rec := serveError(fault.Conflict("Email already in use").Wrap(cause))
	body := decodeBody(t, rec)
	if rec.Code != http.StatusConflict || body["error"] != "Email already in use" || body["code"] != "conflict" {
		t.Fatalf("409 answer %d %s", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "condition failed") {
		t.Fatalf("the cause leaked: %s", rec.Body.String())
	}
	if _, ok := body["details"]; ok {
		t.Fatalf("details present without details: %s", rec.Body.String())
	}

	e := fault.New(fault.KindPreconditionRequired, "MFA enrollment required")
	e.Extra = map[string]any{"enrollUrl": "/api/v1/auth/mfa/setup"}
	rec = serveError(e.WithDetails(map[string]any{"reason": "force_mfa"}))
	body = decodeBody(t, rec)
	if rec.Code != http.StatusPreconditionRequired || body["enrollUrl"] != "/api/v1/auth/mfa/setup" || body["code"] != "mfa_enrollment_required" {
		t.Fatalf("428 answer %d %s", rec.Code, rec.Body.String())
	}
	if d, _ := body["details"].(map[string]any); d["reason"] != "force_mfa" {
		t.Fatalf("details = %v", body["details"])
	}

	rec = serveError(fault.Forbidden("MFA required").WithCode(fault.CodeMFARequired))
	if body = decodeBody(t, rec); rec.Code != http.StatusForbidden || body["code"] != "MFA_REQUIRED" {
		t.Fatalf("403 answer %d %s", rec.Code, rec.Body.String())
	}
}

func TestStatusOfEveryKind(t *testing.T) {
	want := map[fault.Kind]int{
		fault.KindInternal:             500,
		fault.KindBadRequest:           400,
		fault.KindValidation:           400,
		fault.KindUnauthorized:         401,
		fault.KindForbidden:            403,
		fault.KindNotFound:             404,
		fault.KindMethodNotAllowed:     405,
		fault.KindConflict:             409,
		fault.KindTooLarge:             413,
		fault.KindPreconditionRequired: 428,
		fault.KindRateLimited:          429,
		fault.KindNotImplemented:       501,
		fault.KindUnavailable:          503,
	}
	for k, code := range want {
		if got := httpapi.Status(k); got != code {
			t.Errorf("Status(%d) = %d, want %d", k, got, code)
		}
		// A wrapped fault keeps its status.
		rec := serveError(errorsJoin(fault.New(k, "m")))
		if rec.Code != code {
			t.Errorf("wrapped kind %d answered %d, want %d", k, rec.Code, code)
		}
	}
}

func errorsJoin(err error) error { return errors.Join(errors.New("context"), err) }

func TestFaultIsMatchesCopies(t *testing.T) {
	errTaken := fault.Conflict("Name already taken")
	for _, err := range []error{errTaken.Wrap(errors.New("x")), errTaken.WithDetails(1), errTaken.WithCode("taken").Wrap(nil)} {
		if !errors.Is(err, errTaken) {
			t.Errorf("errors.Is(copy, original) = false for %v", err)
		}
		if !errors.Is(err, fault.ErrConflict) {
			t.Errorf("errors.Is(copy, fault.ErrConflict) = false for %v", err)
		}
		if errors.Is(err, fault.ErrNotFound) || errors.Is(err, fault.Conflict("Name already taken")) {
			t.Errorf("%v matches an unrelated error", err)
		}
	}
}

func TestRequestID(t *testing.T) {
	var seen string
	h := httpapi.Edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = httpapi.RequestID(r.Context())
	}), quietLog())
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set("X-Request-Id", "req-0123456789abcdef")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if seen != "req-0123456789abcdef" || rec.Header().Get("X-Request-Id") != seen {
		t.Fatalf("request id %q / header %q, want the caller's valid id", seen, rec.Header().Get("X-Request-Id"))
	}
	req.Header.Set("X-Request-Id", "<script>")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if seen == "<script>" || len(seen) != 32 || rec.Header().Get("X-Request-Id") != seen {
		t.Fatalf("invalid caller id kept: %q", seen)
	}
	if httpapi.RequestID(req.Context()) != "" {
		t.Fatal("RequestID outside a request is not empty")
	}
}

func TestEdgeRecoversPanics(t *testing.T) {
	h := httpapi.Edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		panic("nil map write in secret-handling code")
	}), quietLog())
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/x", nil))
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("status %d, want 500", rec.Code)
	}
	if strings.Contains(rec.Body.String(), "secret") {
		t.Fatalf("panic text leaked: %s", rec.Body.String())
	}
	if body := decodeBody(t, rec); body["code"] != "internal" {
		t.Fatalf("body %s", rec.Body.String())
	}
}

func TestEdgeAccessLog(t *testing.T) {
	var buf strings.Builder
	log := slog.New(slog.NewJSONHandler(&buf, nil))
	h := httpapi.Edge(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.SetCaller(r.Context(), "user-1", "ORG#o-1")
		w.WriteHeader(http.StatusCreated)
	}), log)
	req := httptest.NewRequest(http.MethodPost, "/api/v1/things?secret=x", nil)
	req.RemoteAddr = "198.51.100.4:5555"
	h.ServeHTTP(httptest.NewRecorder(), req)
	var entry map[string]any
	if err := json.Unmarshal([]byte(buf.String()), &entry); err != nil {
		t.Fatalf("access log %q is not one JSON line: %v", buf.String(), err)
	}
	for k, v := range map[string]any{"msg": "request", "method": "POST", "path": "/api/v1/things", "status": float64(201),
		"principal": "user-1", "tenant": "ORG#o-1", "ip": "198.51.100.4", "dbCalls": float64(0)} {
		if entry[k] != v {
			t.Errorf("access log %s = %v, want %v", k, entry[k], v)
		}
	}
	if strings.Contains(buf.String(), "secret=x") {
		t.Errorf("access log holds the query string: %s", buf.String())
	}
}
