package tenantkey_test

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

// tenantLiteral matches a tenant partition spelled in a string: ORG# or
// PARTNER# at the start or after another key part's #.
var tenantLiteral = regexp.MustCompile(`(^|#)(ORG|PARTNER)#`)

// TestNoTenantKeyLiterals fails on a tenant partition spelled outside the
// store (and its tenantkey constants) and the tenant package: every other
// package addresses tenant rows through store.OrgPK, store.PartnerPK and
// store.TenantPK, so a key cannot lose its tenant by a typo.
func TestNoTenantKeyLiterals(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"shared/store/", "shared/tenant/"}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "bin", "cdk.out", "dist", "testdata":
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
			s, err := strconv.Unquote(lit.Value)
			if err == nil && tenantLiteral.MatchString(s) {
				t.Errorf("%s: tenant key literal %s: use store.OrgPK / store.PartnerPK / store.TenantPK",
					fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is the walk rooted at the module?", checked)
	}
}
