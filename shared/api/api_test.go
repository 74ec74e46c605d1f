package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/gale-rmm/gale/shared/api"
	"github.com/gale-rmm/gale/shared/routes"
)

func load(t *testing.T) *openapi3.T {
	t.Helper()
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := openapi3.NewLoader().LoadFromData(raw)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestMergedDocumentValidates(t *testing.T) {
	doc := load(t)
	if err := doc.Validate(context.Background()); err != nil {
		t.Fatalf("document does not validate: %v", err)
	}
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi = %q, want 3.1.0", doc.OpenAPI)
	}
}

func TestSchemaNamesAreUniqueAcrossFragments(t *testing.T) {
	frags, err := api.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, f := range frags {
		comps, _ := f.Doc["components"].(map[string]any)
		for kind, v := range comps {
			entries, _ := v.(map[string]any)
			for name := range entries {
				key := kind + "." + name
				if prev, dup := seen[key]; dup {
					t.Errorf("components.%s defined in %s.yaml and %s.yaml", key, prev, f.Name)
				}
				seen[key] = f.Name
			}
		}
	}
	if _, err := api.Merge(frags); err != nil {
		t.Fatal(err)
	}
}

// Merge refuses a path or schema that two fragments define.
func TestMergeRefusesDuplicates(t *testing.T) {
	base := func() api.Fragment { return api.Fragment{Name: "base", Doc: map[string]any{"openapi": "3.1.0"}} }
	a := api.Fragment{Name: "a", Doc: map[string]any{"paths": map[string]any{"/x": map[string]any{}}}}
	if _, err := api.Merge([]api.Fragment{base(), a, a}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate path: err = %v", err)
	}
	s := api.Fragment{Name: "s", Doc: map[string]any{"components": map[string]any{"schemas": map[string]any{"X": map[string]any{}}}}}
	if _, err := api.Merge([]api.Fragment{base(), s, s}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate schema: err = %v", err)
	}
}

func TestEveryFragmentDocumentsOnlyItsOwnFunction(t *testing.T) {
	frags, err := api.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	var fns []string
	for _, g := range routes.Groups {
		fns = append(fns, g.Function)
	}
	for _, f := range frags {
		paths, _ := f.Doc["paths"].(map[string]any)
		if f.Name == "base" {
			if len(paths) != 0 {
				t.Errorf("base.yaml documents paths %v; paths belong in a function's fragment", keys(paths))
			}
			continue
		}
		if !slices.Contains(fns, f.Name) {
			t.Errorf("%s.yaml names no HTTP function of shared/routes", f.Name)
			continue
		}
		for p := range paths {
			// A path parameter stands for one segment; any value routes the same.
			concrete := strings.NewReplacer("{", "", "}", "").Replace(p)
			g, ok := routes.Lookup(concrete)
			if !ok || g.Function != f.Name {
				t.Errorf("%s.yaml documents %s, which routes.Lookup gives to %q", f.Name, p, g.Function)
			}
		}
	}
}

func TestErrorCodeEnumEqualsFaultCodes(t *testing.T) {
	doc := load(t)
	enum := doc.Components.Schemas["Error"].Value.Properties["code"].Value.Enum
	var got []string
	for _, v := range enum {
		got = append(got, fmt.Sprint(v))
	}
	want := faultCodes(t)
	sort.Strings(got)
	sort.Strings(want)
	if !slices.Equal(got, want) {
		t.Errorf("Error.code enum = %v\nfault codes     = %v", got, want)
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// faultCodes reads every Code* constant of the fault package from its source,
// so a code added there and not to the document fails the test.
func faultCodes(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("../fault/*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("fault sources: %v", err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				for i, n := range vs.Names {
					if !strings.HasPrefix(n.Name, "Code") || i >= len(vs.Values) {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, _ := strconv.Unquote(lit.Value)
					out = append(out, v)
				}
			}
		}
	}
	if len(out) < 10 {
		t.Fatalf("found only %d fault codes: %v", len(out), out)
	}
	return out
}

// The decisions the code relies on are written in the document where clients
// read them; these are the ones a client cannot infer from a schema alone.
func TestDocumentStatesTheDecisions(t *testing.T) {
	doc := load(t)
	op := func(path, method string) *openapi3.Operation {
		t.Helper()
		item := doc.Paths.Find(path)
		if item == nil || item.GetOperation(method) == nil {
			t.Fatalf("%s %s is not documented", method, path)
		}
		return item.GetOperation(method)
	}
	// Refresh: cookie plus CSRF header, never a body.
	refresh := op("/api/v1/auth/refresh", "POST")
	if refresh.RequestBody != nil {
		t.Error("POST /auth/refresh documents a request body; the token travels only in the cookie")
	}
	in := map[string]string{}
	for _, p := range refresh.Parameters {
		in[p.Value.Name] = p.Value.In
	}
	if in["service_refresh_token"] != "cookie" || in["x-service-csrf"] != "header" {
		t.Errorf("POST /auth/refresh parameters %v, want the cookie and the CSRF header", in)
	}
	// Recovery codes: the step-up code is documented.
	rc := op("/api/v1/auth/mfa/recovery-codes", "POST")
	if rc.RequestBody == nil || rc.RequestBody.Value.Content.Get("application/json").Schema.Value.Properties["code"] == nil ||
		!strings.Contains(rc.Description, "Step-up") {
		t.Error("POST /auth/mfa/recovery-codes does not document its step-up code")
	}
	// The four edge codes are explained once, in the Error.code description.
	desc := doc.Components.Schemas["Error"].Value.Properties["code"].Value.Description
	for _, c := range []string{"bad_request", "method_not_allowed", "payload_too_large", "unavailable"} {
		if strings.Count(desc, "`"+c+"`") != 1 {
			t.Errorf("Error.code description names %s %d times, want once", c, strings.Count(desc, "`"+c+"`"))
		}
	}
	// Tokens: aud is the string gale-api; the rate limits carry their numbers.
	if !strings.Contains(doc.Info.Description, "`aud` = `gale-api` (a string)") {
		t.Error("info does not state the access token's audience")
	}
	if !strings.Contains(op("/api/v1/auth/login", "POST").Description, "10 per 5 min per IP") {
		t.Error("POST /auth/login does not state its rate limits")
	}
	// Lists: every documented list answers {data, pagination}.
	for _, p := range []string{"/api/v1/users/roles", "/api/v1/roles/{id}/effective-permissions"} {
		s := op(p, "GET").Responses.Status(200).Value.Content.Get("application/json").Schema.Value
		if s.Properties["data"] == nil || s.Properties["pagination"] == nil {
			t.Errorf("GET %s does not answer the {data, pagination} envelope", p)
		}
	}
}

// An unquoted status code (a YAML integer key) still merges into JSON.
func TestUnquotedStatusCodesMerge(t *testing.T) {
	frags, err := api.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := api.DecodeFragment("x", []byte("paths:\n  /api/v1/x:\n    get:\n      responses:\n        200:\n          description: ok\n"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := api.Merge(append(frags, raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := json.Marshal(doc); err != nil {
		t.Fatalf("merged document does not encode: %v", err)
	}
}
