package enrollment_test

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/enrollment"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/sweep"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

const base = "/api/v1/enrollment-keys"

var rawKey = regexp.MustCompile(`^[0-9a-f]{64}$`)

func TestCreateDefaultsAndShapes(t *testing.T) {
	w := newWorld(t)
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "  Laptops  "}), http.StatusCreated)
	fixture.Budget(t, res, 4)
	k := res.JSON(t)
	if !rawKey.MatchString(k["key"].(string)) {
		t.Fatalf("key %v", k["key"])
	}
	want := map[string]any{"orgId": w.A.ID, "siteId": nil, "name": "Laptops", "usageCount": float64(0), "maxUsage": float64(1),
		"expiresAt": "2026-11-01T10:00:00.000Z", "createdAt": "2026-11-01T09:00:00.000Z"}
	for f, v := range want {
		if k[f] != v {
			t.Fatalf("%s = %v, want %v (%v)", f, k[f], v, k)
		}
	}
	if k["createdBy"] == "" || k["id"] == "" {
		t.Fatalf("create response %v", k)
	}
	id := k["id"].(string)
	got := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK)
	fixture.Budget(t, got, 3)
	if _, ok := got.JSON(t)["key"]; ok {
		t.Fatal("get returned the key material")
	}
	list := fixture.Expect(t, w.Call(t, http.MethodGet, base, fixture.AAdmin, nil), http.StatusOK)
	if strings.Contains(string(list.Body), k["key"].(string)) || strings.Contains(string(list.Body), `"key"`) {
		t.Fatalf("list returned key material: %s", list.Body)
	}
	body := list.JSON(t)
	if p := body["pagination"].(map[string]any); p["total"] != float64(1) || p["limit"] != float64(50) || p["page"] != float64(1) {
		t.Fatalf("pagination %v", p)
	}
	// Audit holds the prefix only.
	recs, err := audit.List(context.Background(), w.Env.Store, "ORG#"+w.A.ID, 10)
	if err != nil || len(recs) != 1 || recs[0].Action != "enrollment_key.create" || recs[0].Details["keyPrefix"] != k["key"].(string)[:8] {
		t.Fatalf("audit %+v %v", recs, err)
	}
}

func TestCreateBounds(t *testing.T) {
	w := newWorld(t)
	ok := func(body map[string]any) {
		t.Helper()
		fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, body), http.StatusCreated)
	}
	ok(map[string]any{"name": strings.Repeat("n", 255), "maxUsage": 100000})
	ok(map[string]any{"name": "x", "maxUsage": 1, "expiresAt": "2026-12-01T00:00:00Z", "siteId": w.A1.ID})
	cases := []struct {
		body  any
		field string
	}{
		{map[string]any{}, "name"},
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "   "}, "name"},
		{map[string]any{"name": strings.Repeat("n", 256)}, "name"},
		{map[string]any{"name": 5}, "name"},
		{map[string]any{"name": "x", "maxUsage": 0}, "maxUsage"},
		{map[string]any{"name": "x", "maxUsage": 100001}, "maxUsage"},
		{map[string]any{"name": "x", "maxUsage": -1}, "maxUsage"},
		{map[string]any{"name": "x", "maxUsage": 1.5}, "maxUsage"},
		{map[string]any{"name": "x", "maxUsage": "5"}, "maxUsage"},
		{map[string]any{"name": "x", "maxUsage": nil}, "maxUsage"},
		{map[string]any{"name": "x", "expiresAt": "tomorrow"}, "expiresAt"},
		{map[string]any{"name": "x", "expiresAt": "2026-10-01T00:00:00Z"}, "expiresAt"},
		{map[string]any{"name": "x", "expiresAt": "2026-11-01T09:00:00Z"}, "expiresAt"},
		{map[string]any{"name": "x", "orgId": "nope"}, "orgId"},
		{map[string]any{"name": "x", "siteId": "nope"}, "siteId"},
		{map[string]any{"name": "x", "siteId": w.C1.ID}, "siteId"},
		{map[string]any{"name": "x", "status": "active"}, "status"},
		{`{"name": "x"} {}`, "body"},
		{`not json`, "body"},
	}
	for i, c := range cases {
		t.Logf("case %d", i)
		res := w.Call(t, http.MethodPost, base, fixture.AAdmin, c.body)
		if c.field == "maxUsage" && res.Status == http.StatusCreated {
			t.Fatalf("case %d created: %s", i, res.Body)
		}
		fixture.Invalid(t, res, c.field)
	}
	// Partner and system callers must name the organization.
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"name": "x"}), "orgId")
	fixture.Invalid(t, w.Call(t, http.MethodPost, base, fixture.SysAdmin, map[string]any{"name": "x"}), "orgId")
	fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"name": "x", "orgId": w.B.ID}), http.StatusCreated)
	fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.SysAdmin, map[string]any{"name": "x", "orgId": w.C.ID}), http.StatusCreated)
	// Nothing but the successes was written.
	if got := len(fixture.IDs(t, w.Call(t, http.MethodGet, base+"?orgId="+w.A.ID, fixture.AAdmin, nil))); got != 2 {
		t.Fatalf("organization A holds %d keys, want 2", got)
	}
}

