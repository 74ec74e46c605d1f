package httpapi

import (
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gale-rmm/gale/shared/fault"
)

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
	if fe.Kind == fault.KindRateLimited {
		body["retryAfter"] = fe.RetryAfter
		w.Header().Set("Retry-After", strconv.Itoa(fe.RetryAfter))
	}
	WriteJSON(w, Status(fe.Kind), body)
}
