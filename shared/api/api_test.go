package api_test

import (
	"context"
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
