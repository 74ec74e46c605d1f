package signin

import (
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
)

// TestIsCommonFindsEveryListedPassword holds the in-place binary search to the
// list: every line is found (in any letter case), and near misses are not.
func TestIsCommonFindsEveryListedPassword(t *testing.T) {
	lines := strings.Split(strings.TrimSuffix(commonList, "\n"), "\n")
	if len(lines) != 10_000 {
		t.Fatalf("the list holds %d passwords, want 10,000", len(lines))
	}
	for i, l := range lines {
		if i > 0 && lines[i-1] >= l {
			t.Fatalf("line %d %q is not after %q: the list must be sorted and unique", i+1, l, lines[i-1])
		}
		if !isCommon(l) || !isCommon(strings.ToUpper(l)) {
			t.Fatalf("isCommon(%q) = false for a listed password", l)
		}
		if isCommon(l+"\x00") || isCommon(l[:len(l)-1]+"~") {
			t.Fatalf("isCommon matched a near miss of %q", l)
		}
	}
	for _, pw := range []string{"", "correct horse battery staple", "\n", "zzzzzzzzzzzzzzzzzzzz"} {
		if isCommon(pw) {
			t.Fatalf("isCommon(%q) = true", pw)
		}
	}
}

func TestCheckPasswordRefusesCommon(t *testing.T) {
	for _, pw := range []string{"password1", "Iloveyou", "qwertyuiop", "baseball", "trustno1"} {
		f := fault.Fields{}
		checkPassword(f, "password", pw)
		if got := f["password"]; len(got) != 1 || !strings.Contains(got[0], "too common") {
			t.Fatalf("CheckPassword(%q): %v, want the too-common refusal", pw, got)
		}
	}
}

func BenchmarkIsCommon(b *testing.B) {
	for b.Loop() {
		isCommon("Tr0ub4dor&3-not-listed")
	}
}
