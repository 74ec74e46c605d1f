// Package httpapi is the HTTP edge shared by every route group: one error encoder,
// strict JSON decoding, the router with per-route access metadata, request ids,
// panic recovery, access logs and client metadata for audit records. It imports no
// domain package; authentication is plugged in through the Authenticator interface.
package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
)

// Access says who may call a route.
type Access int

const (
	// Public routes need no credentials.
	Public Access = iota
	// User routes need a bearer JWT.
	User
	// UserOrKey routes accept a bearer JWT or an X-API-Key (the key wins).
	UserOrKey
	// Agent routes need an agent bearer token.
	Agent
	// Optional routes read a bearer JWT when one is sent (e.g. /auth/mfa/verify).
	Optional
)

// Route is one endpoint and what it demands of the caller.
type Route struct {
	Method string
	Path   string
	Access Access
	// MFA marks "+ MFA" routes: the access token must carry mfa: true.
	MFA bool
	// Enrol marks the routes a Force-MFA user may call before enrolling TOTP.
	Enrol bool
	// Scopes lists the API-key scopes that satisfy a scope-protected route.
	Scopes []string
	// NoAuthz marks a route whose handler legitimately makes no authorization
	// check (public routes, own-profile routes). Say why where it is set.
	NoAuthz bool
	// MaxBody caps the request body in bytes when set (agent ingest: 32 KB; a
	// larger upload may set more); unset, a route takes at most the default
	// MaxBody (1 MiB). The cap holds before authentication: a declared
	// Content-Length over it is 413 at once, and no reader of the body gets past
	// it. GET and HEAD routes take no body: theirs is never read.
	MaxBody int64
	Handle  Handler
}

// capReader lets a reader see at most one byte past a route's cap (so that
// every reader can tell "over the limit" from "at it"), then ends the body.
type capReader struct {
	io.ReadCloser
	left int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.ReadCloser.Read(p)
	c.left -= int64(n)
	return n, err
}

// Handler is an endpoint body: it writes a success response or returns an error
// for the one encoder.
type Handler func(w http.ResponseWriter, r *http.Request) error

// Authenticator establishes the caller of a non-public route and returns the
// request carrying them, or a fault error (401, 403, 428, 429).
type Authenticator interface {
	Authenticate(w http.ResponseWriter, r *http.Request, rt Route) (*http.Request, error)
}

// AuthzTracker reports whether the request made an authorization decision; the
// router uses it to catch a route that ran without one.
type AuthzTracker interface {
	Checked(ctx context.Context) bool
}

// Router serves the routes of one group with the edge middleware.
type Router struct {
	mux     *http.ServeMux
	routes  []Route
	pending []string
	authn   Authenticator
	tracker AuthzTracker
	// Strict makes a route that succeeded without an authorization check panic
	// (tests); otherwise it is logged as an error.
	Strict bool
}

// NewRouter returns a router. authn may be nil when the group has only public routes.
func NewRouter(authn Authenticator, tracker AuthzTracker) *Router {
	return &Router{mux: http.NewServeMux(), authn: authn, tracker: tracker}
}

// Add registers routes. Path is a Go 1.22 ServeMux pattern without the method.
func (rt *Router) Add(routes ...Route) {
	for _, r := range routes {
		r := r
		rt.routes = append(rt.routes, r)
		rt.mux.Handle(r.Method+" "+r.Path, rt.serve(r))
	}
}

// Routes lists the registered routes (for docs and route-coverage tests).
func (rt *Router) Routes() []Route { return append([]Route(nil), rt.routes...) }

// Patterns lists every registered pattern as "METHOD /path", the routes and
// the pending (501) ones, for the route-coverage test against the OpenAPI
// document.
func (rt *Router) Patterns() []string {
	var out []string
	for _, r := range rt.routes {
		out = append(out, r.Method+" "+r.Path)
	}
	return append(out, rt.pending...)
}

// Patterns returns the patterns of h's router, looking through handlers that
// wrap one (Edge); ok is false when h serves no Router (e.g. a not-built group).
func Patterns(h http.Handler) (patterns []string, ok bool) {
	for h != nil {
		if rt, is := h.(*Router); is {
			return rt.Patterns(), true
		}
		u, is := h.(interface{ Unwrap() http.Handler })
		if !is {
			return nil, false
		}
		h = u.Unwrap()
	}
	return nil, false
}

