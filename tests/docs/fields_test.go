package docs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/filter"
)

// The saved-filter section of docs/features.md renders the filter engine's
// catalogue (what GET /api/v1/filters/fields answers) between these markers.
const (
	fieldsBegin = "<!-- filter-fields: generated from shared/filter by tests/docs TestFilterFieldsTableIsCurrent -->"
	fieldsEnd   = "<!-- /filter-fields -->"
)

// fieldsTable is the markdown table of the catalogue, custom fields last.
func fieldsTable() string {
	var b strings.Builder
	b.WriteString("| Field | Type | Operators | Values |\n|---|---|---|---|\n")
	for _, f := range append(filter.Fields(), filter.Custom()) {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.Key, f.Type, strings.Join(f.Operators, ", "), strings.Join(f.Values, ", "))
	}
	return b.String()
}

// The table in docs/features.md is the catalogue's: a field, operator or enum
// value added to shared/filter and not to the page fails here.
// GALE_UPDATE_DOCS=1 rewrites the table.
func TestFilterFieldsTableIsCurrent(t *testing.T) {
	path := filepath.Join(repoRoot(t), "docs", "features.md")
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	head, rest, ok := bytes.Cut(page, []byte(fieldsBegin+"\n"))
	old, tail, ok2 := bytes.Cut(rest, []byte(fieldsEnd))
	if !ok || !ok2 {
		t.Fatalf("docs/features.md lacks the markers %q ... %q", fieldsBegin, fieldsEnd)
	}
	want := fieldsTable()
	if string(old) == want {
		return
	}
	if os.Getenv("GALE_UPDATE_DOCS") == "1" {
		out := append(append(append(head, fieldsBegin+"\n"...), want...), append([]byte(fieldsEnd), tail...)...)
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("docs/features.md: filter fields table rewritten")
		return
	}
	t.Errorf("docs/features.md's filter fields table is stale (GALE_UPDATE_DOCS=1 go test ./tests/docs -run TestFilterFieldsTableIsCurrent); want:\n%s", want)
}
