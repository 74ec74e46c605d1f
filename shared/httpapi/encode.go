package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/smithy-go"

	"github.com/gale-rmm/gale/shared/fault"
)

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

// Status maps a fault kind to its HTTP status.
func Status(k fault.Kind) int {
	switch k {
	case fault.KindBadRequest, fault.KindValidation:
		return http.StatusBadRequest
	case fault.KindUnauthorized:
		return http.StatusUnauthorized
	case fault.KindForbidden:
		return http.StatusForbidden
	case fault.KindNotFound:
		return http.StatusNotFound
	case fault.KindMethodNotAllowed:
		return http.StatusMethodNotAllowed
	case fault.KindConflict:
		return http.StatusConflict
	case fault.KindTooLarge:
		return http.StatusRequestEntityTooLarge
	case fault.KindPreconditionRequired:
		return http.StatusPreconditionRequired
	case fault.KindRateLimited:
		return http.StatusTooManyRequests
	case fault.KindNotImplemented:
		return http.StatusNotImplemented
	case fault.KindUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// WriteError is the one error encoder: the Error envelope of the OpenAPI document. Anything not
// a *fault.Error is a 500 whose text is logged with the request id and never sent.
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	reqID := RequestID(r.Context())
	fe, ok := fault.As(err)
	if (!ok || fe.Kind == fault.KindInternal) && DependencyFailed(err) {
		slog.WarnContext(r.Context(), "dependency unavailable", "requestId", reqID, "method", r.Method, "path", r.URL.Path, "err", err)
		fe, ok = fault.Unavailable(err, 1), true
	}
	if !ok || fe.Kind == fault.KindInternal {
		slog.ErrorContext(r.Context(), "internal error", "requestId", reqID, "method", r.Method, "path", r.URL.Path, "err", err)
		fe = fault.Internal(err)
	}
	body := map[string]any{"error": fe.Message, "code": fe.Code, "requestId": reqID}
	if fe.Details != nil {
		body["details"] = fe.Details
	}
	for k, v := range fe.Extra {
		body[k] = v
	}
	switch fe.Kind {
	case fault.KindRateLimited:
		body["retryAfter"] = fe.RetryAfter
		w.Header().Set("Retry-After", strconv.Itoa(fe.RetryAfter))
	case fault.KindUnavailable:
		w.Header().Set("Retry-After", strconv.Itoa(max(fe.RetryAfter, 1)))
	}
	WriteJSON(w, Status(fe.Kind), body)
}

// absentCodes are the AWS error codes of a table, queue or secret that is not
// there (an emulator that lost its state, a stack half deployed): an outage to
// wait out, not a bug, so 503. Throttling and retryable failures are the SDK's
// own checks (aws/retry), not a list of ours.
var absentCodes = map[string]bool{
	"ResourceNotFoundException": true, "TableNotFoundException": true,
	"AWS.SimpleQueueService.NonExistentQueue": true, "QueueDoesNotExist": true,
}

// sdkThrottle and sdkRetryable are the SDK retryer's checks.
var (
	sdkThrottle  = retry.IsErrorThrottles(retry.DefaultThrottles)
	sdkRetryable = retry.IsErrorRetryables(retry.DefaultRetryables)
)

// DependencyFailed reports whether err is a dependency's failure rather than a
// bug of ours: the request's deadline passed, a connection was refused, reset
// or timed out, the SDK gave up retrying, or AWS answered a throttling error,
// a 5xx, a missing table, queue or secret, or a cancelled transaction whose reasons are throttling. The encoder
// answers these with 503 `Service unavailable` and Retry-After.
func DependencyFailed(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return true
	}
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var quota ratelimit.QuotaExceededError
	if errors.As(err, &quota) {
		return true
	}
	var api smithy.APIError
	if errors.As(err, &api) {
		code := api.ErrorCode()
		if absentCodes[code] || api.ErrorFault() == smithy.FaultServer {
			return true
		}
		if code == "TransactionCanceledException" {
			msg := api.ErrorMessage()
			return strings.Contains(msg, "ThrottlingError") || strings.Contains(msg, "ProvisionedThroughputExceeded")
		}
	}
	if sdkThrottle.IsErrorThrottle(err) == aws.TrueTernary || sdkRetryable.IsErrorRetryable(err) == aws.TrueTernary {
		return true
	}
	var status interface{ HTTPStatusCode() int }
	if errors.As(err, &status) && status.HTTPStatusCode() >= 500 {
		return true
	}
	return false
}
