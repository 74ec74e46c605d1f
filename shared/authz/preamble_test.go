package authz_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// preamble is the tenant preamble's test spelled by hand: a tenant context,
// unless the caller is the system.
var preamble = regexp.MustCompile(`RequireTenantContext\(\);\s*err != nil && \w+\.Scope != authz\.ScopeSystem`)

// TestTenantPreambleIsOneCall fails on a service that writes the tenant
// preamble itself instead of calling authz.RequireTenant or authz.InTenant
// (issue 33: it was written 12 times in 9 packages, and the copies drifted
// in the order of their checks).
func TestTenantPreambleIsOneCall(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		if strings.HasPrefix(rel, "authz/") {
			return
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if loc := preamble.FindIndex(src); loc != nil {
			line := 1 + strings.Count(string(src[:loc[0]]), "\n")
			t.Errorf("%s:%d: the tenant preamble by hand: call authz.RequireTenant (or authz.InTenant)", rel, line)
		}
	})
}

// orgChecks are the files outside authz and tenant that may decide an
// organization's reach themselves, each with its count: none since issue 33.
// Every service reads through tenant.Find, tenant.List (which checks every
// Owned row) or tenant.Store.Reach; a new copy fails.
var orgChecks = map[string]int{}

// TestOrganizationReachIsDecidedOnce fails on a service that calls
// CanAccessOrg where tenant.Find, tenant.List or tenant.Store.Reach decide.
func TestOrganizationReachIsDecidedOnce(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		if strings.HasPrefix(rel, "authz/") || strings.HasPrefix(rel, "tenant/") {
			return
		}
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), ".CanAccessOrg("); n > 0 {
			got[rel] = n
		}
	})
	for rel, n := range got {
		if n > orgChecks[rel] {
			t.Errorf("%s calls CanAccessOrg %d times (allowed %d): read through tenant.Find, tenant.List or tenant.Store.Reach", rel, n, orgChecks[rel])
		}
	}
	for rel, n := range orgChecks {
		if got[rel] < n {
			t.Errorf("%s calls CanAccessOrg %d times, listed %d: shrink orgChecks", rel, got[rel], n)
		}
	}
}
