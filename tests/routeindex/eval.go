package main

import (
	"go/ast"
	"go/token"
	"strconv"
	"strings"
)

// param stands for a part of a string the sources do not settle (a path
// parameter, when it sits in a path).
const param = "\x00"

// scope resolves identifiers inside one function: its locals assigned once,
// then its package's globals, then those of the packages its file imports.
type scope struct {
	src    *source
	in     *file
	locals map[string]ast.Expr         // nil for a name assigned more than once
	counts map[string]int              // how often each local is assigned (a parameter once)
	ranges map[string][]*ast.RangeStmt // a loop's value over a literal list -> the loops
}

// newScope collects the locals of body that are assigned exactly once.
func newScope(src *source, in *file, body ast.Node) *scope {
	sc := &scope{src: src, in: in, locals: map[string]ast.Expr{}, counts: map[string]int{}, ranges: map[string][]*ast.RangeStmt{}}
	set := func(n ast.Expr, v ast.Expr) {
		id, ok := n.(*ast.Ident)
		if !ok || id.Name == "_" {
			return
		}
		if sc.counts[id.Name]++; sc.counts[id.Name] > 1 {
			v = nil
		}
		sc.locals[id.Name] = v
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for i, l := range n.Lhs {
				var v ast.Expr
				if len(n.Lhs) == len(n.Rhs) && n.Tok != token.ADD_ASSIGN {
					v = n.Rhs[i]
				}
				set(l, v)
			}
		case *ast.ValueSpec:
			for i, l := range n.Names {
				var v ast.Expr
				if len(n.Names) == len(n.Values) {
					v = n.Values[i]
				}
				set(l, v)
			}
		case *ast.RangeStmt:
			set(n.Key, nil)
			set(n.Value, nil)
			if id, ok := n.Value.(*ast.Ident); ok {
				if _, ok := n.X.(*ast.CompositeLit); ok {
					sc.ranges[id.Name] = append(sc.ranges[id.Name], n)
				}
			}
		case *ast.FuncType:
			for _, fl := range []*ast.FieldList{n.Params, n.Results} {
				for _, f := range fieldsOf(fl) {
					for _, id := range f.Names {
						set(id, nil)
					}
				}
			}
		}
		return true
	})
	return sc
}

// bind gives fn's parameters the strings a call's arguments build in the
// caller's scope, where the parameter is not assigned again.
func (sc *scope) bind(fn *ast.FuncDecl, call *ast.CallExpr, caller *scope) {
	i := 0
	for _, f := range fieldsOf(fn.Type.Params) {
		if _, variadic := f.Type.(*ast.Ellipsis); variadic {
			return
		}
		for _, id := range f.Names {
			if i < len(call.Args) && sc.counts[id.Name] == 1 {
				sc.locals[id.Name] = &ast.BasicLit{Kind: token.STRING, Value: strconv.Quote(caller.eval(call.Args[i], 0))}
			}
			i++
		}
	}
}

func fieldsOf(fl *ast.FieldList) []*ast.Field {
	if fl == nil {
		return nil
	}
	return fl.List
}

// alternatives is each string e builds: one, or one per element when e names
// the value of a loop over a literal list (for _, p := range []string{a, b}).
func (sc *scope) alternatives(e ast.Expr) []string {
	var loop string
	var elts []ast.Expr
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && loop == "" {
			for _, r := range sc.ranges[id.Name] {
				if r.Body.Pos() <= id.Pos() && id.End() <= r.Body.End() {
					loop, elts = id.Name, r.X.(*ast.CompositeLit).Elts
				}
			}
		}
		return loop == ""
	})
	if loop == "" {
		return []string{sc.eval(e, 0)}
	}
	var out []string
	saved := sc.locals[loop]
	for _, el := range elts {
		sc.locals[loop] = el
		out = append(out, sc.eval(e, 0))
	}
	sc.locals[loop] = saved
	return out
}

// eval is the string e builds, with param for each part it cannot settle.
func (sc *scope) eval(e ast.Expr, depth int) string {
	if depth > 8 {
		return param
	}
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind == token.STRING {
			if s, err := strconv.Unquote(e.Value); err == nil {
				return s
			}
		}
	case *ast.ParenExpr:
		return sc.eval(e.X, depth+1)
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return sc.eval(e.X, depth+1) + sc.eval(e.Y, depth+1)
		}
	case *ast.Ident:
		if v, ok := sc.locals[e.Name]; ok {
			if v == nil {
				return param
			}
			return sc.eval(v, depth+1)
		}
		return sc.global(sc.in.dir, e.Name, depth)
	case *ast.SelectorExpr:
		if x, ok := e.X.(*ast.Ident); ok {
			if dir, ok := sc.in.imports[x.Name]; ok {
				return sc.global(dir, e.Sel.Name, depth)
			}
		}
	case *ast.CallExpr:
		if isSprintf(e) && len(e.Args) > 0 {
			return sc.sprintf(sc.eval(e.Args[0], depth+1), e.Args[1:], depth)
		}
		if id, ok := e.Fun.(*ast.Ident); ok {
			return sc.returned(id.Name, e, depth)
		}
	}
	return param
}

// returned is what a call to a function of the folder's test files builds
// when its body is one return of one string (beatPath(id) returns
// "/api/v1/agents/" + id + "/heartbeat").
func (sc *scope) returned(name string, call *ast.CallExpr, depth int) string {
	for _, fn := range sc.src.helpers[sc.in.dir][name] {
		if len(fn.Body.List) != 1 {
			continue
		}
		if r, ok := fn.Body.List[0].(*ast.ReturnStmt); ok && len(r.Results) == 1 {
			callee := newScope(sc.src, sc.src.fileOf[fn], fn)
			callee.bind(fn, call, sc)
			return callee.eval(r.Results[0], depth+1)
		}
	}
	return param
}

func (sc *scope) global(dir, name string, depth int) string {
	g, ok := sc.src.globals[dir][name]
	if !ok {
		return param
	}
	return (&scope{src: sc.src, in: g.in}).eval(g.expr, depth+1)
}

func isSprintf(c *ast.CallExpr) bool {
	sel, ok := c.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Sprintf" {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "fmt"
}

// sprintf fills format's verbs: %s and %v with the argument's string where
// the sources settle it, any other verb with a parameter.
func (sc *scope) sprintf(format string, args []ast.Expr, depth int) string {
	var b strings.Builder
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		switch verb := format[j]; {
		case verb == '%':
			b.WriteByte('%')
		case (verb == 's' || verb == 'v') && len(args) > 0:
			b.WriteString(sc.eval(args[0], depth+1))
			args = args[1:]
		default:
			b.WriteString(param)
			if len(args) > 0 {
				args = args[1:]
			}
		}
		i = j
	}
	return b.String()
}
