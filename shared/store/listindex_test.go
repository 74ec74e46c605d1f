package store_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/store"
)

// TestListIndexesMatchTheStack holds the CDK stack's list-index projection
// (infra/cdk is its own module, which imports shared/routes only) to the
// emulator's (store.CreateTable), which uses store.ListAttributes.
func TestListIndexesMatchTheStack(t *testing.T) {
	src, err := os.ReadFile("../../infra/cdk/stack.go")
	if err != nil {
		t.Fatal(err)
	}
	quoted := make([]string, 0, len(store.ListAttributes))
	for _, a := range store.ListAttributes {
		quoted = append(quoted, fmt.Sprintf("%q", a))
	}
	line := "var listAttributes = []string{" + strings.Join(quoted, ", ") + "}"
	if !strings.Contains(string(src), line) {
		t.Fatalf("infra/cdk/stack.go lacks %s", line)
	}
	for _, gsi := range []string{`"GSI3", "GSI4"`, "ProjectionType_INCLUDE"} {
		if !strings.Contains(string(src), gsi) {
			t.Fatalf("infra/cdk/stack.go lacks %s", gsi)
		}
	}
}
