package valid

import (
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
)

func TestNameRefusesControlCharacters(t *testing.T) {
	for _, s := range []string{"a\x00b", "line\nbreak", "esc\x1b[31m", "tab\tname", "c1\u0085"} {
		f := fault.Fields{}
		Name(f, "name", s, 255)
		if len(f["name"]) == 0 {
			t.Errorf("%q accepted", s)
		}
	}
	f := fault.Fields{}
	Name(f, "name", "Zoë O'Brien-Smith", 255)
	if len(f) != 0 {
		t.Fatalf("plain name refused: %v", f)
	}
}

// Issue 35: an enum error lists the allowed values, so the answer alone
// tells the client what to send.
func TestOneOfListsTheAllowedValues(t *testing.T) {
	f := fault.Fields{}
	OneOf(f, "kind", "b", "a", "c")
	if got := f["kind"]; len(got) != 1 || got[0] != "must be one of: a, c" {
		t.Fatalf("message %q, want %q", got, "must be one of: a, c")
	}
	f = fault.Fields{}
	OneOf(f, "kind", "c", "a", "c")
	if len(f) != 0 {
		t.Fatalf("allowed value refused: %v", f)
	}
}
