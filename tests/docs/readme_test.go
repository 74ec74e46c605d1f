package docs

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runnableMarker, on the line before a ```sh block of README.md, says the block
// runs as written from the repository's root against the emulator (testenv's,
// through AWS_ENDPOINT_URL): TestReadmeRunnableBlocks runs it. Blocks without
// it (make run, make test, curl against a running server, websocat, deploys)
// need a server, the network or minutes; TestReadmeCommandsExist still checks
// their make targets, go run paths and go test names.
const runnableMarker = "<!-- runnable -->"

// shBlock is one ```sh block of a markdown file.
type shBlock struct {
	line     int // of the opening fence, 1-based
	runnable bool
	body     string
}

func shBlocks(md string) []shBlock {
	var out []shBlock
	var cur *shBlock
	prev := ""
	for i, l := range strings.Split(md, "\n") {
		switch {
		case cur != nil && strings.TrimSpace(l) == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.body += l + "\n"
		case strings.TrimSpace(l) == "```sh":
			cur = &shBlock{line: i + 1, runnable: strings.TrimSpace(prev) == runnableMarker}
		}
		prev = l
	}
	return out
}

// commands joins continued lines and drops comments and blank lines.
func commands(body string) []string {
	var out []string
	cont := ""
	for _, l := range strings.Split(body, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "#") || (l == "" && cont == "") {
			continue
		}
		if s, ok := strings.CutSuffix(l, "\\"); ok {
			cont += strings.TrimSpace(s) + " "
			continue
		}
		out = append(out, strings.TrimSpace(cont+l))
		cont = ""
	}
	return out
}

var (
	makeTarget = regexp.MustCompile(`^([A-Za-z0-9_./ $()-]+):([^=]|$)`)
	testFunc   = regexp.MustCompile(`(?m)^func (Test\w+)\(t \*testing\.T\)`)
)

// makeTargets lists the rules of the Makefile at root.
func makeTargets(t *testing.T, root string) map[string]bool {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m := makeTarget.FindStringSubmatch(sc.Text()); m != nil {
			for _, name := range strings.Fields(m[1]) {
				got[name] = true
			}
		}
	}
	return got
}

// checkCommand returns what is wrong with one README command: a make target
// the Makefile lacks, a go run path that is no main package, a go test
// -run pattern that names no test of the packages given.
func checkCommand(root string, targets map[string]bool, cmd string) error {
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 2 && f[0] == "make":
		for _, a := range f[1:] {
			if !strings.HasPrefix(a, "-") && !strings.Contains(a, "=") && !targets[a] {
				return fmt.Errorf("make target %q is not in the Makefile", a)
			}
		}
	case len(f) >= 3 && f[0] == "go" && f[1] == "run":
		return mainPackage(root, f[2])
	case len(f) >= 3 && f[0] == "go" && f[1] == "test":
		return testsMatch(root, f[2:])
	}
	return nil
}

func mainPackage(root, path string) error {
	files, _ := filepath.Glob(filepath.Join(root, path, "*.go"))
	for _, p := range files {
		src, err := os.ReadFile(p)
		if err == nil && !strings.HasSuffix(p, "_test.go") && regexp.MustCompile(`(?m)^package main$`).Match(src) {
			return nil
		}
	}
	return fmt.Errorf("go run %s: no main package there", path)
}

