package user_test

import (
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
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
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		if strings.HasPrefix(rel, "user/") || rel == "routes/needs.go" {
			return
		}
		fixture.StringLiterals(t, path, func(pos token.Position, s string) {
			if userLiteral.MatchString(s) {
				t.Errorf("%s: account key literal %q: use user.PK / user.Key", pos, s)
			}
		})
	})
}
