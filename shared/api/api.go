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
	addKeyLimits(paths)
	return doc, nil
}

// addKeyLimits gives every operation that accepts an API key the 429 of the
// key's rate limit (apiKeyAuth in base.yaml), so fragments need not repeat it.
func addKeyLimits(paths map[string]any) {
	for _, item := range paths {
		ops, _ := item.(map[string]any)
		for _, op := range ops {
			o, _ := op.(map[string]any)
			secs, _ := o["security"].([]any)
			accepts := false
			for _, sec := range secs {
				if m, ok := sec.(map[string]any); ok {
					_, accepts = m["apiKeyAuth"]
					if accepts {
						break
					}
				}
			}
			resps, _ := o["responses"].(map[string]any)
			if !accepts || resps == nil {
				continue
			}
			if _, ok := resps["429"]; !ok {
				resps["429"] = map[string]any{"$ref": "#/components/responses/TooManyRequests"}
			}
		}
	}
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

// Routes registers GET /api/v1/openapi.json.
func Routes(rt *httpapi.Router) {
	// Public by design: the contract is no secret, and clients fetch it unauthenticated.
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: Path, Access: httpapi.Public, Handle: serve})
}

func serve(w http.ResponseWriter, r *http.Request) error {
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
