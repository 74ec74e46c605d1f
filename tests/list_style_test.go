package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// memoryLists are the functions of shared/ that page a whole slice in memory
// with httpapi.NewList, each with why it is not a tenant list on tenant.List
// (issue 33 item 2: one list style). A new caller fails: a tenant's rows are
// listed through tenant.List with cursors, or the caller is added here with
// its reason. A listed function that no longer calls NewList fails too, so
// the list stays true.
var memoryLists = map[string]string{
	"webhook/handler.go eventTypes": "the event-type catalogue: fixed, from code (shared/webhook/eventtype), no tenant's rows",
	"sso/handler.go presets":        "the provider presets: fixed, from code, no tenant's rows",
	"passkey/handler.go list":       "the caller's own passkeys (USER#<uid> partition, a handful), not a tenant's",
	"push/handler.go list":          "the caller's own push targets (one row, USER#<uid>/PUSHTARGETS), not a tenant's",
	"deletion/handler.go list":      "system administrators' queue of deletion requests (DELREQS index), no tenant scope",
	"user/handler.go list":          "one tenant's members in e-mail order: the e-mail is on the account, not on the membership row a list index would hold",
	"user/handler.go roles":         "the roles assignable in one scope: the system roles live in code, the custom ones are one owner's handful",
	"role/handler.go list":          "one owner's roles headed by the system roles of its scope (in code); each userCount needs the owner's every membership anyway",
	"role/handler.go effective":     "one role's effective grants, computed in code from the role, no rows",
}

// TestMemoryListsAreListed fails on a function that calls httpapi.NewList
// without a line in memoryLists, and on a line whose function no longer does.
func TestMemoryListsAreListed(t *testing.T) {
	root, err := filepath.Abs("../shared")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	fset := token.NewFileSet()
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if ok && fn.Body != nil && callsNewList(fn.Body) {
				got = append(got, rel+" "+fn.Name.Name)
			}
		}
	})
	for _, k := range got {
		if _, ok := memoryLists[k]; !ok {
			t.Errorf("%s pages in memory with httpapi.NewList: list a tenant's rows with tenant.List (cursors), or add it to memoryLists with why it is not a tenant list", k)
		}
	}
	for k := range memoryLists {
		if !slices.Contains(got, k) {
			t.Errorf("%s no longer calls httpapi.NewList: remove it from memoryLists", k)
		}
	}
}

// callsNewList reports whether body calls httpapi.NewList.
func callsNewList(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := c.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "NewList" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "httpapi" {
					found = true
				}
			}
		}
		return !found
	})
	return found
}
