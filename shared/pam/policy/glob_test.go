package policy

import (
	"regexp"
	"strings"
	"testing"
)

func TestGlob(t *testing.T) {
	long := strings.Repeat("a*", 40) // a middle of 80 tokens: the RE2 fallback
	cases := []struct {
		pat, path string
		want      bool
	}{
		{`C:\Windows\**\cmd.exe`, `c:\windows\cmd.exe`, true},
		{`C:\Windows\**\cmd.exe`, `c:\windows\system32\cmd.exe`, true},
		{`C:\Windows\**\cmd.exe`, `c:\windows\a\b\c\cmd.exe`, true},
		{`C:\Windows\**\cmd.exe`, `c:\windowscmd.exe`, false},
		{`C:\Windows\**\**\cmd.exe`, `c:\windows\cmd.exe`, true},
		{`C:\Windows\*\cmd.exe`, `c:\windows\a\b\cmd.exe`, false},
		{`C:\Windows\*\cmd.exe`, `c:\windows\a\cmd.exe`, true},
		{`C:\Windows\*\cmd.exe`, `c:\windows\\cmd.exe`, true},
		{`C:\Prog**.exe`, `c:\program files\x\y.exe`, true},
		{`C:\Prog***.exe`, `c:\program files\x\y.exe`, true},
		{`C:\a?b`, `c:\a?b`, true},
		{`C:\a?b`, `c:\axb`, false},
		{`C:\[ab]`, `c:\[ab]`, true},
		{`C:\[ab]`, `c:\a`, false},
		{`a*a`, `a`, false},
		{`a*a`, `aa`, true},
		{`*`, ``, true},
		{`*`, `a/b`, false},
		{`**`, `a/b`, true},
		{`*/*`, `a/b`, true},
		{`*/*`, `a/b/c`, false},
		{`/**/`, `/`, true},
		{`/**/`, `/a/b/`, true},
		{`x/**`, `x/`, true},
		{`x/**`, `x`, false},
		{`**/x`, `x`, false},
		{`**/x`, `/x`, true},
		{`C:\Users\*\AppData\**\*.exe`, `C:\Users\bob\AppData\Local\Temp\x.exe`, true},
		{`C:\Users\*\AppData\**\*.exe`, `C:\Users\bob\AppData\x.exe`, true},
		{`C:\Users\*\AppData\**\*.exe`, `C:\Users\bob\x\AppData\x.exe`, false},
		{`C:\Users\*\AppData\**\*.exe`, `C:\Users\bob\AppData\Local\x.exe.txt`, false},
		{"K:\\KELVIN", "\u212a:/kelvin", true}, // Kelvin sign folds to k
		{"C:\\ſ*", "c:/s.exe", true},           // long s folds to s
		{`C:\Ünïcode\*`, `c:\üNÏCODE\x`, true},
		{long, strings.Repeat("a", 40), true},
		{long, strings.Repeat("ab", 40), true},
		{long, strings.Repeat("a", 39), false},
		{long + "/x", strings.Repeat("a", 40) + "/x", true},
		{`C:\` + long + `\**\*.exe`, `c:\` + strings.Repeat("a", 40) + `\x.exe`, true},
		{`C:\` + long + `\**\*.exe`, `c:\` + strings.Repeat("a", 40) + `\y\z\x.exe`, true},
		{`C:\` + long + `\**\*.exe`, `c:\` + strings.Repeat("a", 40) + `x.exe`, false},
		{long, strings.Repeat("a", 20) + "/" + strings.Repeat("a", 20), false},
	}
	for _, c := range cases {
		g, err := compileGlob(c.pat)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", c.pat, err)
		}
		if got := g.match(normPath(c.path)); got != c.want {
			t.Errorf("glob %q on %q = %v, want %v", c.pat, c.path, got, c.want)
		}
		if got := oracle(t, c.pat).MatchString(normPath(c.path)); got != c.want {
			t.Errorf("oracle %q on %q = %v, want %v", c.pat, c.path, got, c.want)
		}
	}
	if g, _ := compileGlob(long); g.re == nil {
		t.Error("a middle of 80 tokens should use the RE2 fallback")
	}
}

// oracle translates a glob to RE2 independently of tokenize: runs of two or
// more stars between slashes are `(?:.*/)?` (eating the slash after), other
// runs `.*`, one star `[^/]*`.
func oracle(t testing.TB, pattern string) *regexp.Regexp {
	p := normPath(pattern)
	var b strings.Builder
	b.WriteString(`^(?s:`)
	for i := 0; i < len(p); {
		if p[i] != '*' {
			j := i
			for j < len(p) && p[j] != '*' {
				j++
			}
			b.WriteString(regexp.QuoteMeta(p[i:j]))
			i = j
			continue
		}
		j := i
		for j < len(p) && p[j] == '*' {
			j++
		}
		switch {
		case j-i == 1:
			b.WriteString(`[^/]*`)
			i = j
		case i > 0 && p[i-1] == '/' && j < len(p) && p[j] == '/':
			b.WriteString(`(?:.*/)?`)
			i = j + 1
		default:
			b.WriteString(`.*`)
			i = j
		}
	}
	b.WriteString(`)$`)
	re, err := regexp.Compile(b.String())
	if err != nil {
		t.Fatalf("oracle(%q): %v", pattern, err)
	}
	return re
}

// FuzzGlob holds the bit-parallel matcher to the RE2 oracle.
func FuzzGlob(f *testing.F) {
	for _, s := range [][2]string{
		{`C:\Windows\**\cmd.exe`, `c:\windows\system32\cmd.exe`},
		{`C:\Program Files\*\App\*.exe`, `C:\Program Files\Vendor\App\setup.exe`},
		{`a/**/**/b`, `a/b`},
		{`**`, ``},
		{`*a*b*c*`, `xaybzc`},
		{`/**/*/`, `//x/`},
		{`x?y[z]`, `x?y[z]`},
		{"\u212a*", "k"},
		{strings.Repeat("a*", 40), strings.Repeat("ab", 40)},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if len(pattern) > 300 || len(path) > 600 {
			return
		}
		g, err := compileGlob(pattern)
		if err != nil {
			t.Fatalf("compileGlob(%q): %v", pattern, err)
		}
		s := normPath(path)
		if got, want := g.match(s), oracle(t, pattern).MatchString(s); got != want {
			t.Fatalf("glob %q on %q = %v, oracle %v", pattern, path, got, want)
		}
	})
}