func TestRotate(t *testing.T) {
	w := newWorld(t)
	first := fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "r", "maxUsage": 5, "expiresAt": "2026-11-02T00:00:00Z"}), http.StatusCreated).JSON(t)
	id := first["id"].(string)
	// Use it once so the reset is visible.
	used := w.Enroll(t, first["key"].(string), "h")
	fixture.Expect(t, used, http.StatusCreated)
	path := base + "/" + id + "/rotate"
	// Omitted values are preserved; usage resets; new material replaces the old.
	rot := fixture.Expect(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, map[string]any{}), http.StatusOK).JSON(t)
	if rot["id"] != id || rot["usageCount"] != float64(0) || rot["maxUsage"] != float64(5) || rot["expiresAt"] != "2026-11-02T00:00:00.000Z" ||
		rot["key"] == first["key"] || !rawKey.MatchString(rot["key"].(string)) {
		t.Fatalf("rotated %v", rot)
	}
	fixture.ExpectError(t, w.Enroll(t, first["key"].(string), "old"), http.StatusUnauthorized, "unauthorized")
	// An empty body is fine too.
	fixture.Expect(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, nil), http.StatusOK)
	// null makes it unlimited; expiresAt moves.
	rot = fixture.Expect(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, map[string]any{"maxUsage": nil, "expiresAt": "2026-11-03T00:00:00Z"}), http.StatusOK).JSON(t)
	if v, ok := rot["maxUsage"]; !ok || v != nil || rot["expiresAt"] != "2026-11-03T00:00:00.000Z" {
		t.Fatalf("rotated %v", rot)
	}
	for i := range 3 {
		fixture.Expect(t, w.Enroll(t, rot["key"].(string), "unlimited-"+string(rune('a'+i))), http.StatusCreated)
	}
	if got := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil), http.StatusOK).JSON(t); got["usageCount"] != float64(3) || got["maxUsage"] != nil {
		t.Fatalf("after unlimited use %v", got)
	}
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{"maxUsage": 0}, "maxUsage"},
		{map[string]any{"maxUsage": 100001}, "maxUsage"},
		{map[string]any{"maxUsage": "many"}, "maxUsage"},
		{map[string]any{"expiresAt": "2020-01-01T00:00:00Z"}, "expiresAt"},
		{map[string]any{"name": "renamed"}, "name"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, path, fixture.AAdmin, c.body), c.field)
	}
	fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/nope/rotate", fixture.AAdmin, nil), "id")
	fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/7b0b5b6e-5a3a-4c1e-8f00-000000000000/rotate", fixture.AAdmin, nil))
}

func TestDelete(t *testing.T) {
	w := newWorld(t)
	id, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "d"})
	res := fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.AAdmin, nil), http.StatusOK)
	if b := res.JSON(t); b["success"] != true || b["message"] != "Enrollment key deleted successfully" {
		t.Fatalf("delete %v", b)
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/"+id, fixture.AAdmin, nil))
	fixture.ExpectError(t, w.Enroll(t, raw, "h"), http.StatusUnauthorized, "unauthorized")
	fixture.Invalid(t, w.Call(t, http.MethodDelete, base+"/x", fixture.AAdmin, nil), "id")
}

