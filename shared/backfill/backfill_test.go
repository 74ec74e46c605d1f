package backfill_test

import (
	"context"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/backfill"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

var listKeys = []string{"GSI3PK", "GSI3SK", "GSI4PK", "GSI4SK"}

// creatorKeys are the index keys of an API key's creator partition.
var creatorKeys = []string{"GSI2PK", "GSI2SK"}

// indexKeys are the attributes the backfill sets on the row with sort key sk.
func indexKeys(sk string) []string {
	if strings.HasPrefix(sk, "APIKEY#") {
		return append(slices.Clone(listKeys), creatorKeys...)
	}
	return listKeys
}

// indexed reads the list-index keys of every row of the backfilled kinds, by
// table key.
func indexed(t *testing.T, st *store.Store) map[string]map[string]string {
	t.Helper()
	out := map[string]map[string]string{}
	p := dynamodb.NewScanPaginator(st.DB, &dynamodb.ScanInput{TableName: &st.Table})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range page.Items {
			pk, sk := store.Str(it["PK"]), store.Str(it["SK"])
			if !strings.HasPrefix(pk, "ORG#") || !slices.ContainsFunc(backfill.Kinds(), func(k store.Reindex) bool { return k.Holds(sk) }) {
				continue
			}
			keys := map[string]string{}
			for _, a := range indexKeys(sk) {
				keys[a] = store.Str(it[a])
			}
			out[pk+"|"+sk] = keys
		}
	}
	return out
}

// lists reads every list of the backfilled kinds as a partner and an
// organization administrator: the ids of each, in order.
func lists(t *testing.T, w *fixture.World) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, path := range []string{"/api/v1/devices?", "/api/v1/alerts?", "/api/v1/scripts?", "/api/v1/filters?", "/api/v1/enrollment-keys?", "/api/v1/api-keys?",
		"/api/v1/service-principals?", "/api/v1/organizations?", "/api/v1/sites?orgId=" + w.A.ID + "&", "/api/v1/device-groups?orgId=" + w.A.ID + "&"} {
		for _, who := range []string{fixture.PXAdmin, fixture.AAdmin} {
			res := fixture.Expect(t, w.Call(t, http.MethodGet, path+"limit=100", who, nil), http.StatusOK)
			out[path+" as "+who] = fixture.IDs(t, res)
		}
	}
	return out
}

