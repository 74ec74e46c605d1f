// Package api holds Gale's HTTP contract: an OpenAPI 3.1 document kept as YAML
// fragments under openapi/ and served, merged into one JSON document, at
// GET /api/v1/openapi.json (public, by the health function).
//
// Layout of openapi/:
//   - base.yaml: openapi version, info, the shared components (the Error
//     envelope, Pagination, the common error responses, the security schemes and
//     the Page, Limit and OrgIdQuery parameters).
//   - <function>.yaml, one per function of shared/routes that serves routes: its
//     paths (full paths, /api/v1/...) and its own component schemas, each named
//     with the domain noun as prefix (User..., Role..., Site...). Schema names
//     are unique across fragments.
//
// Merge completes what every operation of a kind answers (see complete): Force
// MFA's 428, an API key's 429 and 503 with Retry-After and X-RateLimit-*
// headers, and default for operations that only redirect or are not built, so
// a fragment cannot forget them. It also marks the operations of a path
// outside /api/v1 with a twin under it (the root /admin aliases) x-internal, so the reference page
// lists each operation once (hideAliases). `make lint-openapi` holds the result to
// Redocly's recommended rules with no error and no warning, and tests/docs to
// a generated Go client that compiles. The reference page (docs.go) renders it
// at GET /api/v1/docs.
//
// The document is the reference for behaviour the code relies on (messages,
// statuses, limits, the rate-limit numbers, invitation and refresh rules): the
// `description:` fields say it where the schema cannot. Tests hold it to the
// code: every routed pattern is documented and every documented path routed, and
// tests/fixture.Do validates each request and response of a documented route
// against it.
//
// Nothing is parsed at init: the fragments are embedded and merged on the first
// request for the document (sync.Once), so the health function's cold start does
// not pay for it.
package api

import (
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"sort"
	"strings"
	"sync"

	yaml "gopkg.in/yaml.v3"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// Path is where the document is served.
const Path = "/api/v1/openapi.json"

//go:embed openapi/*.yaml
var files embed.FS

var (
	once   sync.Once
	merged []byte
	errDoc error
)

// Fragment is one YAML file of openapi/, decoded.
type Fragment struct {
	// Name is the file name without .yaml (base, or a function name).
	Name string
	Doc  map[string]any
}

// Fragments decodes every fragment, base first, then by name.
func Fragments() ([]Fragment, error) {
	names, err := fs.Glob(files, "openapi/*.yaml")
	if err != nil {
		return nil, err
	}
	sort.Slice(names, func(i, j int) bool {
		bi, bj := path.Base(names[i]) == "base.yaml", path.Base(names[j]) == "base.yaml"
		if bi != bj {
			return bi
		}
		return names[i] < names[j]
	})
	var out []Fragment
	for _, n := range names {
		raw, err := files.ReadFile(n)
		if err != nil {
			return nil, err
		}
		f, err := DecodeFragment(strings.TrimSuffix(path.Base(n), ".yaml"), raw)
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}

// DecodeFragment decodes one YAML fragment named name.
func DecodeFragment(name string, raw []byte) (Fragment, error) {
	var doc map[string]any
	if err := yaml.NewDecoder(bytes.NewReader(raw)).Decode(&doc); err != nil {
		return Fragment{}, fmt.Errorf("api: %s.yaml: %w", name, err)
	}
	return Fragment{Name: name, Doc: stringKeys(doc).(map[string]any)}, nil
}

// stringKeys turns YAML maps with non-string keys (an unquoted status code such
// as 200) into JSON objects with string keys, recursively.
func stringKeys(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = stringKeys(e)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, e := range t {
			m[fmt.Sprint(k)] = stringKeys(e)
		}
		return m
	case []any:
		for i, e := range t {
			t[i] = stringKeys(e)
		}
		return t
	}
	return v
}

// Merge joins fragments into one document: base's top level, with every
// fragment's paths and components added. A path or component defined twice is
// an error.
func Merge(frags []Fragment) (map[string]any, error) {
	if len(frags) == 0 || frags[0].Name != "base" {
		return nil, fmt.Errorf("api: base.yaml missing")
	}
	doc := frags[0].Doc
	paths, _ := doc["paths"].(map[string]any)
	if paths == nil {
		paths = map[string]any{}
		doc["paths"] = paths
	}
	comps, _ := doc["components"].(map[string]any)
	if comps == nil {
		comps = map[string]any{}
		doc["components"] = comps
	}
	for _, f := range frags[1:] {
		for k := range f.Doc {
			if k != "paths" && k != "components" {
				return nil, fmt.Errorf("api: %s.yaml: top-level key %q (only paths and components)", f.Name, k)
			}
		}
		fp, _ := f.Doc["paths"].(map[string]any)
		for p, item := range fp {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("api: %s.yaml: path %s documented twice", f.Name, p)
			}
			paths[p] = item
		}
		fc, _ := f.Doc["components"].(map[string]any)
		for kind, v := range fc {
			entries, ok := v.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("api: %s.yaml: components.%s is not a map", f.Name, kind)
			}
			dst, _ := comps[kind].(map[string]any)
			if dst == nil {
				dst = map[string]any{}
				comps[kind] = dst
			}
			for name, c := range entries {
				if _, dup := dst[name]; dup {
					return nil, fmt.Errorf("api: %s.yaml: components.%s.%s defined twice", f.Name, kind, name)
				}
				dst[name] = c
			}
		}
	}
	complete(paths, comps)
	hideAliases(paths)
	return doc, nil
}

