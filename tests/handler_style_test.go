package tests

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// directHandler is a route registered with a handler of its own rather than
// httpapi.Call or httpapi.CallBody.
var directHandler = regexp.MustCompile(`Handle: *h\.[a-zA-Z]+[,}]`)

// ownHandlers are the files whose routes may register a handler of their own,
// with how many: each writes more than one JSON answer (cookies, redirects,
// streamed exports, headers such as Retry-After or Link, a body read twice
// for a signature) or dispatches on its input. The list only shrinks (issue 33
// item 2): a new decode-call-encode handler goes through httpapi.Call or
// CallBody, and a test then fails here if it does not.
var ownHandlers = map[string]int{
	"agent/elevation.go":  1,
	"auditlog/handler.go": 2,
	"health/handler.go":   1,
	"invite/invite.go":    2,
	"mfa/handler.go":      5,
	"pam/actuate.go":      1,
	"pam/handler.go":      2,
	"pam/settings.go":     2,
	"passkey/handler.go":  7,
	"push/handler.go":     1,
	"session/handler.go":  1,
	"signin/handler.go":   11,
	"sso/handler.go":      3,
	"webhook/dlq.go":      4,
	"webhook/handler.go":  2,
}

// TestHandlersAreOneStyle fails on a route registered with a handler of its
// own in a file not listed in ownHandlers, or beyond its count, and on a
// listed count that shrank (so the list stays true).
func TestHandlersAreOneStyle(t *testing.T) {
	root, err := filepath.Abs("../shared")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(directHandler.FindAll(src, -1)); n > 0 {
			got[filepath.ToSlash(rel)] = n
		}
	})
	for rel, n := range got {
		if n > ownHandlers[rel] {
			t.Errorf("%s registers %d handlers of its own (allowed %d): register a decode-call-encode handler with httpapi.Call or httpapi.CallBody", rel, n, ownHandlers[rel])
		}
	}
	for rel, n := range ownHandlers {
		if got[rel] < n && !strings.HasSuffix(rel, "_test.go") {
			t.Errorf("%s registers %d handlers of its own, listed %d: shrink ownHandlers", rel, got[rel], n)
		}
	}
}
