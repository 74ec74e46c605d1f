package api_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/httpapi"
)

func docsRouter() http.Handler {
	rt := httpapi.NewRouter(nil, nil)
	api.Routes(rt)
	return rt
}

func get(h http.Handler, path, encoding string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, path, nil)
	if encoding != "" {
		r.Header.Set("Accept-Encoding", encoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// The page loads only this host's bundle and document, and its policy allows
// nothing else; the bundle is gzip for a client that takes it, plain otherwise.
// (make docs builds the bundle; make test runs it first.)
func TestReferencePageAndBundle(t *testing.T) {
	h := docsRouter()
	page := get(h, api.DocsPath, "")
	if page.Code != http.StatusOK {
		t.Fatalf("GET %s = %d %s (run make docs)", api.DocsPath, page.Code, page.Body)
	}
	body := page.Body.String()
	for _, want := range []string{`<script src="` + api.BundlePath + `">`, `url: '` + api.Path + `'`, "withDefaultFonts: false", "telemetry: false"} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(body, "https://") || strings.Contains(body, "http://") {
		t.Error("page names another host")
	}
	if csp := page.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}

	gz := get(h, api.BundlePath, "gzip, deflate, br")
	if gz.Code != http.StatusOK || gz.Header().Get("Content-Encoding") != "gzip" {
		t.Fatalf("gzip bundle: %d %v", gz.Code, gz.Header())
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	unzipped, _ := io.ReadAll(zr)
	plain := get(h, api.BundlePath, "")
	if plain.Code != http.StatusOK || plain.Header().Get("Content-Encoding") != "" || !bytes.Equal(plain.Body.Bytes(), unzipped) {
		t.Fatalf("plain bundle: %d %v, %d bytes (gzip: %d unzipped)", plain.Code, plain.Header(), plain.Body.Len(), len(unzipped))
	}
	if !bytes.Contains(unzipped, []byte("createApiReference")) || plain.Header().Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Error("the bundle is not @scalar/api-reference's standalone script")
	}
	if w := get(h, api.BundlePath, "gzip;q=0"); w.Header().Get("Content-Encoding") != "" {
		t.Error("gzip sent to a client that refused it")
	}
	for _, p := range []string{api.DocsPath + "?x=1", api.BundlePath + "?v=2", api.Path + "?a=b"} {
		if w := get(h, p, ""); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "unknown query parameter") {
			t.Errorf("GET %s = %d %s", p, w.Code, w.Body)
		}
	}
}
