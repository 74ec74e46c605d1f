package tenant_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	appgroups "github.com/gale-rmm/gale/shared/app/groups"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/routes"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestTenancy walks every read route as callers of other tenants and checks that
// organization A's organization, sites and device groups are invisible to them
// (404 by id, absent from lists), and visible to those who may see them.
func TestTenancy(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	aItems := map[string]string{
		orgs + "/" + w.a.ID:                        "organization",
		orgs + "/" + w.a.ID + "/security-settings": "security settings",
		sites + "/" + w.a1.ID:                      "site",
		sites + "/" + w.a2.ID:                      "site",
		groups + "/" + w.gA1.ID:                    "device group in a site",
		groups + "/" + w.gA.ID:                     "device group without a site",
		sites + "?orgId=" + w.a.ID:                 "site list",
		groups + "?orgId=" + w.a.ID:                "device group list",
	}
	handler := func(path string) http.Handler {
		if strings.HasPrefix(path, orgs) {
			return w.orgs
		}
		return w.sites
	}
	aIDs := []string{w.a.ID, w.a1.ID, w.a2.ID, w.gA1.ID, w.gA2.ID, w.gA.ID}

	for _, caller := range []string{bAdmin, pyAdmin, pxNone} {
		t.Run(caller+" sees nothing of A", func(t *testing.T) {
			for path := range aItems {
				notFound(t, w.call(t, handler(path), http.MethodGet, path, caller, nil))
			}
			lists := []string{orgs, sites, groups}
			if caller != bAdmin {
				lists = []string{orgs}
			}
			for _, path := range lists {
				res := fixture.Expect(t, w.call(t, handler(path), http.MethodGet, path, caller, nil), http.StatusOK)
				for _, id := range ids(t, res) {
					if slices.Contains(aIDs, id) {
						t.Fatalf("%s lists %s of organization A", path, id)
					}
				}
			}
		})
	}
	t.Run("partner Y sees nothing of partner X", func(t *testing.T) {
		sameIDs(t, w.call(t, w.orgs, http.MethodGet, orgs, pyAdmin, nil), w.c.ID)
		for _, path := range []string{orgs + "/" + w.b.ID, sites + "/" + w.b1.ID, groups + "/" + w.gB.ID, sites + "?orgId=" + w.b.ID} {
			notFound(t, w.call(t, handler(path), http.MethodGet, path, pyAdmin, nil))
		}
	})
	t.Run("selected access sees only the selected organization", func(t *testing.T) {
		sameIDs(t, w.call(t, w.orgs, http.MethodGet, orgs, pxSelected, nil), w.a.ID)
		for _, path := range []string{orgs + "/" + w.b.ID, orgs + "/" + w.b.ID + "/security-settings", sites + "/" + w.b1.ID,
			groups + "/" + w.gB.ID, sites + "?orgId=" + w.b.ID, groups + "?orgId=" + w.b.ID} {
			notFound(t, w.call(t, handler(path), http.MethodGet, path, pxSelected, nil))
		}
		for path := range aItems {
			fixture.Expect(t, w.call(t, handler(path), http.MethodGet, path, pxSelected, nil), http.StatusOK)
		}
	})
	t.Run("site-restricted user sees only their site", func(t *testing.T) {
		sameIDs(t, w.call(t, w.sites, http.MethodGet, sites, aRestricted, nil), w.a1.ID)
		sameIDs(t, w.call(t, w.sites, http.MethodGet, groups, aRestricted, nil), w.gA1.ID)
		for _, path := range []string{sites + "/" + w.a2.ID, groups + "/" + w.gA2.ID, groups + "/" + w.gA.ID} {
			notFound(t, w.call(t, w.sites, http.MethodGet, path, aRestricted, nil))
		}
		fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites+"/"+w.a1.ID, aRestricted, nil), http.StatusOK)
	})
	t.Run("system admin sees everything", func(t *testing.T) {
		sameIDs(t, w.call(t, w.orgs, http.MethodGet, orgs, sysAdmin, nil), w.a.ID, w.b.ID, w.c.ID)
		for _, path := range []string{orgs + "/" + w.c.ID, sites + "/" + w.c1.ID, groups + "/" + w.gC.ID, sites + "/" + w.a1.ID, groups + "/" + w.gB.ID} {
			fixture.Expect(t, w.call(t, handler(path), http.MethodGet, path, sysAdmin, nil), http.StatusOK)
		}
	})
	t.Run("store reads are scoped by organization", func(t *testing.T) {
		st := w.store()
		if _, err := st.Site(t.Context(), w.b.ID, w.a1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("site of A read under B: %v", err)
		}
		if _, err := st.Group(t.Context(), w.b.ID, w.gA1.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("group of A read under B: %v", err)
		}
		sameIDs(t, w.call(t, w.sites, http.MethodGet, sites+"?orgId="+w.b.ID, sysAdmin, nil), w.b1.ID) // B's list partition
		xOrgs, err := st.PartnerOrgs(t.Context(), w.px.ID)
		if err != nil || len(xOrgs) != 2 {
			t.Fatalf("organizations of X: %+v %v", xOrgs, err)
		}
	})
}

