package main

import (
	"os"
	"strings"
	"testing"
)

// root is the repository, seen from this package's folder.
const root = "../.."

func build(t *testing.T) *Index {
	t.Helper()
	idx, err := Build(root)
	if err != nil {
		t.Fatal(err)
	}
	return idx
}

// TestRouteIndexIsCurrent holds docs/route-tests.md to the test sources: a
// test added, moved or renamed changes the index.
func TestRouteIndexIsCurrent(t *testing.T) {
	want := build(t).Markdown()
	got, err := os.ReadFile(root + "/docs/route-tests.md")
	if err != nil || string(got) != want {
		t.Fatalf("docs/route-tests.md is not what the test sources give (err %v): run make route-tests", err)
	}
}

// untested is each documented operation no test builds a request to, with
// the reason it has none at the HTTP level.
var untested = map[string]string{}

// TestEveryOperationHasATest: each documented operation (method and path) is
// sent by at least one test, or is listed in untested with its reason.
func TestEveryOperationHasATest(t *testing.T) {
	idx := build(t)
	for p, methods := range idx.Methods {
		for _, m := range methods {
			op := m + " " + p
			sent := false
			for _, ms := range idx.Tests[p] {
				sent = sent || ms[m]
			}
			if reason, listed := untested[op]; listed && sent {
				t.Errorf("%s is listed as untested (%s) but a test sends it: drop it from untested", op, reason)
			} else if !listed && !sent {
				t.Errorf("no test sends %s (docs/route-tests.md): add one, or list it in untested with the reason", op)
			}
		}
	}
}

// TestIndexFollowsOneHop: a test is credited with what the helpers of its
// folder build (shared/mfa's w.post adds /api/v1/auth to a suffix and names
// POST), and a path checked in an answer is not a request.
func TestIndexFollowsOneHop(t *testing.T) {
	idx := build(t)
	found := false
	for test, ms := range idx.Tests["/api/v1/auth/mfa/enable"] {
		found = found || strings.HasPrefix(test, "shared/mfa/") && ms["POST"]
	}
	if !found {
		t.Errorf("no shared/mfa test sends POST /api/v1/auth/mfa/enable: %v", idx.Tests["/api/v1/auth/mfa/enable"])
	}
	for test := range idx.Tests["/api/v1/auth/mfa/setup"] {
		if strings.HasPrefix(test, "client/client_test.go:TestErrorsSayWhatToDoNext") {
			t.Errorf("%s only reads /api/v1/auth/mfa/setup in an answer, yet the index lists it", test)
		}
	}
}
