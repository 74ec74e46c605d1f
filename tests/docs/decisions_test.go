package docs

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// decisionsPage is the repository's record of the product's decisions; code,
// tests, markdown and the OpenAPI text cite its sections by anchor.
const decisionsPage = "docs/decisions.md"

// outsideRecord is the name of the product team's decision record, which
// lives outside the repository: a clone cannot follow a citation of it. It is
// spelled in two halves so that this file does not cite it.
var outsideRecord = "DECISI" + "ONS"

// citation is a reference to the page, with its anchor when it names one.
var citation = regexp.MustCompile(`docs/decisions\.md(?:#([A-Za-z0-9_-]*))?`)

// localLink is a link inside the page itself: [text](#anchor).
var localLink = regexp.MustCompile(`\]\(#([A-Za-z0-9_-]*)\)`)

// repoRoot is the directory holding go.mod above the working directory.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// textFiles calls f with every text file of the repository (path relative to
// root, contents): build outputs, dependencies and hidden directories aside.
func textFiles(t *testing.T, root string, f func(rel string, body []byte)) {
	t.Helper()
	skip := map[string]bool{"node_modules": true, "cdk.out": true, "dist": true, "bin": true}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || skip[d.Name()]) {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if info.Size() > 4<<20 {
			return nil
		}
		body, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.IndexByte(body, 0) >= 0 {
			return nil // binary
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		f(filepath.ToSlash(rel), body)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// anchor is the id GitHub gives a heading: lower case, punctuation other than
// hyphens and underscores dropped, spaces turned into hyphens.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// headings are the anchors of the page's headings outside code fences; a
// heading written twice is an error, since its second anchor would depend on
// the order of the page.
func headings(t *testing.T, page []byte) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(string(page), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		a := anchor(text)
		if out[a] {
			t.Errorf("%s: heading %q is written twice (anchor #%s)", decisionsPage, strings.TrimSpace(text), a)
		}
		out[a] = true
	}
	return out
}

// TestDecisionsCitedInRepository holds every citation of a decision to the
// repository's own page: no file cites the record outside the repository, and
// every docs/decisions.md#<anchor> (and every link inside the page) names a
// heading the page has.
func TestDecisionsCitedInRepository(t *testing.T) {
	root := repoRoot(t)
	page, err := os.ReadFile(filepath.Join(root, decisionsPage))
	if err != nil {
		t.Fatalf("the decisions page is missing: %v", err)
	}
	have := headings(t, page)
	cited := 0
	textFiles(t, root, func(rel string, body []byte) {
		for i, line := range strings.Split(string(body), "\n") {
			if strings.Contains(line, outsideRecord) {
				t.Errorf("%s:%d cites %s, which is not in the repository; cite %s#<anchor>: %s",
					rel, i+1, outsideRecord, decisionsPage, strings.TrimSpace(line))
			}
			for _, m := range citation.FindAllStringSubmatch(line, -1) {
				cited++
				if m[1] != "" && !have[m[1]] {
					t.Errorf("%s:%d cites %s#%s, which is no heading of the page", rel, i+1, decisionsPage, m[1])
				}
			}
			if rel != decisionsPage {
				continue
			}
			for _, m := range localLink.FindAllStringSubmatch(line, -1) {
				if !have[m[1]] {
					t.Errorf("%s:%d links #%s, which is no heading of the page", rel, i+1, m[1])
				}
			}
		}
	})
	if cited == 0 {
		t.Errorf("no file cites %s: the walk found nothing", decisionsPage)
	}
}

// TestAnchor pins the heading-to-anchor rule the citations rely on.
func TestAnchor(t *testing.T) {
	for heading, want := range map[string]string{
		"Kill switches always win":       "kill-switches-always-win",
		" Tokens, sessions and limits ":  "tokens-sessions-and-limits",
		"Agent channel (WebSocket)":      "agent-channel-websocket",
		"Where Gale follows the_docs":    "where-gale-follows-the_docs",
		"Identity federation, lockout":   "identity-federation-lockout",
		"`device.updated` and heartbeat": "deviceupdated-and-heartbeat",
	} {
		if got := anchor(heading); got != want {
			t.Errorf("anchor(%q) = %q, want %q", heading, got, want)
		}
	}
}
