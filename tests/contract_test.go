package tests

import (
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/tests/testenv"
)

// pathParam matches one {name} of a ServeMux pattern or an OpenAPI path.
var pathParam = regexp.MustCompile(`\{[^}/]+\}`)

// normalize names every path parameter alike, so /roles/{id} (ServeMux) and
// /roles/{roleId} (a document) compare equal.
func normalize(method, path string) string {
	// "/{$}" is ServeMux for "/ exactly" (GET / of the health group).
	path = strings.TrimSuffix(path, "{$}")
	return strings.ToUpper(method) + " " + pathParam.ReplaceAllString(path, "{}")
}

// TestEveryRouteIsDocumentedAndEveryDocumentedRouteIsRouted builds every route
// group as its function does and holds each router's patterns to the OpenAPI
// document, both ways. Groups not built yet (501 for every path) have no router
// and must have no documented path.
func TestEveryRouteIsDocumentedAndEveryDocumentedRouteIsRouted(t *testing.T) {
	env := testenv.New(t)
	documented := map[string]string{} // normalized -> as documented
	for _, op := range operations(t) {
		documented[normalize(op.method, op.path)] = op.method + " " + op.path
	}
	routed := map[string]string{}
	built := map[string]bool{}
	for name, build := range groups.Builders() {
		h, err := build(env.Deps)
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		pats, ok := httpapi.Patterns(h)
		if !ok {
			continue // not built: answers 501 for every path of the group
		}
		built[name] = true
		if len(pats) == 0 {
			t.Errorf("group %s has a router with no routes", name)
		}
		for _, p := range pats {
			method, path, _ := strings.Cut(p, " ")
			routed[normalize(method, path)] = name + ": " + p
		}
	}
	for _, name := range []string{"health", "auth", "auth-passkeys", "users", "roles", "organizations", "sites"} {
		if !built[name] {
			t.Errorf("group %s exposes no router patterns", name)
		}
	}
	var missing, unrouted []string
	for k, v := range routed {
		if _, ok := documented[k]; !ok {
			missing = append(missing, v)
		}
	}
	for k, v := range documented {
		if _, ok := routed[k]; !ok {
			unrouted = append(unrouted, v)
		}
	}
	sort.Strings(missing)
	sort.Strings(unrouted)
	for _, m := range missing {
		t.Errorf("routed but not in the OpenAPI document: %s", m)
	}
	for _, u := range unrouted {
		g, _ := routes.Lookup(strings.SplitN(u, " ", 2)[1])
		t.Errorf("documented but not routed: %s (function %q)", u, g.Function)
	}
	if len(routed) < 60 {
		t.Errorf("only %d routes found; the builders' routers were not all read", len(routed))
	}
}
