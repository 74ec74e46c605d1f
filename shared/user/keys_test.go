package user_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// userLiteral matches the account partition spelled in a string.
var userLiteral = regexp.MustCompile(`(^|#)USER#`)

// TestUserKeysOnlyThroughUser fails on the account partition (USER#<id>)
// spelled outside this package: sessions, second factors, passkeys, resets,
// push targets and deletion requests key their rows with user.PK and
// user.Key, so the partition's layout has one owner (issue 33). The IAM
// policy's key prefixes (shared/routes) name partitions, not rows.
func TestUserKeysOnlyThroughUser(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"user/", "routes/needs.go"}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			if d.Name() == "_npm" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		for _, a := range allowed {
			if strings.HasPrefix(rel, a) {
				return nil
			}
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			if s, err := strconv.Unquote(lit.Value); err == nil && userLiteral.MatchString(s) {
				t.Errorf("%s: account key literal %s: use user.PK / user.Key", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is the walk rooted at shared/?", checked)
	}
}
