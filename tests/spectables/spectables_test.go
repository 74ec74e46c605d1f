// Package spectables holds the spec documents' error tables to the code: every
// row of every table under "## Errors" of the three spec documents (kept
// outside the repository, in ../shared/spec) is produced by some request and
// held by a test (docs/decisions.md#where-gale-follows-the-documents).
//
// The walk is static, so it runs inside `make test` without depending on the
// order in which packages run: a row quoting a message (`...`) needs that
// message in the OpenAPI document and as a string literal of some _test.go
// file (the assertion of the test that produces it); a row without one
// (a bare status, "circular inheritance message") is listed in rows.txt with
// the test that produces it, and that test must exist.
package spectables

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// documents are the spec documents whose error tables the walk holds.
var documents = []string{"1-keys-filters-search.md", "2-identity-access.md", "3-pam-webhooks.md"}

// quoted is a message a row quotes.
var quoted = regexp.MustCompile("`([^`]+)`")

// code is a first cell that is an error code rather than a status or a place.
var code = regexp.MustCompile(`^[a-z]+(_[a-z]+)+$`)

// row is one row of an error table.
type row struct {
	doc, text string
	cells     []string
}

// key is how rows.txt names a row: the document and its first two cells.
func (r row) key() string { return r.doc + " | " + r.cells[0] + " | " + r.cells[1] }

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

// specDir is GALE_SPEC_DIR or ../shared/spec beside the repository.
func specDir(t *testing.T, root string) string {
	t.Helper()
	if d := os.Getenv("GALE_SPEC_DIR"); d != "" {
		return d
	}
	d := filepath.Join(root, "..", "shared", "spec")
	if _, err := os.Stat(filepath.Join(d, documents[0])); err != nil {
		t.Skipf("the spec documents are not beside this clone (%s); set GALE_SPEC_DIR to walk them", d)
	}
	return d
}

// errorRows parses the tables of a document's "## Errors" section.
func errorRows(t *testing.T, dir, doc string) []row {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, doc))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []row
	in, header := false, true
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "## ") {
			in = line == "## Errors"
			continue
		}
		if !in || !strings.HasPrefix(line, "|") {
			header = true
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header || strings.HasPrefix(cells[0], "---") {
			header = header && !strings.HasPrefix(cells[0], "---")
			continue
		}
		out = append(out, row{doc: doc, text: line, cells: cells})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s: no error table under ## Errors (has the document changed shape?)", doc)
	}
	return out
}

// testSource is what the repository's tests hold: every string literal of
// every _test.go file, the names of the test functions and of what the tests
// select from packages (sso.CodeSessionExpired), and the string constants of
// the code (a test asserting a constant asserts its value).
type testSource struct {
	literals []string
	funcs    map[string]bool
	selected map[string]bool
	consts   map[string][]string // value -> constant names
}

// held reports whether a test asserts msg: a literal holding it, or a
// constant of that value the tests name.
func (src testSource) held(msg string) bool {
	for _, lit := range src.literals {
		if strings.Contains(lit, msg) {
			return true
		}
	}
	for _, name := range src.consts[msg] {
		if src.selected[name] {
			return true
		}
	}
	return false
}

func readTests(t *testing.T, root string) testSource {
	t.Helper()
	src := testSource{funcs: map[string]bool{}, selected: map[string]bool{}, consts: map[string][]string{}}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			switch d.Name() {
			case ".git", "node_modules", "cdk.out", "bin":
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.Contains(path, "spectables") {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if !strings.HasSuffix(path, "_test.go") {
			constants(file, src.consts)
			return nil
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				src.selected[n.Sel.Name] = true
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					src.literals = append(src.literals, s)
				}
			case *ast.FuncDecl:
				if strings.HasPrefix(n.Name.Name, "Test") {
					src.funcs[n.Name.Name] = true
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(src.funcs) < 100 {
		t.Fatalf("found only %d test functions under %s: is the walk rooted right?", len(src.funcs), root)
	}
	return src
}

// constants adds the string constants of a file to byValue.
func constants(file *ast.File, byValue map[string][]string) {
	for _, d := range file.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, name := range vs.Names {
				if i >= len(vs.Values) {
					break
				}
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
					if v, err := strconv.Unquote(lit.Value); err == nil {
						byValue[v] = append(byValue[v], name.Name)
					}
				}
			}
		}
	}
}

// openAPIText is the OpenAPI document's text, its white space collapsed (the
// descriptions are folded).
func openAPIText(t *testing.T, root string) string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(root, "shared", "api", "openapi", "*.yaml"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no OpenAPI document: %v", err)
	}
	var b strings.Builder
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(data)
		b.WriteByte('\n')
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// listed reads rows.txt: "<document> | <cell> | <cell> -> TestName[, ...]",
// with # comments.
func listed(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("rows.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		k, test, ok := strings.Cut(line, " -> ")
		if !ok {
			t.Fatalf("rows.txt:%d: want `<document> | <cell> | <cell> -> TestName`: %q", i+1, line)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(test)
	}
	return out
}

func TestEveryErrorRowIsProducedByATest(t *testing.T) {
	root := repoRoot(t)
	dir := specDir(t, root)
	src := readTests(t, root)
	api := openAPIText(t, root)
	rows := listed(t)
	used := map[string]bool{}
	for _, doc := range documents {
		for _, r := range errorRows(t, dir, doc) {
			msgs := quoted.FindAllStringSubmatch(r.cells[1], -1)
			if code.MatchString(r.cells[0]) {
				msgs = [][]string{{r.cells[0], r.cells[0]}} // a table of error codes (the SSO callback's)
			}
			if len(msgs) == 0 {
				test, ok := rows[r.key()]
				if !ok {
					t.Errorf("%s: no message to look for; list the test producing it in rows.txt as `%s -> TestName`", r.text, r.key())
					continue
				}
				used[r.key()] = true
				for _, name := range strings.Split(test, ",") {
					if name = strings.TrimSpace(name); !src.funcs[name] {
						t.Errorf("%s: rows.txt names %s, which no _test.go file declares", r.text, name)
					}
				}
				continue
			}
			for _, m := range msgs {
				msg := m[1]
				if !strings.Contains(api, strings.Join(strings.Fields(msg), " ")) {
					t.Errorf("%s: `%s` is in no error row of the OpenAPI document", r.text, msg)
				}
				if !src.held(msg) {
					t.Errorf("%s: no test asserts `%s`", r.text, msg)
				}
			}
		}
	}
	for k := range rows {
		if !used[k] {
			t.Errorf("rows.txt lists %q, which is no longer a row without a message of the documents' error tables", k)
		}
	}
}
