package tenantkey_test

import (
	"go/token"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// tenantLiteral matches a tenant partition spelled in a string: ORG# or
// PARTNER# at the start or after another key part's #.
var tenantLiteral = regexp.MustCompile(`(^|#)(ORG|PARTNER)#`)

// TestNoTenantKeyLiterals fails on a tenant partition spelled outside the
// store (and its tenantkey constants) and the tenant package: every other
// package addresses tenant rows through store.OrgPK, store.PartnerPK and
// store.TenantPK, so a key cannot lose its tenant by a typo.
func TestNoTenantKeyLiterals(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	fixture.GoFiles(t, root, 100, func(rel, path string) {
		if strings.HasPrefix(rel, "shared/store/") || strings.HasPrefix(rel, "shared/tenant/") {
			return
		}
		fixture.StringLiterals(t, path, func(pos token.Position, s string) {
			if tenantLiteral.MatchString(s) {
				t.Errorf("%s: tenant key literal %q: use store.OrgPK / store.PartnerPK / store.TenantPK", pos, s)
			}
		})
	})
}