// hideAliases marks every operation of a path outside /api/v1 that has a
// twin under /api/v1 x-internal. Such a path is an alias of an /api/v1 route (the admin function serves
// /admin/... too, for callers of the spec's root paths): it stays in the
// document, so the routers and tests/fixture.Do hold it to the contract like
// any other route, but the reference page (Scalar skips x-internal
// operations) lists each operation once, under /api/v1, whose description
// names the alias.
func hideAliases(paths map[string]any) {
	for p, item := range paths {
		if _, twin := paths["/api/v1"+p]; !twin || strings.HasPrefix(p, "/api/v1/") {
			continue // GET / and GET /api/v1 (the index) are their own routes
		}
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			if o, ok := op.(map[string]any); ok {
				o["x-internal"] = true
			}
		}
	}
}

// enrolPrefixes are the routes a user needs to enrol a second factor: Force
// MFA's 428 never answers them (the Enrol routes of the code; docs/decisions.md#force-mfa
// lists them). A prefix ending in "/" covers the paths under it.
var enrolPrefixes = []string{
	"/api/v1/auth/me", "/api/v1/auth/logout", "/api/v1/auth/refresh", "/api/v1/auth/mfa/",
	"/api/v1/auth/phone/", "/api/v1/auth/passkeys/", "/api/v1/auth/passkeys", "/api/v1/users/me",
}

// Enrol reports whether the documented path p is one of the routes Force MFA
// leaves open.
func Enrol(p string) bool {
	for _, e := range enrolPrefixes {
		if p == e || (strings.HasSuffix(e, "/") && strings.HasPrefix(p, e)) {
			return true
		}
	}
	return false
}

// rateLimitHeaders are the headers every answer to an API key carries.
var rateLimitHeaders = []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset"}

// complete adds what every operation of a kind answers, so fragments need not
// repeat it (and one added by another team cannot forget it):
//   - an operation a signed-in user calls (bearerAuth), except the enrolment
//     routes (Enrol), documents Force MFA's 428;
//   - an operation with no 2xx answer, because it redirects (3xx) or is not
//     built yet (501), documents that every other answer is the error
//     envelope (default);
//   - an operation that accepts an API key (apiKeyAuth) documents the key's
//     429 and 503 (both with Retry-After) and the X-RateLimit-* headers on every
//     answer; a shared response it refers to is replaced by a copy named
//     Keyed<Name> that carries them.
//
// What a fragment wrote itself is kept.
func complete(paths, comps map[string]any) {
	responses, _ := comps["responses"].(map[string]any)
	if responses == nil {
		responses = map[string]any{}
		comps["responses"] = responses
	}
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			resps, _ := o["responses"].(map[string]any)
			if resps == nil {
				continue
			}
			if answersNo2xx(resps) {
				addResponse(resps, "default", "Default")
			}
			user, key := schemes(o)
			if user && !Enrol(p) {
				addResponse(resps, "428", "PreconditionRequired")
			}
			if !key {
				continue
			}
			addResponse(resps, "429", "TooManyRequests")
			addResponse(resps, "503", "Unavailable")
			for code, r := range resps {
				resps[code] = keyed(r, responses)
			}
		}
	}
}

