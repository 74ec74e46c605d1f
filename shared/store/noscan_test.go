package store_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyBackfillScans holds "no sweep and no route ever scans the table":
// the one Scan of Gale is the backfill (a migration an operator runs once,
// shared/store/backfill.go); the offline, expiry and every other sweep read
// an index or a partition only (shared/sweep). A Scan anywhere else fails.
func TestOnlyBackfillScans(t *testing.T) {
	root := filepath.Join("..", "..")
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// tests/ is test support (fixture.Scan dumps a test's table).
		if d.IsDir() && (d.Name() == "node_modules" || d.Name() == ".git" || d.Name() == "cdk.out" || path == filepath.Join(root, "tests")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(src), "dynamodb.ScanInput") || strings.Contains(string(src), ".DB.Scan(") {
			found = append(found, filepath.ToSlash(path))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"../../shared/store/backfill.go", "../../shared/store/calls.go"}
	if strings.Join(found, ",") != strings.Join(want, ",") {
		t.Fatalf("files that scan the table: %v; only the backfill may (calls.go only asks scans for their capacity)", found)
	}
}
