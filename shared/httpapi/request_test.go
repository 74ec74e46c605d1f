package httpapi_test

import (
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/httpapi"
)

func TestClientIP(t *testing.T) {
	cases := []struct {
		name, xff, real, remote, want, source string
	}{
		{"forwarded first entry", "203.0.113.7, 10.0.0.1", "198.51.100.9", "10.0.0.2:443", "203.0.113.7", "10.0.0.2"},
		{"forwarded single", "203.0.113.7", "", "10.0.0.2:443", "203.0.113.7", "10.0.0.2"},
		{"forwarded ipv6", "2001:db8::1, 10.0.0.1", "", "10.0.0.2:443", "2001:db8::1", "10.0.0.2"},
		{"bad forwarded falls back to real ip", "not-an-ip, 203.0.113.7", "198.51.100.9", "10.0.0.2:443", "198.51.100.9", "10.0.0.2"},
		{"real ip", "", " 198.51.100.9 ", "10.0.0.2:443", "198.51.100.9", "10.0.0.2"},
		{"bad real ip falls back to remote", "", "unknown", "10.0.0.2:443", "10.0.0.2", "10.0.0.2"},
		{"remote with port", "", "", "192.0.2.1:5678", "192.0.2.1", "192.0.2.1"},
		{"remote as API Gateway sets it (no port)", "", "", "192.0.2.1", "192.0.2.1", "192.0.2.1"},
		{"remote ipv6", "", "", "[2001:db8::2]:443", "2001:db8::2", "2001:db8::2"},
		{"no address", "", "", "", "unknown", "unknown"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodGet, "/", nil)
			r.RemoteAddr = c.remote
			if c.xff != "" {
				r.Header.Set("X-Forwarded-For", c.xff)
			}
			if c.real != "" {
				r.Header.Set("X-Real-IP", c.real)
			}
			if got := httpapi.ClientIP(r); got != c.want {
				t.Errorf("ClientIP = %q, want %q", got, c.want)
			}
			// The rate-limit key ignores what the client can choose.
			if got := httpapi.SourceIP(r); got != c.source {
				t.Errorf("SourceIP = %q, want %q", got, c.source)
			}
		})
	}
}

func TestUserAgent(t *testing.T) {
	r := httptest.NewRequest(http.MethodGet, "/", nil)
	r.Header.Set("User-Agent", "gale-cli/1.0")
	if got := httpapi.UserAgent(r); got != "gale-cli/1.0" {
		t.Fatalf("UserAgent = %q", got)
	}
	r.Header.Set("User-Agent", strings.Repeat("a", 2000))
	if got := httpapi.UserAgent(r); len(got) != 512 {
		t.Fatalf("long user agent kept %d bytes, want 512", len(got))
	}
}

func TestParsePage(t *testing.T) {
	cases := []struct {
		query     string
		page, lim int
		bad       string // field named in the error, "" for none
	}{
		{"", 1, 50, ""},
		{"page=3&limit=100", 3, 100, ""},
		{"page=1&limit=1", 1, 1, ""},
		{"limit=101", 0, 0, "limit"},
		{"limit=0", 0, 0, "limit"},
		{"limit=-5", 0, 0, "limit"},
		{"limit=ten", 0, 0, "limit"},
		{"page=0", 0, 0, "page"},
		{"page=-1", 0, 0, "page"},
		{"page=1.5", 0, 0, "page"},
		{"page=99999999999999999999", 0, 0, "page"},
	}
	for _, c := range cases {
		t.Run(c.query, func(t *testing.T) {
			p, err := httpapi.ParsePage(httptest.NewRequest(http.MethodGet, "/x?"+c.query, nil), 50, 100)
			if c.bad == "" {
				if err != nil || p.Page != c.page || p.Limit != c.lim {
					t.Fatalf("ParsePage(%q) = %+v, %v; want page %d limit %d", c.query, p, err, c.page, c.lim)
				}
				return
			}
			if _, ok := fieldErrors(t, err)[c.bad]; !ok {
				t.Fatalf("ParsePage(%q) error does not name %s: %v", c.query, c.bad, err)
			}
		})
	}
	// Both bad: both named.
	_, err := httpapi.ParsePage(httptest.NewRequest(http.MethodGet, "/x?page=0&limit=0", nil), 50, 100)
	if f := fieldErrors(t, err); len(f) != 2 {
		t.Fatalf("fieldErrors = %v, want page and limit", f)
	}
}

func TestNewList(t *testing.T) {
	all := []int{1, 2, 3, 4, 5}
	cases := []struct {
		page, limit int
		want        string
	}{
		{1, 2, "[1 2]"},
		{3, 2, "[5]"},
		{4, 2, "[]"},
		{1, 50, "[1 2 3 4 5]"},
		// A page far past the end is empty, never an overflowed (negative) offset.
		{math.MaxInt, 100, "[]"},
		{math.MaxInt/100 + 2, 100, "[]"},
		{math.MaxInt/50 + 1, 50, "[]"},
	}
	for _, c := range cases {
		l := httpapi.NewList(all, httpapi.Page{Page: c.page, Limit: c.limit})
		if fmt.Sprint(l.Data) != c.want || l.Pagination.Total != 5 || l.Pagination.Page != c.page || l.Pagination.Limit != c.limit {
			t.Errorf("NewList page %d limit %d = %+v, want data %s", c.page, c.limit, l, c.want)
		}
		if l.Data == nil {
			t.Errorf("NewList data is nil (encodes as null, want [])")
		}
	}
	rec := httptest.NewRecorder()
	httpapi.WriteJSON(rec, http.StatusOK, httpapi.NewList([]string(nil), httpapi.Page{Page: 1, Limit: 50}))
	if got := strings.TrimSpace(rec.Body.String()); got != `{"data":[],"pagination":{"page":1,"limit":50,"total":0}}` {
		t.Fatalf("empty list = %s", got)
	}
}

func TestWriteJSON(t *testing.T) {
	rec := httptest.NewRecorder()
	httpapi.WriteJSON(rec, http.StatusCreated, map[string]string{"url": "https://x.example/a?b=1&c=<2>"})
	if rec.Code != http.StatusCreated || !strings.Contains(rec.Body.String(), "&c=<2>") {
		t.Fatalf("WriteJSON = %d %s (HTML must not be escaped)", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	httpapi.WriteJSON(rec, http.StatusNoContent, map[string]string{"x": "y"})
	if rec.Code != http.StatusNoContent || rec.Body.Len() != 0 {
		t.Fatalf("204 wrote a body: %q", rec.Body.String())
	}
}

func TestMain(m *testing.M) {
	// WriteError logs 500s on the default logger; keep test output readable.
	slog.SetDefault(quietLog())
	os.Exit(m.Run())
}
