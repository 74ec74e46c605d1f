package main

import (
	"encoding/json"
	"go/ast"
	"strings"

	"github.com/gale-rmm/gale/shared/api"
)

// Index maps each documented path to the tests that build a request to it.
type Index struct {
	// Methods is every documented path's operations (upper-case methods).
	Methods map[string][]string
	// Tests is, per documented path, each test ("file:TestName") and the
	// methods it sends there ("" where the code does not say).
	Tests map[string]map[string]map[string]bool
}

// uses is what one function's body builds: path template -> methods.
type uses map[string]map[string]bool

func (u uses) add(path, method string) {
	if u[path] == nil {
		u[path] = map[string]bool{}
	}
	u[path][method] = true
}

// Build reads the OpenAPI document and the test sources under root.
func Build(root string) (*Index, error) {
	methods, err := documented()
	if err != nil {
		return nil, err
	}
	src, err := load(root)
	if err != nil {
		return nil, err
	}
	idx := &Index{Methods: methods, Tests: map[string]map[string]map[string]bool{}}
	m := newMatcher(methods)
	for _, f := range src.files {
		for _, d := range f.ast.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !f.test || !isTest(fn) || fn.Body == nil {
				continue
			}
			sc := newScope(src, f, fn)
			got := m.scan(sc, fn.Body)
			for _, c := range calledHelpers(src, f, fn) {
				hsc := newScope(src, src.fileOf[c.fn], c.fn)
				hsc.bind(c.fn, c.call, sc)
				for p, ms := range m.scan(hsc, c.fn.Body) {
					for meth := range ms {
						got.add(p, meth)
					}
				}
			}
			for p, ms := range got {
				if idx.Tests[p] == nil {
					idx.Tests[p] = map[string]map[string]bool{}
				}
				idx.Tests[p][f.rel+":"+fn.Name.Name] = ms
			}
		}
	}
	return idx, nil
}

// documented is every path of the served OpenAPI document with its methods.
func documented() (map[string][]string, error) {
	raw, err := api.Document()
	if err != nil {
		return nil, err
	}
	var doc struct {
		Paths map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for p, ops := range doc.Paths {
		for _, m := range []string{"get", "post", "put", "patch", "delete", "head", "options", "trace"} {
			if _, ok := ops[m]; ok {
				out[p] = append(out[p], strings.ToUpper(m))
			}
		}
	}
	return out, nil
}

// helperCall is one call of a test to a helper.
type helperCall struct {
	fn   *ast.FuncDecl
	call *ast.CallExpr
}

// calledHelpers is each call fn makes to a function of the test files of
// in's folder, by name (a function, or a method of any receiver; pkg.F of an
// imported package is not one): one hop, not their callees.
func calledHelpers(src *source, in *file, fn *ast.FuncDecl) []helperCall {
	var out []helperCall
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		c, ok := n.(*ast.CallExpr)
		if !ok {
			return true
		}
		name := ""
		switch f := c.Fun.(type) {
		case *ast.Ident:
			name = f.Name
		case *ast.SelectorExpr:
			if x, ok := f.X.(*ast.Ident); !ok || in.imports[x.Name] == "" {
				name = f.Sel.Name
			}
		}
		for _, h := range src.helpers[in.dir][name] {
			out = append(out, helperCall{h, c})
		}
		return true
	})
	return out
}