func (rt *Router) serve(route Route) http.Handler {
	limit := route.MaxBody
	if limit <= 0 {
		limit = MaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet || r.Method == http.MethodHead:
			// A route that takes no body never reads one, whatever was sent.
			r.Body, r.ContentLength = http.NoBody, 0
		case r.ContentLength > limit:
			WriteError(w, r, fault.New(fault.KindTooLarge, "Request body too large").WithDetails(map[string]any{"limitBytes": limit}))
			return
		default:
			if r.Body != nil && r.Body != http.NoBody {
				r.Body = &capReader{ReadCloser: r.Body, left: limit + 1}
			}
			r = r.WithContext(context.WithValue(r.Context(), limitKey{}, limit))
		}
		if route.Access != Public {
			if rt.authn == nil {
				WriteError(w, r, fault.Internal(errMissingAuthn))
				return
			}
			// Keep r on failure: an authenticator may return a nil request with its error.
			ar, err := rt.authn.Authenticate(w, r, route)
			if err != nil {
				WriteError(w, r, err)
				return
			}
			if ar != nil {
				r = ar
			}
		}
		guarded := route.Access != Public && !route.NoAuthz && rt.tracker != nil
		// A guarded route's answer is held until the check is known, so a route
		// that ran without one answers 500 instead of its success: in strict mode
		// (tests) by a panic that Edge recovers, in production by replacing the
		// held answer (and logging it).
		var held *heldResponse
		out := w
		if guarded {
			held = &heldResponse{header: http.Header{}}
			out = held
		}
		sw, ok := out.(*statusWriter)
		if !ok {
			sw = &statusWriter{ResponseWriter: out}
		}
		if err := route.Handle(sw, r); err != nil {
			WriteError(sw, r, err)
		}
		if guarded && sw.status < 400 && !rt.tracker.Checked(r.Context()) {
			slog.ErrorContext(r.Context(), "route ran without an authorization check", "route", route.Method+" "+route.Path)
			if rt.Strict {
				panic("route ran without an authorization check: " + route.Method + " " + route.Path)
			}
			WriteError(w, r, fault.Internal(errNoAuthz))
			return
		}
		if held != nil {
			held.sendTo(w)
		}
	})
}

// heldResponse buffers a response until the router has checked the route.
type heldResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (h *heldResponse) Header() http.Header { return h.header }

func (h *heldResponse) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}

func (h *heldResponse) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return h.body.Write(b)
}

func (h *heldResponse) sendTo(w http.ResponseWriter) {
	for k, v := range h.header {
		w.Header()[k] = v
	}
	if h.status == 0 {
		return // the handler wrote nothing; neither do we
	}
	w.WriteHeader(h.status)
	_, _ = w.Write(h.body.Bytes())
}

type errString string

func (e errString) Error() string { return string(e) }

const (
	errMissingAuthn = errString("httpapi: non-public route without an authenticator")
	errNoAuthz      = errString("httpapi: route answered without an authorization decision")
)

var methods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}

// ServeHTTP dispatches, answering unknown routes 404 and wrong methods 405 in the
// error envelope.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if _, pattern := rt.mux.Handler(r); pattern != "" {
		rt.mux.ServeHTTP(w, r)
		return
	}
	var allow []string
	for _, m := range methods {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, p := rt.mux.Handler(probe); p != "" {
			allow = append(allow, m)
		}
	}
	if len(allow) > 0 {
		w.Header().Set("Allow", strings.Join(allow, ", "))
		WriteError(w, r, fault.New(fault.KindMethodNotAllowed, "Method Not Allowed"))
		return
	}
	WriteError(w, r, fault.NotFound("Not Found"))
}

// Pending registers spec routes whose feature is not built yet: each answers 501
// `Not implemented` (never a fake success), and unknown paths still answer 404.
func (rt *Router) Pending(routes ...string) {
	for _, r := range routes {
		method, path, _ := strings.Cut(r, " ")
		rt.pending = append(rt.pending, r)
		rt.mux.Handle(method+" "+path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			WriteError(w, r, fault.NotImplemented())
		}))
	}
}
