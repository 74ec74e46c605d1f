package api_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/gale-rmm/gale/shared/api"
)

// served is the assembled document as the health function serves it.
func served(t *testing.T) map[string]any {
	t.Helper()
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// eachOperation calls f with every operation of the document's paths.
func eachOperation(doc map[string]any, f func(path, method string, op map[string]any)) {
	paths, _ := doc["paths"].(map[string]any)
	for p, item := range paths {
		ops, _ := item.(map[string]any)
		for m, v := range ops {
			if op, ok := v.(map[string]any); ok {
				f(p, m, op)
			}
		}
	}
}

// tagWord is one word of a tag: a capitalised word or an acronym.
var tagWord = regexp.MustCompile(`^([A-Z][a-z]+|[A-Z]{2,})$`)

// The reference page groups operations by tag, in the order of the top-level
// tags list: that list is alphabetical (ignoring case), every name is Title
// Case (acronyms in capitals), and it names exactly the tags the operations
// use, so no group appears unordered after the list or empty.
func TestTagsAreListedOrderedAndNamedOneWay(t *testing.T) {
	doc := served(t)
	list, _ := doc["tags"].([]any)
	var names []string
	for _, v := range list {
		tag, _ := v.(map[string]any)
		name, _ := tag["name"].(string)
		if desc, _ := tag["description"].(string); desc == "" {
			t.Errorf("tag %q has no description", name)
		}
		for _, w := range strings.Split(name, " ") {
			if !tagWord.MatchString(w) {
				t.Errorf("tag %q: word %q is neither Title Case nor an acronym", name, w)
			}
		}
		names = append(names, name)
	}
	if len(names) < 10 {
		t.Fatalf("the document lists %d tags: %v", len(names), names)
	}
	if !slices.IsSortedFunc(names, func(a, b string) int { return strings.Compare(strings.ToLower(a), strings.ToLower(b)) }) {
		t.Errorf("tags out of order (alphabetical, ignoring case): %v", names)
	}
	used := map[string]bool{}
	eachOperation(doc, func(p, m string, op map[string]any) {
		tags, _ := op["tags"].([]any)
		if len(tags) == 0 {
			t.Errorf("%s %s has no tag", m, p)
		}
		for _, v := range tags {
			name := fmt.Sprint(v)
			used[name] = true
			if !slices.Contains(names, name) {
				t.Errorf("%s %s: tag %q is not in the document's tags list", m, p, name)
			}
		}
	})
	for i, name := range names {
		if !used[name] {
			t.Errorf("tag %q is listed but no operation uses it", name)
		}
		if slices.Contains(names[:i], name) {
			t.Errorf("tag %q listed twice", name)
		}
	}
}

// The root /admin aliases are documented (the routers and fixture.Do hold
// them to the contract) but x-internal, which the reference page skips, so it
// lists each operation once; every hidden operation has its /api/v1 twin, so
// hiding loses nothing, and nothing under /api/v1 is hidden (nor the index,
// GET / and GET /api/v1, which has no twin).
func TestAliasesAreHiddenFromTheReference(t *testing.T) {
	doc := served(t)
	paths, _ := doc["paths"].(map[string]any)
	hidden := 0
	eachOperation(doc, func(p, m string, op map[string]any) {
		internal := op["x-internal"] == true
		if strings.HasPrefix(p, "/api/v1/") || p == "/" || p == "/api/v1" { // the index is its own route
			if internal {
				t.Errorf("%s %s is hidden from the reference", m, p)
			}
			return
		}
		if !internal {
			t.Errorf("alias %s %s is not x-internal: the reference page lists it twice", m, p)
		}
		hidden++
		twin, _ := paths["/api/v1"+p].(map[string]any)
		if _, ok := twin[m]; !ok {
			t.Errorf("alias %s %s has no /api/v1%s twin", m, p, p)
		}
	})
	if hidden != 6 {
		t.Errorf("%d aliases hidden, want the six /admin operations", hidden)
	}
	// Merge hides a fragment's alias however it is written.
	frag := api.Fragment{Name: "x", Doc: map[string]any{"paths": map[string]any{"/x": map[string]any{"get": map[string]any{}},
		"/api/v1/x": map[string]any{"get": map[string]any{}}}}}
	merged, err := api.Merge([]api.Fragment{{Name: "base", Doc: map[string]any{"openapi": "3.1.0"}}, frag})
	if err != nil {
		t.Fatal(err)
	}
	if op := merged["paths"].(map[string]any)["/x"].(map[string]any)["get"].(map[string]any); op["x-internal"] != true {
		t.Errorf("Merge left /x visible: %v", op)
	}
}

// The reference page renders descriptions and summaries as CommonMark: a bare
// `*` or a `_` at a word's edge opens emphasis (an unescaped `*` once turned
// half of the webhook description italic), a `<word>` is swallowed as an HTML
// tag, and an unmatched backtick turns the rest into code. Every such
// character belongs in a code span (or is escaped); `_` inside a word
// (snake_case) is literal.
func TestDescriptionsHaveNoStrayMarkdown(t *testing.T) {
	n := 0
	walkText(served(t), "", func(where, text string) {
		n++
		for _, problem := range strayMarkdown(text) {
			t.Errorf("%s: %s", where, problem)
		}
	})
	if n < 300 {
		t.Fatalf("only %d texts scanned", n)
	}
	for _, c := range []struct {
		text string
		bad  bool
	}{
		{"hosts *.local and *.localhost", true},
		{"snake_case and `*:*`", false},
		{"an _emphasis_", true},
		{`an escaped \* star`, false},
		{"Bearer <token>", true},
		{"``a ` b`` c", false},
		{"unclosed `code", true},
	} {
		if got := len(strayMarkdown(c.text)) > 0; got != c.bad {
			t.Errorf("strayMarkdown(%q) flagged %v, want %v", c.text, got, c.bad)
		}
	}
}

// walkText calls f with every description and summary of v.
func walkText(v any, where string, f func(where, text string)) {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			if s, ok := e.(string); ok && (k == "description" || k == "summary") {
				f(where+"/"+k, s)
				continue
			}
			walkText(e, where+"/"+k, f)
		}
	case []any:
		for i, e := range t {
			walkText(e, fmt.Sprintf("%s/%d", where, i), f)
		}
	}
}

