package routes_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/routes"
)

// repoRoot walks up from the package directory to the directory holding go.mod.
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
			t.Fatal("no go.mod above the test directory")
		}
		dir = parent
	}
}

func TestEveryFunctionDirectoryHasAnEntryAndBack(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(repoRoot(t), "functions"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
			if _, err := os.Stat(filepath.Join(repoRoot(t), "functions", e.Name(), "main.go")); err != nil {
				t.Errorf("functions/%s has no main.go", e.Name())
			}
		}
	}
	fns := routes.Functions()
	for _, d := range dirs {
		if !slices.Contains(fns, d) {
			t.Errorf("functions/%s has no entry in the route table", d)
		}
	}
	for _, f := range fns {
		if !slices.Contains(dirs, f) {
			t.Errorf("route table entry %q has no functions/%s directory", f, f)
		}
	}
	if !slices.IsSorted(fns) || len(slices.Compact(slices.Clone(fns))) != len(fns) {
		t.Errorf("Functions() = %v, want sorted and without duplicates", fns)
	}
}

func TestLookup(t *testing.T) {
	cases := map[string]string{
		"/api/v1/health":                      "health",
		"/api/v1/openapi.json":                "health",
		"/api/v1/users":                       "users",
		"/api/v1/users/me":                    "users",
		"/api/v1/users/9b1d/roles":            "users",
		"/api/v1/roles/abc":                   "roles",
		"/api/v1/permissions":                 "roles",
		"/api/v1/device-groups/x":             "sites",
		"/api/v1/sites":                       "sites",
		"/api/v1/admin":                       "admin",
		"/api/v1/admin/partners/1":            "admin",
		"/admin":                              "admin",
		"/admin/partners":                     "admin",
		"/api/v1/auth/login":                  "auth",
		"/api/v1/agents/heartbeat":            "agents",
		"/api/v1/enrollment-keys/k/rotate":    "enrollment-keys",
		"/api/v1/service-principals/p/keys/1": "service-principals",
	}
	for path, want := range cases {
		g, ok := routes.Lookup(path)
		if !ok || g.Function != want {
			t.Errorf("Lookup(%q) = %q, %v; want %q", path, g.Function, ok, want)
		}
	}
	// GET / and GET /api/v1 point at the reference (shared/health); nothing below them.
	for _, path := range []string{"/", "/api/v1"} {
		if g, ok := routes.Lookup(path); !ok || g.Function != "health" {
			t.Errorf("Lookup(%q) = %q, %v; want health", path, g.Function, ok)
		}
	}
	for _, path := range []string{"/x", "/api/v1/", "/api/v1/usersx", "/api/v1/user", "/adminx", "/api/v2/users", "/health"} {
		if g, ok := routes.Lookup(path); ok {
			t.Errorf("Lookup(%q) = %q, want no group", path, g.Function)
		}
	}
}

// The longest prefix wins whatever the table's order.
func TestLookupLongestPrefix(t *testing.T) {
	saved := routes.Groups
	t.Cleanup(func() { routes.Groups = saved })
	routes.Groups = []routes.Group{
		{Function: "outer", Prefixes: []string{"/api/v1/things"}},
		{Function: "inner", Prefixes: []string{"/api/v1/things/special"}},
	}
	for _, order := range [][]routes.Group{routes.Groups, {routes.Groups[1], routes.Groups[0]}} {
		routes.Groups = order
		for path, want := range map[string]string{
			"/api/v1/things":                "outer",
			"/api/v1/things/1":              "outer",
			"/api/v1/things/special":        "inner",
			"/api/v1/things/special/1":      "inner",
			"/api/v1/things/specialist":     "outer",
			"/api/v1/things/special-offers": "outer",
		} {
			if g, _ := routes.Lookup(path); g.Function != want {
				t.Errorf("Lookup(%q) = %q, want %q", path, g.Function, want)
			}
		}
	}
}

func TestPrefixesAreUniqueAndWellFormed(t *testing.T) {
	owner := map[string]string{}
	for _, g := range routes.Groups {
		if len(g.Prefixes) == 0 {
			t.Errorf("group %s has no prefix", g.Function)
		}
		for _, p := range g.Prefixes {
			if !strings.HasPrefix(p, "/") || strings.HasSuffix(p, "/") {
				t.Errorf("prefix %q of %s must start and not end with /", p, g.Function)
			}
			if prev, dup := owner[p]; dup {
				t.Errorf("prefix %q belongs to both %s and %s", p, prev, g.Function)
			}
			owner[p] = g.Function
		}
	}
	seen := map[string]bool{}
	for _, g := range routes.Groups {
		if seen[g.Function] {
			t.Errorf("function %s has two groups", g.Function)
		}
		seen[g.Function] = true
		if slices.Contains(routes.Workers, g.Function) {
			t.Errorf("%s is both a route group and a worker", g.Function)
		}
	}
}

func TestQueuesAndSchedules(t *testing.T) {
	names := map[string]bool{}
	for _, q := range routes.Queues {
		if names[q.Name] {
			t.Errorf("queue %s declared twice", q.Name)
		}
		names[q.Name] = true
		if !slices.Contains(routes.Workers, q.Consumer) {
			t.Errorf("queue %s is consumed by %q, not a worker", q.Name, q.Consumer)
		}
		if q.MaxReceiveCount < 1 || q.BatchSize < 1 || q.BatchSize > 10 || q.VisibilityTimeoutSeconds < 1 {
			t.Errorf("queue %s has bad settings %+v", q.Name, q)
		}
	}
	if !names["events"] || !names["webhook-deliveries"] {
		t.Errorf("queues = %v, want events and webhook-deliveries", names)
	}
	jobs := map[string]bool{}
	for _, s := range routes.Schedules {
		if jobs[s.Job] || s.RateMinutes < 1 {
			t.Errorf("schedule %+v is duplicated or has no rate", s)
		}
		jobs[s.Job] = true
	}
	if !jobs["outbox-drain"] {
		t.Error("no outbox-drain schedule: events whose send failed would never leave the outbox")
	}
}

// TestEveryFunctionIsWiredByItsNamesake holds the one step from a function to
// its wiring: functions/<name>/main.go imports shared/app/<name without
// hyphens>group (functions/auth-passkeys: shared/app/authpasskeysgroup), so the
// function's name greps to its wiring, and the wiring to the domain packages.
func TestEveryFunctionIsWiredByItsNamesake(t *testing.T) {
	root := repoRoot(t)
	for _, f := range routes.Functions() {
		pkg := strings.ReplaceAll(f, "-", "") + "group"
		src, err := os.ReadFile(filepath.Join(root, "functions", f, "main.go"))
		if err != nil {
			t.Errorf("functions/%s: %v", f, err)
			continue
		}
		if !strings.Contains(string(src), `"github.com/gale-rmm/gale/shared/app/`+pkg+`"`) {
			t.Errorf("functions/%s/main.go does not import shared/app/%s", f, pkg)
		}
	}
}
