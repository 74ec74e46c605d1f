package httpapi

import (
	"net/http"
	"slices"
	"strings"
)

// Headers every answer carries: API responses are never cached (token answers
// among them) and never sniffed as another content type.
func securityHeaders(h http.Header) {
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
}

// CORS lets browser clients of the listed origins (CORS_ALLOWED_ORIGINS; none
// by default) call the API with credentials. An allowed Origin is echoed, never
// "*"; a preflight (OPTIONS with Access-Control-Request-Method) answers 204
// without reaching the routes. Requests from other origins get no CORS
// headers, so browsers refuse them; non-browser clients are unaffected.
func CORS(next http.Handler, origins []string) http.Handler {
	return cors{inner: next, origins: origins}
}

type cors struct {
	inner   http.Handler
	origins []string
}

// Unwrap returns the handler CORS wrapped (for Patterns).
func (c cors) Unwrap() http.Handler { return c.inner }

// Headers a browser client may send and read.
var (
	corsAllowHeaders  = "Authorization, Content-Type, X-API-Key, X-Service-CSRF, X-Request-Id"
	corsExposeHeaders = "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After"
	corsMethods       = "GET, POST, PUT, PATCH, DELETE"
)

func (c cors) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	origin := r.Header.Get("Origin")
	allowed := origin != "" && slices.Contains(c.origins, strings.TrimRight(origin, "/"))
	h := w.Header()
	if origin != "" {
		h.Add("Vary", "Origin")
	}
	preflight := r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != ""
	if allowed {
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Credentials", "true")
		h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
	}
	if preflight {
		if allowed {
			h.Set("Access-Control-Allow-Methods", corsMethods)
			h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
			h.Set("Access-Control-Max-Age", "600")
		}
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c.inner.ServeHTTP(w, r)
}
