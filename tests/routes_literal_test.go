package tests

import (
	"encoding/json"
	"go/ast"
	"go/token"
	"strconv"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
)

// routeLiterals parses every non-test Go file under shared/ and returns, for each
// httpapi.Route composite literal, its position and its Path field (the
// expression's source when it is not a string literal, with ok false).
func routeLiterals(t *testing.T) (paths map[string]string, bad []string) {
	t.Helper()
	paths = map[string]string{}
	walkSharedGo(t, 0, func(fset *token.FileSet, _ string, f *ast.File) {
		inHTTPAPI := f.Name.Name == "httpapi"
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.CompositeLit)
			if !ok || !isRouteType(lit.Type, inHTTPAPI) {
				return true
			}
			pos := fset.Position(lit.Pos()).String()
			for _, e := range lit.Elts {
				kv, ok := e.(*ast.KeyValueExpr)
				if !ok {
					bad = append(bad, pos+": unkeyed httpapi.Route literal")
					continue
				}
				if k, ok := kv.Key.(*ast.Ident); !ok || k.Name != "Path" {
					continue
				}
				bl, ok := kv.Value.(*ast.BasicLit)
				if !ok || bl.Kind != token.STRING {
					bad = append(bad, pos+": Path is not a string literal")
					continue
				}
				s, _ := strconv.Unquote(bl.Value)
				paths[pos] = s
			}
			return true
		})
	})
	return paths, bad
}

func isRouteType(e ast.Expr, inHTTPAPI bool) bool {
	switch x := e.(type) {
	case *ast.SelectorExpr:
		id, ok := x.X.(*ast.Ident)
		return ok && id.Name == "httpapi" && x.Sel.Name == "Route"
	case *ast.Ident:
		return inHTTPAPI && x.Name == "Route"
	}
	return false
}

// TestRoutePathsAreLiterals holds every route registration to a literal path,
// written as in the OpenAPI document (parameter names included), so that a path copied from the
// document (or a log line) greps to the line registering it, and that line
// names its handler method.
func TestRoutePathsAreLiterals(t *testing.T) {
	paths, bad := routeLiterals(t)
	for _, b := range bad {
		t.Error(b)
	}
	if len(paths) < 100 {
		t.Fatalf("found %d route literals; the walk of shared/ went wrong", len(paths))
	}
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	for pos, p := range paths {
		// Verbatim, parameter names included: the document's path is the grep.
		// "/{$}" is ServeMux for the document's "/" alone (GET /, shared/health).
		if _, ok := doc.Paths[strings.TrimSuffix(p, "{$}")]; !ok || strings.HasSuffix(p, "/{$}") && p != "/{$}" {
			t.Errorf("%s: path %q is not written as in the OpenAPI document", pos, p)
		}
	}
}
