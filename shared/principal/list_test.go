package principal_test

import (
	"context"
	"testing"

	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListReadsOnlyThePage is the API key list's test (shared/apikey) for
// the principals: 120 of 20 organizations of one partner, 10 a page, each
// page in the same few calls (authentication, the partner's organizations,
// the index page, the page's rows, the partition's count), newest first.
func TestListReadsOnlyThePage(t *testing.T) {
	w := fixture.NewKeyWorld(t)
	orgs, sps := w.SeedAcross(t, 18, 6, func(ctx context.Context, orgID, at string) (string, error) {
		return principal.SeedPrincipal(ctx, w.Env.Store, orgID, w.PX.ID, at)
	})
	const limit = 10
	w.CheckPages(t, fixture.Paging{Path: spURL, Caller: fixture.PXAdmin, Want: fixture.NewestFirst(sps), Limit: limit,
		Calls: 5, Extra: 2*limit + len(sps) + len(orgs) + 5})
}
