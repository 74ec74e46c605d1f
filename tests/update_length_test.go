package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// MaxUpdateLines is how long a PATCH service method may be: it reads as
// decode, validate into a typed change, diff against the stored record, one
// conditional write (issue 20), each step a named function of its own.
const MaxUpdateLines = 60

// TestUpdateMethodsAreShort fails when a method named Update* or Patch* in
// shared/ (a PATCH service, or a step of one) is longer than MaxUpdateLines
// lines, counted from its func line to its closing brace.
func TestUpdateMethodsAreShort(t *testing.T) {
	root := filepath.Join("..", "shared")
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, ".."+string(filepath.Separator))))
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv == nil || fd.Body == nil || !isUpdateName(fd.Name.Name) {
				continue
			}
			seen++
			name := pkg + "." + recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
			n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
			if n > MaxUpdateLines {
				t.Errorf("%s: %s is %d lines (at most %d): split it into decode, validate into a typed change, diff, write", fset.Position(fd.Pos()), name, n, MaxUpdateLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Fatalf("found %d Update*/Patch* methods under shared/: is the walk looking in the right place?", seen)
	}
}

func isUpdateName(s string) bool {
	return strings.HasPrefix(s, "Update") || strings.HasPrefix(s, "Patch")
}

func recvName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return recvName(x.X)
	case *ast.IndexExpr:
		return recvName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return "?"
}