// TestSiteCreatesRaceOrganizationDelete runs 20 concurrent site creates against
// one organization delete: either the delete wins and no site exists, or it is
// refused (409) and the organization counts exactly the sites that exist.
func TestSiteCreatesRaceOrganizationDelete(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	outcomes := map[int]int{}
	for round := range 4 {
		o := fixture.Org(t, w.env, w.px.ID, fmt.Sprintf("Race %d", round))
		var wg sync.WaitGroup
		creates := make([]int, 20)
		var deleted int
		start := make(chan struct{})
		for i := range creates {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				// Odd rounds stagger the creates, so the delete may come first.
				if round%2 == 1 {
					time.Sleep(time.Duration(40+10*i) * time.Millisecond)
				}
				body := []byte(fmt.Sprintf(`{"orgId":%q,"name":"site %d"}`, o.ID, i))
				creates[i] = fixture.Do(t, w.sites, fixture.Request{Method: http.MethodPost, Path: sites, Token: w.tokens[pxAdmin], Body: body}).Status
			}()
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			deleted = fixture.Do(t, w.orgs, fixture.Request{Method: http.MethodDelete, Path: orgs + "/" + o.ID, Token: w.tokens[pxAdmin]}).Status
		}()
		close(start)
		wg.Wait()

		made := 0
		for _, s := range creates {
			switch s {
			case http.StatusCreated:
				made++
			case http.StatusNotFound:
			default:
				t.Fatalf("round %d: a site create answered %d", round, s)
			}
		}
		var left []tenant.Site // the table's rows, not a list's (the index lags)
		if err := w.env.Store.AllInto(t.Context(), store.Query{PK: store.OrgPK(o.ID), SKPrefix: "SITE#"}, &left); err != nil {
			t.Fatal(err)
		}
		switch deleted {
		case http.StatusOK:
			if len(left) != 0 || made != 0 {
				t.Fatalf("round %d: organization deleted with %d sites left (%d creates succeeded)", round, len(left), made)
			}
			notFound(t, w.call(t, w.orgs, http.MethodGet, orgs+"/"+o.ID, pxAdmin, nil))
		case http.StatusConflict:
			if n := w.org(t, o.ID).SiteCount; len(left) != made || n != made || made == 0 {
				t.Fatalf("round %d: %d sites stored, %d created, siteCount %d", round, len(left), made, n)
			}
		default:
			t.Fatalf("round %d: delete answered %d", round, deleted)
		}
		outcomes[deleted]++
	}
	t.Logf("delete outcomes over 4 rounds: %v", outcomes)
}

// TestRoutesAreWired checks both groups are built (not 501) and that every
// route they serve belongs to their group in the route table.
func TestRoutesAreWired(t *testing.T) {
	t.Parallel()
	for function, want := range map[string][]string{
		"organizations": {orgs, orgs + "/" + uuid.NewString(), orgs + "/" + uuid.NewString() + "/security-settings"},
		"sites":         {sites, sites + "/" + uuid.NewString(), groups, groups + "/" + uuid.NewString()},
	} {
		if _, ok := appgroups.Builders()[function]; !ok {
			t.Fatalf("no builder for %s", function)
		}
		for _, path := range want {
			g, ok := routes.Lookup(path)
			if !ok || g.Function != function {
				t.Fatalf("%s is routed to %q, want %s", path, g.Function, function)
			}
		}
	}
	w := newWorld(t)
	for _, h := range []http.Handler{w.orgs, w.sites} {
		res := fixture.Do(t, h, fixture.Request{Method: http.MethodGet, Path: "/api/v1/nothing"})
		fixture.Expect(t, res, http.StatusNotFound)
	}
	fixture.Expect(t, w.call(t, w.orgs, http.MethodPut, orgs, sysAdmin, nil), http.StatusMethodNotAllowed)
	fixture.Expect(t, w.call(t, w.sites, http.MethodPut, groups+"/"+w.gA.ID, sysAdmin, nil), http.StatusMethodNotAllowed)
	fixture.Expect(t, w.call(t, w.sites, http.MethodGet, sites, "", nil), http.StatusUnauthorized)
}