func TestListFilters(t *testing.T) {
	w := newWorld(t)
	short, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "short", "expiresAt": "2026-11-01T09:10:00Z"})
	long, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "long", "expiresAt": "2026-11-05T00:00:00Z"})
	b, _ := w.EnrollmentKey(t, fixture.BAdmin, map[string]any{"name": "b"})
	w.Env.Clock.Advance(11 * time.Minute)
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?expired=true", fixture.AAdmin, nil)); len(got) != 1 || got[0] != short {
		t.Fatalf("expired %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?expired=false", fixture.AAdmin, nil)); len(got) != 1 || got[0] != long {
		t.Fatalf("live %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.PXAdmin, nil)); len(got) != 3 {
		t.Fatalf("partner sees %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base+"?orgId="+w.B.ID, fixture.PXAdmin, nil)); len(got) != 1 || got[0] != b {
		t.Fatalf("partner, org B: %v", got)
	}
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.PXSelectedB, nil)); len(got) != 1 || got[0] != b {
		t.Fatalf("partner selected B: %v", got)
	}
	page := fixture.Expect(t, w.Call(t, http.MethodGet, base+"?limit=1&page=2", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if len(page["data"].([]any)) != 1 || page["pagination"].(map[string]any)["total"] != float64(2) {
		t.Fatalf("page %v", page)
	}
	for q, field := range map[string]string{"expired=yes": "expired", "limit=101": "limit", "limit=0": "limit", "page=0": "page", "page=x": "page", "orgId=abc": "orgId"} {
		fixture.Invalid(t, w.Call(t, http.MethodGet, base+"?"+q, fixture.AAdmin, nil), field)
	}
}

func TestTenancy(t *testing.T) {
	w := newWorld(t)
	aKey, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "a"})
	a1Key, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "a1", "siteId": w.A1.ID})
	cKey, _ := w.EnrollmentKey(t, fixture.CAdmin, map[string]any{"name": "c"})
	// Another partner's or organization's key by id: 404 on every route.
	for _, caller := range []string{fixture.PYAdmin, fixture.BAdmin, fixture.CAdmin, fixture.PXSelectedB} {
		for _, r := range []struct{ method, path string }{
			{http.MethodGet, base + "/" + aKey}, {http.MethodPost, base + "/" + aKey + "/rotate"}, {http.MethodDelete, base + "/" + aKey},
		} {
			fixture.NotFound(t, w.Call(t, r.method, r.path, caller, nil))
		}
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+cKey, fixture.PXAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"?orgId="+w.C.ID, fixture.PXAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"?orgId="+w.B.ID, fixture.AAdmin, nil))
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.PXAdmin, map[string]any{"name": "x", "orgId": w.C.ID}))
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "x", "orgId": w.B.ID}))
	fixture.NotFound(t, w.Call(t, http.MethodPost, base, fixture.SysAdmin, map[string]any{"name": "x", "orgId": "7b0b5b6e-5a3a-4c1e-8f00-000000000000"}))
	// Lower roles are refused; no MFA is refused for writes.
	for _, caller := range []string{fixture.AViewer, fixture.ATech} {
		fixture.ExpectError(t, w.Call(t, http.MethodGet, base, caller, nil), http.StatusForbidden, "forbidden")
		fixture.ExpectError(t, w.Call(t, http.MethodPost, base, caller, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.ANoMFA, map[string]any{"name": "x"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+aKey+"/rotate", fixture.ANoMFA, nil), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/"+aKey, fixture.ANoMFA, nil), http.StatusForbidden, "MFA_REQUIRED")
	fixture.Expect(t, w.Call(t, http.MethodGet, base, fixture.ANoMFA, nil), http.StatusOK)
	// A site-restricted admin sees and makes keys of its sites only.
	if got := fixture.IDs(t, w.Call(t, http.MethodGet, base, fixture.ARestricted, nil)); len(got) != 1 || got[0] != a1Key {
		t.Fatalf("restricted sees %v", got)
	}
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+aKey, fixture.ARestricted, nil))
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.ARestricted, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.ARestricted, map[string]any{"name": "x", "siteId": w.A2.ID}), http.StatusForbidden, "forbidden")
	fixture.Expect(t, w.Call(t, http.MethodPost, base, fixture.ARestricted, map[string]any{"name": "x", "siteId": w.A1.ID}), http.StatusCreated)
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.AGroupOnly, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	// API keys and anonymous callers are refused.
	res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base, APIKey: "svc_" + strings.Repeat("a", 40)})
	fixture.ExpectError(t, res, http.StatusUnauthorized, "unauthorized")
	fixture.ExpectError(t, w.Call(t, http.MethodGet, base, "", nil), http.StatusUnauthorized, "unauthorized")
}

