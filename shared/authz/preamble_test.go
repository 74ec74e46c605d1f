package authz_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// preamble is the tenant preamble's test spelled by hand: a tenant context,
// unless the caller is the system.
var preamble = regexp.MustCompile(`RequireTenantContext\(\);\s*err != nil && \w+\.Scope != authz\.ScopeSystem`)

// TestTenantPreambleIsOneCall fails on a service that writes the tenant
// preamble itself instead of calling authz.RequireTenant or authz.InTenant
// (issue 33: it was written 12 times in 9 packages, and the copies drifted
// in the order of their checks).
func TestTenantPreambleIsOneCall(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "_npm" || d.Name() == "authz" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		checked++
		if loc := preamble.FindIndex(src); loc != nil {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d: the tenant preamble by hand: call authz.RequireTenant (or authz.InTenant)", path, line)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files: is the walk rooted at shared/?", checked)
	}
}
