package api

import (
	"bytes"
	"compress/gzip"
	"embed"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// DocsPath serves the API reference page: the served document (Path)
// rendered in the browser by @scalar/api-reference, whose standalone bundle
// is served from this function too (BundlePath), so the page loads nothing
// from any other host and works offline. `make docs` builds the bundle from
// the version pinned in _npm/package-lock.json into docs/scalar.js.gz, which
// is embedded here; a build without it answers the page with 503.
const (
	DocsPath   = "/api/v1/docs"
	BundlePath = "/api/v1/docs/scalar.js"
	bundleFile = "docs/scalar.js.gz"
)

//go:embed docs
var docs embed.FS

// page is the reference page. The configuration keeps it on this host: no
// web fonts, no telemetry, no AI agent, no proxy (the try-it client calls the
// document's server, this host, directly), no developer toolbar.
const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Gale API reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<div id="app"></div>
<script src="` + BundlePath + `"></script>
<script>
Scalar.createApiReference('#app', {
  url: '` + Path + `',
  withDefaultFonts: false,
  telemetry: false,
  showDeveloperTools: 'never',
  agent: {disabled: true},
  hideClientButton: false,
});
</script>
</body>
</html>
`

var errNoBundle = fault.New(fault.KindUnavailable, "API reference bundle not built (make docs)")

func docsRoutes(rt *httpapi.Router) {
	// Public by design, like the document the page renders.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/docs", Access: httpapi.Public, Handle: servePage})
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/docs/scalar.js", Access: httpapi.Public, Handle: serveBundle})
}

func servePage(w http.ResponseWriter, r *http.Request) error {
	if err := NoQuery(r); err != nil {
		return err
	}
	if _, err := fs.Stat(docs, bundleFile); err != nil {
		return errNoBundle
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	// The page may load and call nothing but this host.
	h.Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "+
		"img-src 'self' data: blob:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'none'")
	w.WriteHeader(http.StatusOK)
	_, err := io.WriteString(w, page)
	return err
}

// serveBundle answers the gzipped bundle as is to a client that accepts gzip
// (every browser), and unzipped to one that does not.
func serveBundle(w http.ResponseWriter, r *http.Request) error {
	if err := NoQuery(r); err != nil {
		return err
	}
	gz, err := docs.ReadFile(bundleFile)
	if errors.Is(err, fs.ErrNotExist) {
		return errNoBundle
	}
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", "text/javascript; charset=utf-8")
	h.Add("Vary", "Accept-Encoding")
	h.Set("Cache-Control", "public, max-age=3600")
	if acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		w.WriteHeader(http.StatusOK)
		_, err = w.Write(gz)
		return err
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusOK)
	_, err = io.Copy(w, zr)
	return err
}

func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		coding, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(coding), "gzip") && strings.ReplaceAll(params, " ", "") != "q=0" {
			return true
		}
	}
	return false
}