// answersNo2xx reports whether an operation's answers are a redirect or 501
// and errors: no 2xx.
func answersNo2xx(resps map[string]any) bool {
	redirectOrStub := false
	for code := range resps {
		switch {
		case strings.HasPrefix(code, "2"), code == "default":
			return false
		case strings.HasPrefix(code, "3"), code == "501":
			redirectOrStub = true
		}
	}
	return redirectOrStub
}

// schemes reports whether an operation's security accepts a user's bearer
// token and an API key.
func schemes(o map[string]any) (user, key bool) {
	secs, _ := o["security"].([]any)
	for _, sec := range secs {
		m, _ := sec.(map[string]any)
		_, u := m["bearerAuth"]
		_, k := m["apiKeyAuth"]
		user, key = user || u, key || k
	}
	return user, key
}

func addResponse(resps map[string]any, code, name string) {
	if _, ok := resps[code]; !ok {
		resps[code] = map[string]any{"$ref": "#/components/responses/" + name}
	}
}

// keyed returns r with the rate-limit headers: an inline response gets them
// added, a reference to a shared response points to its Keyed copy instead.
func keyed(r any, shared map[string]any) any {
	m, _ := r.(map[string]any)
	if m == nil {
		return r
	}
	if ref, ok := m["$ref"].(string); ok {
		name, found := strings.CutPrefix(ref, "#/components/responses/")
		orig, _ := shared[name].(map[string]any)
		if !found || orig == nil || strings.HasPrefix(name, "Keyed") {
			return r
		}
		k := "Keyed" + name
		if _, done := shared[k]; !done {
			c := make(map[string]any, len(orig)+1)
			for f, v := range orig {
				c[f] = v
			}
			withHeaders(c)
			shared[k] = c
		}
		return map[string]any{"$ref": "#/components/responses/" + k}
	}
	withHeaders(m)
	return m
}

func withHeaders(resp map[string]any) {
	old, _ := resp["headers"].(map[string]any)
	h := make(map[string]any, len(old)+len(rateLimitHeaders))
	for k, v := range old {
		h[k] = v
	}
	for _, name := range rateLimitHeaders {
		if _, ok := h[name]; !ok {
			h[name] = map[string]any{"$ref": "#/components/headers/" + strings.ReplaceAll(name, "-", "")}
		}
	}
	resp["headers"] = h
}

// Document returns the merged document as JSON, built once on first use.
func Document() ([]byte, error) {
	once.Do(func() {
		frags, err := Fragments()
		if err != nil {
			errDoc = err
			return
		}
		doc, err := Merge(frags)
		if err != nil {
			errDoc = err
			return
		}
		merged, errDoc = json.Marshal(doc)
	})
	return merged, errDoc
}

// Routes registers GET /api/v1/openapi.json and the reference page (DocsPath).
func Routes(rt *httpapi.Router) {
	// Public by design: the contract is no secret, and clients fetch it unauthenticated.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/openapi.json", Access: httpapi.Public, Handle: serve})
	docsRoutes(rt)
}

// NoQuery refuses a request that carries a query parameter, for the public
// routes that take none (400 validation_failed naming the first, by name).
func NoQuery(r *http.Request) error {
	q := r.URL.Query()
	if len(q) == 0 {
		return nil
	}
	names := make([]string, 0, len(q))
	for k := range q {
		names = append(names, k)
	}
	sort.Strings(names)
	return fault.Invalid(names[0], "unknown query parameter")
}

func serve(w http.ResponseWriter, r *http.Request) error {
	if err := NoQuery(r); err != nil {
		return err
	}
	doc, err := Document()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(doc)
	return err
}