// testsMatch holds go test's package arguments and -run pattern to the tests
// those packages declare: a pattern that selects nothing runs no test and
// still passes, which is how a renamed test goes unnoticed.
func testsMatch(root string, args []string) error {
	var pkgs []string
	pattern := ""
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-run" && i+1 < len(args):
			pattern = strings.Trim(args[i+1], `'"`)
			i++
		case strings.HasPrefix(a, "-run="):
			pattern = strings.Trim(strings.TrimPrefix(a, "-run="), `'"`)
		case strings.HasPrefix(a, "./"):
			pkgs = append(pkgs, a)
		}
	}
	if pattern == "" {
		return nil
	}
	re, err := regexp.Compile(strings.Split(pattern, "/")[0])
	if err != nil {
		return fmt.Errorf("go test -run %q: %v", pattern, err)
	}
	var names []string
	for _, pkg := range pkgs {
		files, _ := filepath.Glob(filepath.Join(root, pkg, "*_test.go"))
		for _, p := range files {
			src, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range testFunc.FindAllStringSubmatch(string(src), -1) {
				if re.MatchString(m[1]) {
					names = append(names, m[1])
				}
			}
		}
	}
	if len(names) == 0 {
		return fmt.Errorf("go test %v -run %q selects no test", pkgs, pattern)
	}
	return nil
}

// inlineCommand is a command quoted in the README's prose or tables
// (`make bench`), held like a block's.
var inlineCommand = regexp.MustCompile("`((?:make|go run|go test) [^`]+)`")

func readme(t *testing.T) (root string, blocks []shBlock) {
	t.Helper()
	return markdown(t, "README.md")
}

// markdown is readme for another document of the repository (name relative to
// its root).
func markdown(t *testing.T, name string) (root string, blocks []shBlock) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, name))
	if err != nil {
		t.Fatal(err)
	}
	blocks = shBlocks(string(md))
	for i, l := range strings.Split(string(md), "\n") {
		for _, m := range inlineCommand.FindAllStringSubmatch(l, -1) {
			blocks = append(blocks, shBlock{line: i + 1, body: m[1] + "\n"})
		}
	}
	return root, blocks
}

// TestReadmeCommandsExist: every make target, go run path and go test name in
// the shell blocks and inline commands of README.md and the walk-throughs it
// links (docs/first-hour.md) exists.
func TestReadmeCommandsExist(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"README.md", "docs/first-hour.md"} {
		root, blocks := markdown(t, name)
		targets := makeTargets(t, root)
		n := 0
		for _, b := range blocks {
			for _, c := range commands(b.body) {
				n++
				if err := checkCommand(root, targets, c); err != nil {
					t.Errorf("%s:%d: %s", name, b.line, err)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s has no shell commands: the parser is broken", name)
		}
	}
}

// TestReadmeCheckerRefuses: the checker refuses what the README once said
// (a -run pattern naming no test) and the other ways a command goes stale.
func TestReadmeCheckerRefuses(t *testing.T) {
	t.Parallel()
	root, _ := readme(t)
	targets := makeTargets(t, root)
	for _, c := range []string{
		"go test ./tests/ -run TestRecordedEvents -v",
		"make run tset",
		"go run ./infra/local/nothing -function health",
		"go run ./shared/store",
	} {
		if checkCommand(root, targets, c) == nil {
			t.Errorf("%q passed the check", c)
		}
	}
	for _, c := range []string{"go test ./tests/ -run TestReplay -v", "make run", "go run ./infra/local/invoke -h"} {
		if err := checkCommand(root, targets, c); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	got := commands("make x \\\n  y   # why\n# only a comment\n\ngo run ./z\n")
	if strings.Join(got, "|") != "make x y|go run ./z" {
		t.Errorf("commands: %q", got)
	}
}

// TestReadmeRunnableBlocks runs every block marked runnable with bash from
// the repository's root, against this package's emulator.
func TestReadmeRunnableBlocks(t *testing.T) {
	root, blocks := readme(t)
	n := 0
	for _, b := range blocks {
		if !b.runnable {
			continue
		}
		n++
		t.Run(fmt.Sprintf("line%d", b.line), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", b.body)
			cmd.Dir = root
			// A table of its own, so the block never meets another test's data.
			cmd.Env = append(os.Environ(), fmt.Sprintf("TABLE_NAME=readme-%d", b.line))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("README.md:%d: %v\n%s\n%s", b.line, err, b.body, out)
			}
		})
	}
	if n == 0 {
		t.Fatalf("README.md has no block marked %s", runnableMarker)
	}
}
