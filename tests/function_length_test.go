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

// MaxFuncLines is how long any function or method in shared/ may be, counted
// from its func line to its closing brace (issue 33): past it a function
// holds several steps that read better as named functions of their own.
const MaxFuncLines = 80

// longMark opens the one comment line, inside a function's doc or directly
// above it, that lets it exceed MaxFuncLines: "// long: <why splitting hurts>".
const longMark = "// long: "

// MaxUpdateLines is how long a PATCH service method may be: it reads as
// decode, validate into a typed change, diff against the stored record, one
// conditional write (issue 20), each step a named function of its own.
const MaxUpdateLines = 60

// TestUpdateMethodsAreShort fails when a method named Update* or Patch* in
// shared/ (a PATCH service, or a step of one) is longer than MaxUpdateLines
// lines, counted from its func line to its closing brace.
func TestUpdateMethodsAreShort(t *testing.T) {
	seen := 0
	walkSharedFuncs(t, func(fset *token.FileSet, pkg string, fd *ast.FuncDecl) {
		if fd.Recv == nil || !isUpdateName(fd.Name.Name) {
			return
		}
		seen++
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > MaxUpdateLines {
			t.Errorf("%s: %s is %d lines (at most %d): split it into decode, validate into a typed change, diff, write", fset.Position(fd.Pos()), funcName(pkg, fd), n, MaxUpdateLines)
		}
	})
	if seen < 10 {
		t.Fatalf("found %d Update*/Patch* methods under shared/: is the walk looking in the right place?", seen)
	}
}

// TestFunctionsAreShort fails when any function or method of a non-test .go
// file under shared/ (vendored JavaScript tooling and testdata skipped) is
// longer than MaxFuncLines lines without a "// long: <reason>" line in or
// directly above its doc; the failure names each offender with its length.
func TestFunctionsAreShort(t *testing.T) {
	seen := 0
	walkSharedFuncs(t, func(fset *token.FileSet, pkg string, fd *ast.FuncDecl) {
		seen++
		n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
		if n > MaxFuncLines && !markedLong(fd) {
			t.Errorf("%s: %s is %d lines (at most %d): split it into named steps, or give it a one-line \"%s<reason>\" in its doc", fset.Position(fd.Pos()), funcName(pkg, fd), n, MaxFuncLines, longMark)
		}
	})
	if seen < 1000 {
		t.Fatalf("found %d functions under shared/: is the walk looking in the right place?", seen)
	}
}

// markedLong reports whether fd's doc (which takes in a comment line directly
// above it, the lines being adjacent) holds a "// long: <reason>" line with a
// reason.
func markedLong(fd *ast.FuncDecl) bool {
	if fd.Doc == nil {
		return false
	}
	for _, c := range fd.Doc.List {
		if strings.HasPrefix(c.Text, longMark) && strings.TrimSpace(strings.TrimPrefix(c.Text, longMark)) != "" {
			return true
		}
	}
	return false
}

// walkSharedFuncs calls visit for every function with a body in the non-test
// .go files under shared/.
func walkSharedFuncs(t *testing.T, visit func(fset *token.FileSet, pkg string, fd *ast.FuncDecl)) {
	t.Helper()
	root := filepath.Join("..", "shared")
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == "_npm" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		pkg := filepath.ToSlash(filepath.Dir(strings.TrimPrefix(p, ".."+string(filepath.Separator))))
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				visit(fset, pkg, fd)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func funcName(pkg string, fd *ast.FuncDecl) string {
	if fd.Recv == nil {
		return pkg + "." + fd.Name.Name
	}
	return pkg + "." + recvName(fd.Recv.List[0].Type) + "." + fd.Name.Name
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

// TestLongMark holds what counts as a "// long:" exemption: a line with a
// reason, in a function's doc or directly above it; not an empty reason, not
// a line a blank line away, not a mark inside the body.
func TestLongMark(t *testing.T) {
	src := `package p

// long: a table of cases reads best whole
func inDocAlone() {}

// long: the steps share one lock
// aboveDoc does a thing.
func aboveDoc() {}

// insideDoc does a thing.
// long: one switch over the wire's versions
func insideDoc() {}

// long:
func emptyReason() {}

// long: a blank line away

func apart() {}

// noMark does a thing.
func noMark() {
	// long: inside the body
}
`
	want := map[string]bool{"inDocAlone": true, "aboveDoc": true, "insideDoc": true, "emptyReason": false, "apart": false, "noMark": false}
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range f.Decls {
		fd := d.(*ast.FuncDecl)
		if got := markedLong(fd); got != want[fd.Name.Name] {
			t.Errorf("markedLong(%s) = %v, want %v", fd.Name.Name, got, want[fd.Name.Name])
		}
	}
}
