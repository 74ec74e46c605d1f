package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/httpapi"
)

// Every line logged during a request, by the edge or by code deeper down,
// carries the request's id; every line is JSON.
func TestEveryLineOfARequestCarriesItsID(t *testing.T) {
	var buf bytes.Buffer
	log := httpapi.NewLogger(&buf, slog.LevelInfo)
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.InfoContext(r.Context(), "deep in a service")
		w.WriteHeader(http.StatusNoContent)
	})
	req := httptest.NewRequest(http.MethodGet, "/x", nil)
	req.Header.Set("X-Request-Id", "req-0123456789abcdef")
	httpapi.Edge(inner, log).ServeHTTP(httptest.NewRecorder(), req)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines: %s", len(lines), buf.String())
	}
	for _, l := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("not JSON: %s", l)
		}
		if rec["requestId"] != "req-0123456789abcdef" {
			t.Fatalf("line without the request id: %s", l)
		}
	}
}