var htmlTag = regexp.MustCompile(`</?[A-Za-z][^>\n]*>`)

// strayMarkdown lists what in text, outside code spans, renders as something
// else than the characters written.
func strayMarkdown(text string) []string {
	plain, ok := outsideCode(text)
	var out []string
	if !ok {
		out = append(out, "unmatched backtick")
	}
	rs := []rune(plain)
	word := func(i int) bool { return i >= 0 && i < len(rs) && (unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i])) }
	for i, r := range rs {
		escaped := i > 0 && rs[i-1] == '\\'
		switch {
		case escaped:
		case r == '*':
			out = append(out, fmt.Sprintf("bare * in %q", around(rs, i)))
		case r == '_' && !(word(i-1) && word(i+1)):
			out = append(out, fmt.Sprintf("_ at a word's edge in %q", around(rs, i)))
		}
	}
	for _, tag := range htmlTag.FindAllString(plain, -1) {
		out = append(out, fmt.Sprintf("%s reads as an HTML tag", tag))
	}
	return out
}

// outsideCode returns text without its code spans (a run of n backticks to
// the next run of exactly n), and false when a run has no closing run.
func outsideCode(text string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(text); {
		if text[i] != '`' {
			b.WriteByte(text[i])
			i++
			continue
		}
		n := 0
		for i+n < len(text) && text[i+n] == '`' {
			n++
		}
		end := closing(text[i+n:], n)
		if end < 0 {
			return b.String(), false
		}
		b.WriteByte(' ')
		i += n + end + n
	}
	return b.String(), true
}

// closing is the offset in s of the first run of exactly n backticks, or -1.
func closing(s string, n int) int {
	for j := 0; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		k := 0
		for j+k < len(s) && s[j+k] == '`' {
			k++
		}
		if k == n {
			return j
		}
		j += k
	}
	return -1
}

func around(rs []rune, i int) string {
	return string(rs[max(0, i-25):min(len(rs), i+25)])
}