// TestBackfillGivesRowsTheirDomainsKeys writes rows of every kind through the
// API, takes their list-index keys away (rows written before the indexes),
// and runs the sweeper's list-index-backfill job: the rows get back exactly
// the keys their domain wrote, every list answers what it answered before,
// and a second run writes nothing.
func TestBackfillGivesRowsTheirDomainsKeys(t *testing.T) {
	w := fixture.NewWorld(t, "devices", "agents", "enrollment-keys", "alerts", "scripts", "filters", "api-keys", "service-principals",
		"organizations", "sites")
	ctx := context.Background()
	w.Device(t, fixture.AAdmin, w.A.ID, w.A1.ID, "alpha")
	w.Device(t, fixture.BAdmin, w.B.ID, "", "bravo")
	w.Device(t, fixture.CAdmin, w.C.ID, "", "charlie")
	for _, c := range []struct{ who, org string }{{fixture.AAdmin, w.A.ID}, {fixture.PXAdmin, w.B.ID}, {fixture.CAdmin, w.C.ID}} {
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/alerts", c.who, map[string]any{"orgId": c.org, "severity": "low", "title": "t"}), http.StatusCreated)
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", c.who, map[string]any{"orgId": c.org, "name": "k"}), http.StatusCreated)
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/service-principals", c.who, map[string]any{"orgId": c.org, "name": "p", "scopes": []string{"devices:read"}}), http.StatusCreated)
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/scripts", c.who, map[string]any{"orgId": c.org, "name": "Clear Temp " + c.org[:4], "language": "bash", "content": "ls"}), http.StatusCreated)
		fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/filters", c.who, map[string]any{"orgId": c.org, "name": "f",
			"conditions": map[string]any{"operator": "AND", "conditions": []any{map[string]any{"field": "osType", "operator": "equals", "value": "windows"}}}}), http.StatusCreated)
		w.Env.Clock.Advance(1e9)
	}
	want, wantLists := indexed(t, w.Env.Store), lists(t, w)
	kinds := map[string]int{}
	for k, keys := range want {
		if keys["GSI4PK"] == "" {
			t.Fatalf("%s was written without list keys: %v", k, keys)
		}
		kinds[strings.SplitN(strings.SplitN(k, "|", 2)[1], "#", 2)[0]]++
	}
	// 3 devices, alerts, enrollment keys (those of the devices), scripts,
	// saved filters and principals, 3 API keys + the principals' 3; the
	// world's 3 organizations, 3 sites and device group.
	if len(kinds) != 10 || kinds["DEVICE"] != 3 || kinds["ALERT"] != 3 || kinds["APIKEY"] != 6 || kinds["SP"] != 3 || kinds["EKEY"] != 3 ||
		kinds["SCRIPT"] != 3 || kinds["FILTER"] != 3 || kinds["ORG"] != 3 || kinds["SITE"] != 3 || kinds["DGROUP"] != 1 {
		t.Fatalf("rows by kind %v", kinds)
	}
	// The rows as a table that predates the list indexes holds them.
	for k := range want {
		pk, sk, _ := strings.Cut(k, "|")
		upd := expression.Remove(expression.Name(listKeys[0]))
		for _, a := range indexKeys(sk)[1:] {
			upd = upd.Remove(expression.Name(a))
		}
		if err := w.Env.Store.Do(ctx, store.Change(pk, sk, upd)); err != nil {
			t.Fatal(err)
		}
	}
	for k, keys := range indexed(t, w.Env.Store) {
		if keys["GSI4PK"] != "" || keys["GSI3PK"] != "" || keys["GSI2PK"] != "" {
			t.Fatalf("%s kept its keys", k)
		}
	}
	for name, ids := range lists(t, w) {
		if len(ids) != 0 {
			t.Fatalf("%s lists rows without list keys: %v", name, ids)
		}
	}

	job := sweepergroup.Sweeper(w.Env.Deps).Jobs["list-index-backfill"]
	n, err := job(ctx)
	if err != nil || n != len(want) {
		t.Fatalf("backfill wrote %d rows (%v), want %d", n, err, len(want))
	}
	got := indexed(t, w.Env.Store)
	for k, keys := range want {
		if strings.Contains(k, "|APIKEY#") && keys["GSI2PK"] == "" {
			t.Fatalf("%s was written outside its creator's index", k)
		}
		for a := range keys {
			if got[k][a] != keys[a] {
				t.Fatalf("%s: %s = %q after the backfill, %q as its domain wrote it", k, a, got[k][a], keys[a])
			}
		}
	}
	for name, ids := range lists(t, w) {
		if !slices.Equal(ids, wantLists[name]) {
			t.Fatalf("%s: %v after the backfill, %v before", name, ids, wantLists[name])
		}
	}
	if n, err := job(ctx); err != nil || n != 0 {
		t.Fatalf("second run wrote %d rows (%v)", n, err)
	}
	var p map[string]any
	if err := w.Env.Store.Get(ctx, "BACKFILL", "LISTINDEX", &p); err == nil {
		t.Fatalf("a complete run left its progress row: %v", p)
	}
}

// TestBackfillPutsKeysInTheirCreatorsIndex: an API key written after the list
// indexes but before the creator index (GSI2) gets its place there, so the
// removal of its creator (which finds the keys to revoke in that index)
// revokes it; a second run writes nothing.
func TestBackfillPutsKeysInTheirCreatorsIndex(t *testing.T) {
	w := fixture.NewWorld(t, "api-keys", "users")
	ctx := context.Background()
	member := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: w.PX.ID, RoleID: role.PartnerAdminID,
		OrgAccess: authz.OrgAccessAll, MFA: true, TOTP: true})
	w.Tokens["member"] = member.Token
	res := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", "member", map[string]any{"orgId": w.B.ID, "name": "k"}), http.StatusCreated)
	id, _ := res.JSON(t)["id"].(string)
	k := store.OrgRows[apikey.Key]{Kind: "APIKEY"}.Keys(w.B.ID, id)
	if err := w.Env.Store.Do(ctx, store.Change(k.PK, k.SK, expression.Remove(expression.Name("GSI2PK")).Remove(expression.Name("GSI2SK")))); err != nil {
		t.Fatal(err)
	}
	job := sweepergroup.Sweeper(w.Env.Deps).Jobs["list-index-backfill"]
	if n, err := job(ctx); err != nil || n != 1 {
		t.Fatalf("backfill wrote %d rows (%v), want the key's 1", n, err)
	}
	if n, err := job(ctx); err != nil || n != 0 {
		t.Fatalf("second run wrote %d rows (%v)", n, err)
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, "/api/v1/users/"+member.UserID, fixture.PXAdmin, nil), http.StatusOK)
	res = fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/api-keys/"+id, fixture.PXAdmin, nil), http.StatusOK)
	if s := res.JSON(t)["status"]; s != "revoked" {
		t.Fatalf("the removed creator's backfilled key is %v", s)
	}
}
