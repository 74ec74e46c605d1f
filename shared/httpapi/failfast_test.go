package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	"github.com/aws/smithy-go"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

func TestDependencyFailuresAre503(t *testing.T) {
	t.Parallel()
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"deadline", fmt.Errorf("store: get: %w", context.DeadlineExceeded), true},
		{"connection refused", fmt.Errorf("store: %w", refused), true},
		{"connection reset", fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		{"throttled", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "slow down"}, true},
		{"throughput", &smithy.GenericAPIError{Code: "ProvisionedThroughputExceededException"}, true},
		{"aws 5xx", &smithy.GenericAPIError{Code: "Whatever", Fault: smithy.FaultServer}, true},
		{"transaction throttled", &smithy.GenericAPIError{Code: "TransactionCanceledException",
			Message: "Transaction cancelled, please refer cancellation reasons for specific reasons [None, ThrottlingError]"}, true},
		{"transaction condition", &smithy.GenericAPIError{Code: "TransactionCanceledException",
			Message: "Transaction cancelled [ConditionalCheckFailed, None]"}, false},
		{"validation", &smithy.GenericAPIError{Code: "ValidationException", Fault: smithy.FaultClient}, false},
		{"bug", errors.New("nil map"), false},
		// Wrapped as an internal error by a service: still the dependency's fault.
		{"wrapped internal", fault.Internal(fmt.Errorf("x: %w", refused)), true},
	}
	for _, c := range cases {
		if got := httpapi.DependencyFailed(c.err); got != c.want {
			t.Errorf("%s: DependencyFailed = %v, want %v", c.name, got, c.want)
		}
		if !c.want {
			continue
		}
		rec := httptest.NewRecorder()
		httpapi.WriteError(rec, httptest.NewRequest(http.MethodGet, "/x", nil), c.err)
		if rec.Code != http.StatusServiceUnavailable || rec.Header().Get("Retry-After") != "1" {
			t.Errorf("%s: status %d Retry-After %q, want 503 and 1", c.name, rec.Code, rec.Header().Get("Retry-After"))
		}
		body := decodeBody(t, rec)
		if body["error"] != "Service unavailable" || body["code"] != "unavailable" {
			t.Errorf("%s: body %v", c.name, body)
		}
	}
}

func TestDeadlineBoundsEveryRequest(t *testing.T) {
	t.Parallel()
	var got time.Duration
	h := httpapi.Deadline(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d, ok := r.Context().Deadline()
		if !ok {
			t.Error("request has no deadline")
		}
		got = time.Until(d)
	}), 3*time.Second)

	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil))
	if got <= 0 || got > 3*time.Second {
		t.Fatalf("budget: deadline in %v, want within 3s", got)
	}

	// A Lambda invocation's deadline, less the margin, wins when it is sooner.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(http.MethodGet, "/x", nil).WithContext(ctx))
	if got > 2*time.Second-httpapi.DeadlineMargin {
		t.Fatalf("lambda: deadline in %v, want at most %v", got, 2*time.Second-httpapi.DeadlineMargin)
	}
}
