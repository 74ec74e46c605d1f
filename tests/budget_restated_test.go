package tests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// restatedBudget is a comment that states a per-request DynamoDB call count:
// a number before "DynamoDB call(s)", "calls per request", "DynamoDB calls
// after authentication", "calls:" before a number (or a word and a number:
// "Calls: PUT 2-4"), a "# ... DynamoDB calls" heading, or the head of a table
// of counts ("route ... calls", "calls ... what"). Budgets are
// stated in tests/fixture/budgets.go only (docs/budgets.md is generated from
// it); a doc says what a route reads and writes, and why, not how many calls.
var restatedBudget = regexp.MustCompile(`(?i)\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+DynamoDB\s+calls?\b` +
	`|\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\s+calls\s+with\s+authentication\b|\bcalls\s+per\s+request\b|\bDynamoDB\s+calls\s+after\s+authentication\b|\bcalls:\s*(\w+\s+)?\d` +
	`|(?m:^#.*\bDynamoDB\s+calls\b)|(?m:^\s*route\s{2,}.*\bcalls\b)|\bcalls\s{2,}what\b`)

// budgetRestatingSkips are the files the check does not read, with the reason.
var budgetRestatingSkips = map[string]string{}

// TestNoRestatedCallBudgets fails when a comment of a non-test Go file under
// shared/ states a per-request call count again (restatedBudget).
func TestNoRestatedCallBudgets(t *testing.T) {
	for _, hit := range restatedBudgets(t) {
		t.Errorf("%s: states a per-request DynamoDB call count (%q); say what the route reads and writes, and point at docs/budgets.md (budgets: tests/fixture/budgets.go)", hit.pos, hit.text)
	}
}

// TestRestatedBudgetPattern holds the pattern to the forms the docs used and
// away from the descriptions that replace them.
func TestRestatedBudgetPattern(t *testing.T) {
	for _, s := range []string{
		"A valid key costs 3 DynamoDB calls, the last two side by side",
		"DynamoDB calls per request besides authentication",
		"Calls: 4 (BatchGetItem, transaction)",
		"route                                     MFA  calls              what",
		"in three DynamoDB calls of which",
		"system roles are code): three calls with authentication, however many",
		"Calls: PUT 2-4 (target read, organization read)",
		"DynamoDB calls after authentication: list 2 (the index page)",
		"# Cost (DynamoDB calls after authentication)",
		"\troute                   DynamoDB calls\n\tGET /audit-logs         1 query",
	} {
		if !restatedBudget.MatchString(s) {
			t.Errorf("not caught: %q", s)
		}
	}
	for _, s := range []string{
		"one BatchGetItem of the agent row and the window; one transaction",
		"budgets: docs/budgets.md, from tests/fixture/budgets.go",
		"WithCalls returns a context that counts the DynamoDB calls made with it.",
		"a transaction per 100 deliveries",
		"Reads and writes: an event costs one Query of its organization's webhooks",
		"dbCalls (DynamoDB calls of the request) and dbRCU",
	} {
		if restatedBudget.MatchString(s) {
			t.Errorf("caught a description: %q", s)
		}
	}
}

type budgetHit struct{ pos, text string }

// restatedBudgets returns each comment group of shared/'s non-test Go files
// (but budgetRestatingSkips) that matches restatedBudget.
func restatedBudgets(t *testing.T) []budgetHit {
	t.Helper()
	var hits []budgetHit
	walkSharedGo(t, parser.ParseComments, func(fset *token.FileSet, rel string, f *ast.File) {
		for skip := range budgetRestatingSkips {
			if rel == skip || strings.HasSuffix(skip, "/") && strings.HasPrefix(rel, skip) {
				return
			}
		}
		for _, cg := range f.Comments {
			// The text as one line (a count broken over two lines), then as
			// written (a table's head keeps its spacing).
			m := restatedBudget.FindString(strings.Join(strings.Fields(cg.Text()), " "))
			if m == "" {
				m = restatedBudget.FindString(cg.Text())
			}
			if m != "" {
				hits = append(hits, budgetHit{fset.Position(cg.Pos()).String(), m})
			}
		}
	})
	return hits
}

// walkSharedGo parses each non-test Go file under shared/ with mode and calls
// visit with its path from the repository's root ("shared/...").
func walkSharedGo(t *testing.T, mode parser.Mode, visit func(fset *token.FileSet, rel string, f *ast.File)) {
	t.Helper()
	fset := token.NewFileSet()
	err := filepath.WalkDir(filepath.Join("..", "shared"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "node_modules" || strings.HasPrefix(d.Name(), "_")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, mode)
		if err != nil {
			return err
		}
		visit(fset, filepath.ToSlash(strings.TrimPrefix(p, ".."+string(filepath.Separator))), f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
