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