func TestExpirySweep(t *testing.T) {
	w := newWorld(t)
	old, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "old"})                                            // expires 10:00
	recent, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "recent", "expiresAt": "2026-11-02T09:30:00Z"}) // expires a day later
	sw := sweepergroup.Sweeper(w.Env.Deps)
	w.Env.Clock.Set(time.Date(2026, 11, 2, 10, 0, 0, 0, time.UTC)) // exactly 24 h after old expired
	n, err := sw.Jobs["enrollment-key-expiry"](context.Background())
	if err != nil || n != 0 {
		t.Fatalf("at 24 h: purged %d (%v)", n, err)
	}
	w.Env.Clock.Advance(time.Minute)
	if err := sw.Handle(context.Background(), sweep.Event{Job: "enrollment-key-expiry"}); err != nil {
		t.Fatal(err)
	}
	st := enrollment.Store{St: w.Env.Store}
	if _, err := st.Key(context.Background(), w.A.ID, old); err == nil {
		t.Fatal("the old key survived the sweep")
	}
	if _, err := st.Key(context.Background(), w.A.ID, recent); err != nil {
		t.Fatalf("the recent key was purged: %v", err)
	}
	n, err = sw.Jobs["enrollment-key-expiry"](context.Background())
	if err != nil || n != 0 {
		t.Fatalf("second run purged %d (%v)", n, err)
	}
	recs, _ := audit.List(context.Background(), w.Env.Store, "ORG#"+w.A.ID, 10)
	purges := 0
	for _, r := range recs {
		if r.Action == "enrollment_key.purge" && r.ResourceID == old && r.Actor.Type == "system" {
			purges++
		}
	}
	if purges != 1 {
		t.Fatalf("%d purge records", purges)
	}
}

func TestHashIsPeppered(t *testing.T) {
	raw := strings.Repeat("ab", 32)
	if enrollment.Hash([]byte("p1"), raw) == enrollment.Hash([]byte("p2"), raw) {
		t.Fatal("the pepper does not change the hash")
	}
	// Golden vector: HMAC-SHA256("pepper", 64 x "ab").
	if got := enrollment.Hash([]byte("pepper"), raw); got != goldenHash {
		t.Fatalf("hash %s", got)
	}
}

const goldenHash = "db999a7ffe14b530712880fc41a824286dabd5f95f484fa63f5e500e31f1def4"

func TestConcurrentRotationsHaveOneWinner(t *testing.T) {
	w := newWorld(t)
	id, _ := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"name": "race", "maxUsage": 100})
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	keys := map[string]bool{}
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base + "/" + id + "/rotate", Token: w.Tokens[fixture.AAdmin]})
			mu.Lock()
			defer mu.Unlock()
			codes[res.Status]++
			if res.Status == http.StatusOK {
				var k struct{ Key string }
				_ = json.Unmarshal(res.Body, &k)
				keys[k.Key] = true
			}
		}()
	}
	wg.Wait()
	// Rotations that read the same version have one winner (409 race_lost for the
	// rest); one that starts after a winner committed rotates again, legitimately.
	if codes[http.StatusOK] < 1 || codes[http.StatusOK]+codes[http.StatusConflict] != 20 {
		t.Fatalf("statuses %v", codes)
	}
	// Whatever the interleaving, exactly one issued key works: the last one.
	working := 0
	for k := range keys {
		if w.Enroll(t, k, "try").Status == http.StatusCreated {
			working++
		}
	}
	if working != 1 {
		t.Fatalf("%d of %d issued keys work, want exactly 1", working, len(keys))
	}
}

func TestDefaultLifetimeFromConfig(t *testing.T) {
	env := testenv.New(t, "ENROLLMENT_KEY_DEFAULT_TTL_MINUTES", "15")
	p := fixture.Partner(t, env, "P")
	o := fixture.Org(t, env, p.ID, "O")
	c := fixture.User(t, env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	api := fixture.API(t, env, "enrollment-keys")
	k := fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: http.MethodPost, Path: base, Token: c.Token, Body: map[string]any{"name": "x"}}), http.StatusCreated).JSON(t)
	if k["expiresAt"] != "2026-11-01T09:15:00.000Z" {
		t.Fatalf("expiresAt %v, want now + 15 minutes", k["expiresAt"])
	}
}
