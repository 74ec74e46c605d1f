package eventtype_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/gale-rmm/gale/shared/webhook/eventtype"
	"github.com/gale-rmm/gale/tests/fixture"
)

// constants maps each string constant of the eventtype package to its value.
func constants(t *testing.T) map[string]string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "eventtype.go", nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					out[name.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	return out
}

// raisedIn returns the eventtype constants a file names when it calls
// event.New (a type argument held in a variable is assigned from them in the
// same file), and the positions of event.New calls whose type is neither a
// constant of the catalogue nor a variable: spelled some other way, the
// source cannot tell which type it raises.
func raisedIn(t *testing.T, path string) (names []string, unreadable []string) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	calls := false
	var refs []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "eventtype" {
				refs = append(refs, x.Sel.Name)
			}
		case *ast.CallExpr:
			sel, ok := x.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "New" {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); !ok || id.Name != "event" || len(x.Args) < 2 {
				return true
			}
			calls = true
			switch a := x.Args[1].(type) {
			case *ast.Ident:
			case *ast.SelectorExpr:
				if id, ok := a.X.(*ast.Ident); ok && id.Name == "eventtype" {
					break
				}
				unreadable = append(unreadable, fset.Position(x.Pos()).String())
			default:
				unreadable = append(unreadable, fset.Position(x.Pos()).String())
			}
		}
		return true
	})
	if !calls {
		return nil, unreadable
	}
	return refs, unreadable
}

// The catalogue's raised flags are what the source raises: a type is raised
// when a file that calls event.New names its constant. A new raiser that
// forgets to flip the flag, or a flag set by hand for a type nothing raises,
// fails here.
func TestRaisedMatchesTheSource(t *testing.T) {
	values := constants(t)
	root, err := filepath.Abs("../..") // shared/
	if err != nil {
		t.Fatal(err)
	}
	raised := map[string][]string{}
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		if filepath.Dir(rel) == "event" || filepath.Dir(rel) == "webhook/eventtype" {
			return
		}
		names, bad := raisedIn(t, path)
		for _, pos := range bad {
			t.Errorf("%s: event.New with a type that is not an eventtype constant", pos)
		}
		for _, n := range names {
			if v, ok := values[n]; ok {
				raised[v] = append(raised[v], rel)
			}
		}
	})
	var notRaised int
	for _, typ := range eventtype.Types() {
		where, ok := raised[typ.Name]
		switch {
		case typ.Raised && !ok:
			t.Errorf("%s is flagged raised, and no file calling event.New names it", typ.Name)
		case !typ.Raised && ok:
			t.Errorf("%s is flagged not raised, and %v raise it", typ.Name, slices.Compact(where))
		case !typ.Raised:
			notRaised++
		}
	}
	t.Logf("%d of %d types are not raised yet", notRaised, len(eventtype.Types()))
}
