package httpapi_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gale-rmm/gale/shared/httpapi"
)

func corsServer() http.Handler {
	rt := httpapi.NewRouter(nil, nil)
	rt.Add(httpapi.Route{Method: http.MethodPost, Path: "/api/v1/auth/login", NoAuthz: true,
		Handle: func(w http.ResponseWriter, r *http.Request) error {
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"accessToken": "t"})
			return nil
		}})
	return httpapi.Edge(httpapi.CORS(rt, []string{"https://app.example.com"}), slog.New(slog.NewTextHandler(io.Discard, nil)))
}

func TestEveryAnswerIsUncachedAndUnsniffed(t *testing.T) {
	for _, req := range []*http.Request{
		httptest.NewRequest(http.MethodPost, "/api/v1/auth/login", nil),
		httptest.NewRequest(http.MethodGet, "/api/v1/nowhere", nil),
	} {
		w := httptest.NewRecorder()
		corsServer().ServeHTTP(w, req)
		if w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("%s %s: headers %v", req.Method, req.URL.Path, w.Header())
		}
	}
}

func TestCORS(t *testing.T) {
	preflight := func(origin string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodOptions, "/api/v1/auth/login", nil)
		r.Header.Set("Origin", origin)
		r.Header.Set("Access-Control-Request-Method", "POST")
		w := httptest.NewRecorder()
		corsServer().ServeHTTP(w, r)
		return w
	}
	w := preflight("https://app.example.com")
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		w.Header().Get("Access-Control-Allow-Credentials") != "true" || w.Header().Get("Access-Control-Allow-Methods") == "" {
		t.Fatalf("allowed preflight: %d %v", w.Code, w.Header())
	}
	w = preflight("https://evil.example.com")
	if w.Code != http.StatusNoContent || w.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("other origin's preflight: %d %v", w.Code, w.Header())
	}
	r := httptest.NewRequest(http.MethodPost, "/api/v1/auth/login", nil)
	r.Header.Set("Origin", "https://app.example.com")
	rec := httptest.NewRecorder()
	corsServer().ServeHTTP(rec, r)
	if rec.Code != http.StatusOK || rec.Header().Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		rec.Header().Get("Vary") != "Origin" {
		t.Fatalf("allowed request: %d %v", rec.Code, rec.Header())
	}
	// No wildcard, ever; no configured origin, no CORS.
	plain := httpapi.CORS(http.NotFoundHandler(), nil)
	r = httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("Origin", "https://app.example.com")
	rec = httptest.NewRecorder()
	plain.ServeHTTP(rec, r)
	if rec.Header().Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("unconfigured CORS answered %v", rec.Header())
	}
}
