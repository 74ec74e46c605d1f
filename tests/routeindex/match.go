package main

import (
	"go/ast"
	"go/token"
	"slices"
	"strings"
)

// matcher matches built strings against the documented path templates.
type matcher struct {
	paths []string
	segs  [][]string
}

func newMatcher(methods map[string][]string) *matcher {
	m := &matcher{}
	for p := range methods {
		m.paths = append(m.paths, p)
	}
	slices.Sort(m.paths)
	for _, p := range m.paths {
		m.segs = append(m.segs, strings.Split(p[1:], "/"))
	}
	return m
}

// match is the template s names: s starts with "/" (after a scheme and host,
// or an unsettled base URL, which are dropped) and its query is ignored;
// {x} takes one non-empty segment, and of two templates that fit, the one
// whose first difference is a literal segment wins (/users/me over
// /users/{id}).
func (m *matcher) match(s string) (string, bool) {
	if i := strings.Index(s, "://"); i >= 0 && strings.HasPrefix(s, "http") {
		s = s[i+3:]
		s = s[max(strings.IndexByte(s, '/'), 0):]
	}
	s = strings.TrimPrefix(s, param)
	if !strings.HasPrefix(s, "/") {
		return "", false
	}
	if i := strings.IndexAny(s, "?#"); i >= 0 {
		s = s[:i]
	}
	segs := strings.Split(s[1:], "/")
	best, bestScore := -1, ""
	for i, t := range m.segs {
		if len(t) != len(segs) {
			continue
		}
		score, ok := fit(t, segs)
		if ok && score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return "", false
	}
	return m.paths[best], true
}

// fit reports whether segs fill template t, with a score that orders
// literal matches before parameters segment by segment.
func fit(t, segs []string) (string, bool) {
	score := make([]byte, len(t))
	for i, ts := range t {
		switch {
		case strings.HasPrefix(ts, "{"):
			if segs[i] == "" {
				return "", false
			}
			score[i] = '0'
		case ts == segs[i]:
			score[i] = '1'
		default:
			return "", false
		}
	}
	return string(score), true
}

// bare are templates so short that a string naming them is as often a prefix
// or a separator as a request: they count only with a method beside them.
var bare = map[string]bool{"/": true, "/api/v1": true}

// scan is what body builds: each string it evaluates to a documented path,
// with the method the same call or composite literal names.
func (m *matcher) scan(sc *scope, body ast.Node) uses {
	got := uses{}
	var stack []ast.Node
	ast.Inspect(body, func(n ast.Node) bool {
		if n == nil {
			stack = stack[:len(stack)-1]
			return false
		}
		stack = append(stack, n)
		e, whole := candidate(sc, n, stack)
		if e == nil {
			return true
		}
		for _, s := range sc.alternatives(e) {
			if p, ok := m.match(s); ok && !compared(stack) {
				if meth := sc.method(stack); meth != "" || !bare[p] {
					got.add(p, meth)
				}
			}
		}
		if whole {
			stack = stack[:len(stack)-1] // Inspect does not call back for a node it does not enter
		}
		return !whole
	})
	return got
}

// compared reports whether the innermost node of stack is an operand of a
// comparison, a map key or an argument of a strings/bytes function: a path
// an answer is checked for, not one a request goes to.
func compared(stack []ast.Node) bool {
	if len(stack) < 2 {
		return false
	}
	switch p := stack[len(stack)-2].(type) {
	case *ast.BinaryExpr:
		return p.Op == token.EQL || p.Op == token.NEQ
	case *ast.IndexExpr:
		return true
	case *ast.CallExpr:
		if sel, ok := p.Fun.(*ast.SelectorExpr); ok {
			if x, ok := sel.X.(*ast.Ident); ok {
				return x.Name == "strings" || x.Name == "bytes"
			}
		}
	}
	return false
}

// candidate is n when it may build a string: a literal, a concatenation, a
// fmt.Sprintf, a call of a function that returns one, or a name (not a field or a selected member). whole says its
// parts are not candidates of their own.
func candidate(sc *scope, n ast.Node, stack []ast.Node) (ast.Expr, bool) {
	switch n := n.(type) {
	case *ast.BasicLit:
		if n.Kind == token.STRING {
			return n, true
		}
	case *ast.BinaryExpr:
		if n.Op == token.ADD {
			return n, true
		}
	case *ast.CallExpr:
		if isSprintf(n) {
			return n, true
		}
		if _, ok := n.Fun.(*ast.Ident); ok {
			return n, false // a path-returning function (beatPath(id)); its arguments are candidates too
		}
	case *ast.SelectorExpr:
		if x, ok := n.X.(*ast.Ident); ok && sc.in.imports[x.Name] != "" {
			return n, true
		}
	case *ast.Ident:
		if len(stack) > 1 {
			switch p := stack[len(stack)-2].(type) {
			case *ast.SelectorExpr:
				if p.Sel == n {
					return nil, false
				}
			case *ast.KeyValueExpr:
				if p.Key == n {
					return nil, false
				}
			}
		}
		return n, true
	}
	return nil, false
}

// method is the HTTP method named beside the innermost node of stack: an
// argument of the same call or an element of the same composite literal
// (a table row), as "POST" or http.MethodPost; "" when none is.
func (sc *scope) method(stack []ast.Node) string {
	i := len(stack) - 2
	if i >= 0 {
		if _, ok := stack[i].(*ast.KeyValueExpr); ok {
			i--
		}
	}
	if i < 0 {
		return ""
	}
	var items []ast.Expr
	switch c := stack[i].(type) {
	case *ast.CallExpr:
		if m := namedMethod(c.Fun); m != "" {
			return m
		}
		items = c.Args
	case *ast.CompositeLit:
		items = c.Elts
	}
	for _, it := range items {
		if kv, ok := it.(*ast.KeyValueExpr); ok {
			it = kv.Value
		}
		if s := sc.methodName(it); s != "" {
			return s
		}
	}
	return ""
}

// namedMethod is the method a helper's name says (post(t, path, body) or
// w.patch(...)), "" for any other name.
func namedMethod(fun ast.Expr) string {
	name := ""
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
	}
	if name == "del" {
		return "DELETE"
	}
	if m := strings.ToUpper(name); slices.Contains(httpMethods, m) && name != m {
		return m
	}
	return ""
}

var httpMethods = []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}

func (sc *scope) methodName(e ast.Expr) string {
	if sel, ok := e.(*ast.SelectorExpr); ok {
		if x, ok := sel.X.(*ast.Ident); ok && x.Name == "http" && strings.HasPrefix(sel.Sel.Name, "Method") {
			return strings.ToUpper(strings.TrimPrefix(sel.Sel.Name, "Method"))
		}
		return ""
	}
	if s := sc.eval(e, 0); slices.Contains(httpMethods, s) {
		return s
	}
	return ""
}
