package apikey_test

import (
	"context"
	"testing"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestListReadsOnlyThePage lists 120 API keys of 20 organizations of one
// partner, 10 a page, as the partner's administrator: page 1, a deep page by
// number and every page by cursor each make the same few DynamoDB calls
// whatever the number of organizations (authentication 1, the partner's
// organizations 1, the index page 1, the page's keys 1, their guards 1, and a
// Select COUNT of the index partition for the total 1), never reading a row
// of another page but the small index rows before a page asked by number
// (Extra: the page's rows and guards, the partition's index rows counted, the
// partner's organizations, authentication); the pages join into the list,
// newest first (shared/principal holds its list to the same).
func TestListReadsOnlyThePage(t *testing.T) {
	w := fixture.NewKeyWorld(t)
	orgs, keys := w.SeedAcross(t, 18, 6, func(ctx context.Context, orgID, at string) (string, error) {
		return apikey.SeedKey(ctx, w.Env.Store, orgID, w.PX.ID, at)
	})
	const limit = 10
	w.CheckPages(t, fixture.Paging{Path: keysURL, Caller: fixture.PXAdmin, Want: fixture.NewestFirst(keys), Limit: limit,
		Calls: 6, Extra: 2*limit + len(keys) + len(orgs) + 5})
}
