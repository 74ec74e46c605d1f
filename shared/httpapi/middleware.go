package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"runtime/debug"
	"strings"
	"sync"
	"time"
)

type ctxKey int

const stateKey ctxKey = iota

// state is per-request edge state that later layers fill in (the caller, for logs).
type state struct {
	mu        sync.Mutex
	requestID string
	ip, agent string
	caller    string
	tenant    string
}

// RequestID returns the request's id ("" outside a request).
func RequestID(ctx context.Context) string {
	if s, ok := ctx.Value(stateKey).(*state); ok {
		return s.requestID
	}
	return ""
}

// Client returns the request's client address and user agent as audit
// records hold them (ClientIP, UserAgent; "" outside a request).
func Client(ctx context.Context) (ip, userAgent string) {
	if s, ok := ctx.Value(stateKey).(*state); ok {
		return s.ip, s.agent
	}
	return "", ""
}

// SetCaller records who the caller is and their tenant, for the access log.
func SetCaller(ctx context.Context, caller, tenant string) {
	if s, ok := ctx.Value(stateKey).(*state); ok {
		s.mu.Lock()
		s.caller, s.tenant = caller, tenant
		s.mu.Unlock()
	}
}

var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._:=-]{8,128}$`)

type statusWriter struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += n
	return n, err
}

// CallCounter counts the DynamoDB calls made with a request's context and
// the capacity units they consumed, the figures of its access-log line
// (store.CallCounter satisfies it).
type CallCounter interface {
	// Count returns ctx carrying a counter (the one it carries already, if
	// any) and a reading of that counter.
	// The reading answers the calls, and the read and write capacity units
	// they consumed as DynamoDB bills them.
	Count(ctx context.Context) (context.Context, func() (calls int, rcu, wcu float64))
}

// Edge wraps a group's handler with request ids, panic recovery and a JSON
// access log. It is applied once per function; EdgeCounting also counts calls.
func Edge(next http.Handler, log *slog.Logger) http.Handler { return EdgeCounting(next, log, nil) }

// EdgeCounting is Edge whose access log reports the DynamoDB calls counted by
// calls (nil: none counted).
func EdgeCounting(next http.Handler, log *slog.Logger, calls CallCounter) http.Handler {
	return edge{inner: next, HandlerFunc: func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		st := &state{requestID: r.Header.Get("X-Request-Id"), ip: ClientIP(r), agent: UserAgent(r)}
		if !validRequestID.MatchString(st.requestID) {
			st.requestID = newRequestID()
		}
		ctx := context.WithValue(r.Context(), stateKey, st)
		db := func() (int, float64, float64) { return 0, 0, 0 }
		if calls != nil {
			ctx, db = calls.Count(ctx)
		}
		r = r.WithContext(ctx)
		w.Header().Set("X-Request-Id", st.requestID)
		securityHeaders(w.Header())
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "panic", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if sw.status == 0 {
					WriteError(sw, r, errString("panic"))
				}
			}
			st.mu.Lock()
			caller, tenant := st.caller, st.tenant
			st.mu.Unlock()
			dbCalls, dbRCU, dbWCU := db()
			log.InfoContext(ctx, "request",
				"method", r.Method, "path", r.URL.Path,
				"status", sw.status, "durationMs", time.Since(start).Milliseconds(),
				"dbCalls", dbCalls, "dbRCU", dbRCU, "dbWCU", dbWCU,
				"principal", caller, "tenant", tenant, "ip", SourceIP(r))
		}()
		next.ServeHTTP(sw, r)
	}}
}

// edge is the handler Edge returns; it keeps the wrapped handler for Unwrap.
type edge struct {
	http.HandlerFunc
	inner http.Handler
}

// Unwrap returns the handler Edge wrapped (for Patterns).
func (e edge) Unwrap() http.Handler { return e.inner }

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ClientIP is the address recorded in audit records: the first X-Forwarded-For
// entry, else X-Real-IP, else the connection's address.
func ClientIP(r *http.Request) string {
	if xff := r.Header.Get("X-Forwarded-For"); xff != "" {
		first := strings.TrimSpace(strings.Split(xff, ",")[0])
		if ip := net.ParseIP(first); ip != nil {
			return ip.String()
		}
	}
	if xr := strings.TrimSpace(r.Header.Get("X-Real-IP")); xr != "" {
		if ip := net.ParseIP(xr); ip != nil {
			return ip.String()
		}
	}
	return SourceIP(r)
}

// SourceIP is the address the connection came from as API Gateway saw it (the
// adapter puts requestContext.http.sourceIp in RemoteAddr). Rate limits key on it
// because, unlike X-Forwarded-For, a client cannot choose it.
func SourceIP(r *http.Request) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	if ip := net.ParseIP(host); ip != nil {
		return ip.String()
	}
	return "unknown"
}

// UserAgent is the caller's user agent, bounded for storage.
func UserAgent(r *http.Request) string {
	ua := r.UserAgent()
	if len(ua) > 512 {
		ua = ua[:512]
	}
	return ua
}

// DeadlineMargin is kept back from a Lambda invocation's deadline, so the
// function still answers (503) before the platform ends it.
const DeadlineMargin = 500 * time.Millisecond

// DefaultBudget is a request's budget when none is configured.
const DefaultBudget = 10 * time.Second

// Deadline runs every request under a deadline: budget from now, or the
// incoming context's deadline (a Lambda invocation's) less DeadlineMargin,
// whichever is sooner. AWS calls made with the request's context stop when it
// passes, and the error encoder answers 503 `Service unavailable`.
func Deadline(next http.Handler, budget time.Duration) http.Handler {
	if budget <= 0 {
		budget = DefaultBudget
	}
	return deadline{inner: next, serve: func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		end := time.Now().Add(budget)
		if d, ok := ctx.Deadline(); ok {
			limit := d.Add(-DeadlineMargin)
			if rest := time.Until(d); rest <= 2*DeadlineMargin {
				limit = d.Add(-rest / 2)
			}
			if limit.Before(end) {
				end = limit
			}
		}
		ctx, cancel := context.WithDeadline(ctx, end)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	}}
}

// deadline is the handler Deadline returns; it keeps the wrapped handler for Unwrap.
type deadline struct {
	inner http.Handler
	serve http.HandlerFunc
}

func (d deadline) ServeHTTP(w http.ResponseWriter, r *http.Request) { d.serve(w, r) }

// Unwrap returns the handler Deadline wrapped (for Patterns).
func (d deadline) Unwrap() http.Handler { return d.inner }
