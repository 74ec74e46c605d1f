package review_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/app/accessreviewsgroup"
	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/clock"
	"github.com/gale-rmm/gale/shared/review"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/sweep"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const base = "/api/v1/access-reviews"

type detail struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	ReviewerName string `json:"reviewerName"`
	ItemCount    int    `json:"itemCount"`
	RevokedCount *int   `json:"revokedCount"`
	Items        []struct {
		ID, UserID, UserName, UserEmail, RoleID, RoleName, Decision string
		LastActiveAt                                                *string
		ReviewedBy                                                  *string
		Permissions                                                 []string
	} `json:"items"`
}

func getDetail(t *testing.T, w *fixture.World, caller, id string) detail {
	t.Helper()
	var d detail
	fixture.Expect(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil), http.StatusOK).Decode(t, &d)
	return d
}

func create(t *testing.T, w *fixture.World, caller string, body map[string]any) (string, int) {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base, caller, body), http.StatusCreated)
	var c struct {
		ID        string
		Status    string
		ItemCount int
	}
	res.Decode(t, &c)
	if c.Status != "pending" {
		t.Fatalf("created %+v", c)
	}
	return c.ID, c.ItemCount
}

// members counts the memberships of a tenant.
func members(t *testing.T, w *fixture.World, scope authz.Scope, partnerID, orgID string) map[string]bool {
	t.Helper()
	ms, err := w.Env.Users.Members(context.Background(), scope, partnerID, orgID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range ms {
		out[m.UserID] = true
	}
	return out
}

// audits counts the audit records of action in the table.
func audits(t *testing.T, w *fixture.World, action string) int {
	t.Helper()
	return strings.Count(fixture.Scan(t, w.Env), "action:"+action+" ")
}

func TestReviewLifecycle(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews", "api-keys", "service-principals", "scripts")
	// An administrator who will be revoked, holding an API key of A.
	leaver := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID, MFA: true, Name: "Leaver"})
	created := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/api-keys", Token: leaver.Token,
		Body: map[string]any{"orgId": w.A.ID, "name": "leaver key", "scopes": []string{"scripts:read"}}}), http.StatusCreated).JSON(t)
	key, keyID := created["key"].(string), created["id"].(string)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/scripts", APIKey: key}), http.StatusOK)
	// A service principal the leaver created: its key depends on no user.
	spKey := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/service-principals", Token: leaver.Token,
		Body: map[string]any{"orgId": w.A.ID, "name": "leaver robot", "scopes": []string{"scripts:read"}}}), http.StatusCreated).JSON(t)["key"].(string)

	inA := members(t, w, authz.ScopeOrg, "", w.A.ID)
	res := w.Call(t, http.MethodPost, base, fixture.AAdmin, map[string]any{"name": "Q4 review", "description": "quarterly",
		"dueDate": "2026-12-31T00:00:00Z"})
	fixture.Expect(t, res, http.StatusCreated)
	fixture.Budget(t, res, 6)
	id := res.JSON(t)["id"].(string)
	res = w.Call(t, http.MethodGet, base+"/"+id, fixture.AAdmin, nil)
	fixture.Expect(t, res, http.StatusOK)
	fixture.Budget(t, res, 5)
	var d detail
	res.Decode(t, &d)
	if d.Status != "pending" || d.ItemCount != len(inA) || len(d.Items) != len(inA) || d.ReviewerName != "Test User" {
		t.Fatalf("detail %+v, members %d", d, len(inA))
	}
	var leaverItem string
	for _, it := range d.Items {
		if !inA[it.UserID] || it.Decision != "pending" || it.UserEmail == "" {
			t.Fatalf("item %+v", it)
		}
		if it.UserID == leaver.UserID {
			leaverItem = it.ID
			if it.RoleName != "Org Admin" || !contains(it.Permissions, "users:write") || it.UserName != "Leaver" {
				t.Fatalf("leaver item %+v", it)
			}
		}
	}
	// The first decision moves the review to in_progress; reviewedBy and reviewedAt are set.
	res = w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+leaverItem, fixture.AAdmin, map[string]any{"decision": "revoked", "notes": "left the company"})
	fixture.Expect(t, res, http.StatusOK)
	fixture.Budget(t, res, 4)
	if got := res.JSON(t); got["decision"] != "revoked" || got["notes"] != "left the company" || got["reviewedAt"] == nil {
		t.Fatalf("decision %v", got)
	}
	if d := getDetail(t, w, fixture.ANoMFA, id); d.Status != "in_progress" {
		t.Fatalf("status %s after the first decision", d.Status)
	}
	// Completion is refused while an item is pending.
	if e := fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/complete", fixture.AAdmin, nil), http.StatusBadRequest, "bad_request"); e["error"] != "Cannot complete review with pending items" {
		t.Fatalf("complete with a pending item: %v", e)
	}
	// Every transition of an item: pending -> approved -> pending -> approved.
	for _, it := range d.Items {
		if it.ID == leaverItem {
			continue
		}
		for _, dec := range []string{"approved", "pending", "approved"} {
			fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+it.ID, fixture.AAdmin, map[string]any{"decision": dec}), http.StatusOK)
		}
	}
	res = w.Call(t, http.MethodPost, base+"/"+id+"/complete", fixture.AAdmin, nil)
	fixture.Expect(t, res, http.StatusOK)
	t.Logf("complete with one revoked administrator: %d DynamoDB calls", res.DBCalls)
	fixture.Budget(t, res, 20)
	if got := res.JSON(t); got["status"] != "completed" || got["revokedCount"] != float64(1) || got["completedAt"] == nil {
		t.Fatalf("complete %v", got)
	}
	// The leaver is gone from A: membership, sessions and key.
	if members(t, w, authz.ScopeOrg, "", w.A.ID)[leaver.UserID] {
		t.Fatal("the revoked user is still a member")
	}
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base, Token: leaver.Token}), http.StatusUnauthorized)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/scripts", APIKey: key}), http.StatusUnauthorized)
	if st := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/api-keys/"+keyID, fixture.AAdmin, nil), http.StatusOK).JSON(t)["status"]; st != "revoked" {
		t.Fatalf("the leaver's key is %v, want revoked", st)
	}
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/scripts", APIKey: spKey}), http.StatusOK)
	// A completed review is immutable.
	e := fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+leaverItem, fixture.AAdmin, map[string]any{"decision": "approved"}), http.StatusBadRequest, "bad_request")
	if e["error"] != "Cannot modify completed review" {
		t.Fatalf("%v", e)
	}
	e = fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/"+id+"/complete", fixture.AAdmin, nil), http.StatusBadRequest, "bad_request")
	if e["error"] != "Review is already completed" {
		t.Fatalf("%v", e)
	}
	if d := getDetail(t, w, fixture.AAdmin, id); d.Status != "completed" || d.RevokedCount == nil || *d.RevokedCount != 1 {
		t.Fatalf("completed detail %+v", d)
	}
	w.Env.Clock.Advance(time.Minute)
	second, _ := create(t, w, fixture.AAdmin, map[string]any{"name": "second"})
	var list struct {
		Data []struct{ ID, Status, ReviewerName string }
	}
	res = w.Call(t, http.MethodGet, base, fixture.ANoMFA, nil)
	fixture.Expect(t, res, http.StatusOK).Decode(t, &list)
	fixture.Budget(t, res, 4)
	if len(list.Data) != 2 || list.Data[0].ID != id || list.Data[1].ID != second || list.Data[0].ReviewerName != "Test User" {
		t.Fatalf("list %+v", list)
	}
	for action, n := range map[string]int{"access_review.create": 2, "access_review.complete": 1, "user.remove": 1} {
		if got := audits(t, w, action); got != n {
			t.Errorf("%d %s audit records, want %d", got, action, n)
		}
	}
	if got := audits(t, w, "access_review.item.update"); got != 1+3*(len(inA)-1) {
		t.Errorf("%d item updates audited, want %d", got, 1+3*(len(inA)-1))
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestReviewScopeAndTenancy(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	id, _ := create(t, w, fixture.AAdmin, map[string]any{"name": "A review"})
	d := getDetail(t, w, fixture.AAdmin, id)
	item := d.Items[0].ID
	// Another organization, another partner, the partner itself: 404 on every route, nothing listed.
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PXAdmin, fixture.PYAdmin} {
		fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/"+id, caller, nil))
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+item, caller, map[string]any{"decision": "revoked"}))
		fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/"+id+"/complete", caller, nil))
		if ids := fixture.IDs(t, w.Call(t, http.MethodGet, base, caller, nil)); len(ids) != 0 {
			t.Fatalf("%s lists %v", caller, ids)
		}
	}
	// System scope and partial partner access are refused; lower roles cannot write.
	for caller, msg := range map[string]string{fixture.SysAdmin: "Partner or organization context required",
		fixture.PXSelectedB: "Full partner organization access required"} {
		for _, c := range []struct {
			method, path string
			body         any
		}{{http.MethodGet, base, nil}, {http.MethodPost, base, map[string]any{"name": "x"}}, {http.MethodGet, base + "/" + id, nil}} {
			e := fixture.ExpectError(t, w.Call(t, c.method, c.path, caller, c.body), http.StatusForbidden, "forbidden")
			if e["error"] != msg {
				t.Fatalf("%s %s as %s: %v", c.method, c.path, caller, e)
			}
		}
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base, fixture.AViewer, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+item, fixture.ATech, map[string]any{"decision": "approved"}), http.StatusForbidden, "forbidden")
	// A partner review holds the partner's own memberships only: never an
	// organization's member, so completing it cannot touch an organization.
	pid, n := create(t, w, fixture.PXAdmin, map[string]any{"name": "partner review"})
	pd := getDetail(t, w, fixture.PXAdmin, pid)
	inA := members(t, w, authz.ScopeOrg, "", w.A.ID)
	if n != 2 {
		t.Fatalf("partner review of %d items, want PX's 2 partner members", n)
	}
	for _, it := range pd.Items {
		if inA[it.UserID] || (it.UserID != w.Users[fixture.PXAdmin] && it.UserID != w.Users[fixture.PXSelectedB]) {
			t.Fatalf("partner review item %+v", it)
		}
		// A's admin cannot reach the partner's review.
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+pid+"/items/"+it.ID, fixture.AAdmin, map[string]any{"decision": "revoked"}))
	}
	// An item id of A's review under the partner's review is unknown.
	fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/"+pid+"/items/"+item, fixture.PXAdmin, map[string]any{"decision": "revoked"}))
	for _, it := range pd.Items {
		dec := "approved"
		if it.UserID == w.Users[fixture.PXSelectedB] {
			dec = "revoked"
		}
		fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+pid+"/items/"+it.ID, fixture.PXAdmin, map[string]any{"decision": dec}), http.StatusOK)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+pid+"/complete", fixture.PXAdmin, nil), http.StatusOK)
	if after := members(t, w, authz.ScopeOrg, "", w.A.ID); len(after) != len(inA) {
		t.Fatalf("a partner review changed A's members: %d -> %d", len(inA), len(after))
	}
	if members(t, w, authz.ScopePartner, w.PX.ID, "")[w.Users[fixture.PXSelectedB]] {
		t.Fatal("the revoked partner member stayed")
	}
}

func TestReviewAboveLevelAndKeys(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews", "roles", "api-keys")
	// A custom role holding users:* only may review but not revoke an Org Admin.
	rid := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/roles", fixture.AAdmin, map[string]any{"name": "user admin",
		"permissions": []map[string]string{{"resource": "users", "action": "read"}, {"resource": "users", "action": "write"}}}), http.StatusCreated).JSON(t)["id"].(string)
	slice := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: rid, RoleOwner: "ORG#" + w.A.ID, MFA: true})
	id := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base, Token: slice.Token, Body: map[string]any{"name": "r"}}), http.StatusCreated).JSON(t)["id"].(string)
	d := getDetail(t, w, fixture.AAdmin, id)
	for _, it := range d.Items {
		path := base + "/" + id + "/items/" + it.ID
		if it.UserID == w.Users[fixture.AAdmin] {
			fixture.ExpectError(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPatch, Path: path, Token: slice.Token, Body: map[string]any{"decision": "revoked"}}), http.StatusForbidden, "forbidden")
			fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPatch, Path: path, Token: slice.Token, Body: map[string]any{"decision": "approved"}}), http.StatusOK)
		}
		if it.UserID == slice.UserID && (it.RoleName != "user admin" || strings.Join(it.Permissions, ",") != "users:read,users:write") {
			t.Fatalf("custom role item %+v", it)
		}
	}
	// An API key with users:read and users:write reviews as its creator.
	key := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "reviews",
		"scopes": []string{"users:read", "users:write"}}), http.StatusCreated).JSON(t)["key"].(string)
	res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base, APIKey: key, Body: map[string]any{"name": "by key"}})
	fixture.Expect(t, res, http.StatusCreated)
	kd := getDetail(t, w, fixture.AAdmin, res.JSON(t)["id"].(string))
	if kd.ReviewerName != "Test User" {
		t.Fatalf("key review %+v", kd.ReviewerName)
	}
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base + "/" + id, APIKey: key}), http.StatusOK)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPatch, Path: base + "/" + kd.ID + "/items/" + kd.Items[0].ID, APIKey: key,
		Body: map[string]any{"decision": "approved"}}), http.StatusOK)
	readOnly := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "read",
		"scopes": []string{"users:read"}}), http.StatusCreated).JSON(t)["key"].(string)
	fixture.ExpectError(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: base, APIKey: readOnly, Body: map[string]any{"name": "x"}}), http.StatusForbidden, "forbidden")
}

// TestReviewKeepsLastAdministrator: a review that revokes a tenant's only
// administrator completes, and the tenant keeps them (shared/user's
// last-administrator rule), counted apart from the revocations.
func TestReviewKeepsLastAdministrator(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	id, n := create(t, w, fixture.BAdmin, map[string]any{"name": "alone"})
	if n != 1 {
		t.Fatalf("%d items in B", n)
	}
	item := getDetail(t, w, fixture.BAdmin, id).Items[0].ID
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+item, fixture.BAdmin, map[string]any{"decision": "revoked"}), http.StatusOK)
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/"+id+"/complete", fixture.BAdmin, nil), http.StatusOK).JSON(t)
	if res["revokedCount"] != float64(0) || !members(t, w, authz.ScopeOrg, "", w.B.ID)[w.Users[fixture.BAdmin]] {
		t.Fatalf("complete %v", res)
	}
}

func TestConcurrentDecisionsOnOneItem(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	id, _ := create(t, w, fixture.AAdmin, map[string]any{"name": "race"})
	item := getDetail(t, w, fixture.AAdmin, id).Items[0].ID
	var ok, lost atomic.Int32
	var wg sync.WaitGroup
	for i := 0; i < 24; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			dec := []string{"approved", "revoked"}[i%2]
			res := w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+item, fixture.AAdmin, map[string]any{"decision": dec, "notes": fmt.Sprint(i)})
			switch res.Status {
			case http.StatusOK:
				ok.Add(1)
			case http.StatusConflict:
				lost.Add(1)
			default:
				t.Errorf("decision %d: %d %s", i, res.Status, res.Body)
			}
		}(i)
	}
	wg.Wait()
	if ok.Load() < 1 || ok.Load()+lost.Load() != 24 {
		t.Fatalf("%d recorded, %d lost", ok.Load(), lost.Load())
	}
	if n := audits(t, w, "access_review.item.update"); n != int(ok.Load()) {
		t.Fatalf("%d audited decisions, %d recorded", n, ok.Load())
	}
	// Completions racing each other: exactly one 200.
	for _, it := range getDetail(t, w, fixture.AAdmin, id).Items {
		fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+it.ID, fixture.AAdmin, map[string]any{"decision": "approved"}), http.StatusOK)
	}
	var done atomic.Int32
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := w.Call(t, http.MethodPost, base+"/"+id+"/complete", fixture.AAdmin, nil)
			switch res.Status {
			case http.StatusOK:
				done.Add(1)
			case http.StatusBadRequest, http.StatusConflict:
			default:
				t.Errorf("complete: %d %s", res.Status, res.Body)
			}
		}()
	}
	wg.Wait()
	if done.Load() != 1 || audits(t, w, "access_review.complete") != 1 {
		t.Fatalf("%d completions answered 200", done.Load())
	}
}

func TestReviewBadInput(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	id, _ := create(t, w, fixture.AAdmin, map[string]any{"name": "r"})
	item := getDetail(t, w, fixture.AAdmin, id).Items[0].ID
	before := fixture.Scan(t, w.Env)
	for _, c := range []struct {
		method, path string
		body         any
		field        string
	}{
		{http.MethodPost, base, map[string]any{}, "name"},
		{http.MethodPost, base, map[string]any{"name": ""}, "name"},
		{http.MethodPost, base, map[string]any{"name": strings.Repeat("n", 256)}, "name"},
		{http.MethodPost, base, map[string]any{"name": 3}, "name"},
		{http.MethodPost, base, map[string]any{"name": "x\u0000"}, "name"},
		{http.MethodPost, base, map[string]any{"name": "x", "description": strings.Repeat("d", 2001)}, "description"},
		{http.MethodPost, base, map[string]any{"name": "x", "dueDate": "next week"}, "dueDate"},
		{http.MethodPost, base, map[string]any{"name": "x", "reviewerId": "zz"}, "reviewerId"},
		{http.MethodPost, base, map[string]any{"name": "x", "reviewerId": uuid.NewString()}, "reviewerId"},
		{http.MethodPost, base, map[string]any{"name": "x", "reviewerId": w.Users[fixture.BAdmin]}, "reviewerId"},
		{http.MethodPost, base, map[string]any{"name": "x", "orgId": w.A.ID}, "orgId"},
		{http.MethodPost, base, `{"name":"x","Name":"y"}`, "Name"},
		{http.MethodPost, base, `[1]`, "body"},
		{http.MethodGet, base + "/zz", nil, "id"},
		{http.MethodPost, base + "/zz/complete", nil, "id"},
		{http.MethodPost, base + "/" + id + "/complete", map[string]any{"force": true}, "force"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{}, "decision"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{"decision": "maybe"}, "decision"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{"decision": true}, "decision"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{"decision": "approved", "notes": strings.Repeat("n", 2001)}, "notes"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{"decision": "approved", "notes": 5}, "notes"},
		{http.MethodPatch, base + "/" + id + "/items/" + item, map[string]any{"decision": "approved", "reviewedBy": "me"}, "reviewedBy"},
		{http.MethodPatch, base + "/" + id + "/items/zz", map[string]any{"decision": "approved"}, "itemId"},
		{http.MethodPatch, base + "/zz/items/" + item, map[string]any{"decision": "approved"}, "id"},
	} {
		fixture.Invalid(t, w.Call(t, c.method, c.path, fixture.AAdmin, c.body), c.field)
	}
	for _, res := range []fixture.Response{w.Call(t, http.MethodGet, base+"/"+uuid.NewString(), fixture.AAdmin, nil),
		w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+uuid.NewString(), fixture.AAdmin, map[string]any{"decision": "approved"})} {
		if e := fixture.ExpectError(t, res, http.StatusNotFound, "not_found"); e["error"] != "Access review not found" {
			t.Fatalf("unknown review or item: %v", e)
		}
	}
	if after := fixture.Scan(t, w.Env); stripAudit(after) != stripAudit(before) {
		t.Fatal("bad input changed the table")
	}
}

// stripAudit drops audit records and rate-limit cells (refusals may write them).
func stripAudit(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// seedMembers adds n active viewers to organization o, directly in the table.
func seedMembers(t *testing.T, w *fixture.World, o tenant.Organization, n int) []string {
	t.Helper()
	ctx := context.Background()
	now := clock.Format(w.Env.Clock.Now())
	var ids []string
	tx, added := &store.Tx{}, 0
	flush := func() {
		if added == 0 {
			return
		}
		tx.Add(tenant.CountOrg(o.ID, "", tenant.CountMembers, added))
		if err := w.Env.Store.Commit(ctx, tx); err != nil {
			t.Fatal(err)
		}
		tx, added = &store.Tx{}, 0
	}
	for i := 0; i < n; i++ {
		u := &user.User{ID: uuid.NewString(), Email: fmt.Sprintf("bulk-%03d-%s@example.com", i, o.ID[:8]), Name: fmt.Sprintf("Bulk %03d", i),
			Status: user.StatusActive, CreatedAt: now, UpdatedAt: now}
		m := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, OrgID: o.ID, PartnerID: o.PartnerID,
			RoleID: role.OrgViewerID, RoleOwner: role.SystemOwner, CreatedAt: now}
		tx.Add(user.CreateWrites(u)...)
		tx.Add(user.AddMembershipWrite(m))
		ids = append(ids, u.ID)
		if added++; tx.Len() >= 96 {
			flush()
		}
	}
	flush()
	return ids
}

// failing removes users until its budget runs out, then fails every call.
type failing struct {
	inner review.MemberRemover
	left  atomic.Int32
}

func (f *failing) RemoveMember(ctx context.Context, r review.Removal) error {
	if f.left.Add(-1) < 0 {
		return errors.New("injected failure")
	}
	return f.inner.RemoveMember(ctx, r)
}

// crashingAPI serves the access-review routes with a remover that fails
// after n removals.
func crashingAPI(w *fixture.World, n int) http.Handler {
	svc := accessreviewsgroup.Service(w.Env.Deps)
	f := &failing{inner: svc.Remover}
	f.left.Store(int32(n))
	svc.Remover = f
	rt := w.Env.Router()
	(&review.Handler{Svc: svc}).Routes(rt)
	return w.Env.Edge(rt)
}

// TestLargeCompletionResumesAfterCrashes completes a review of more than 150
// items, 170 of them revoked, through two crashes (after 60 and after 40 more
// removals): between them the review is frozen and refuses changes, and the
// resumed runs (a second call, then the sweeper) finish the work exactly once.
func TestLargeCompletionResumesAfterCrashes(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "access-reviews")
	bulk := seedMembers(t, w, w.A, 180)
	revoke := map[string]bool{}
	for _, id := range bulk[:170] {
		revoke[id] = true
	}
	id, n := create(t, w, fixture.AAdmin, map[string]any{"name": "big"})
	if n < 180 {
		t.Fatalf("%d items", n)
	}
	d := getDetail(t, w, fixture.AAdmin, id)
	for _, it := range d.Items {
		dec := "approved"
		if revoke[it.UserID] {
			dec = "revoked"
		}
		fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+it.ID, fixture.AAdmin, map[string]any{"decision": dec}), http.StatusOK)
	}
	tok := w.Tokens[fixture.AAdmin]
	complete := fixture.Request{Method: http.MethodPost, Path: base + "/" + id + "/complete", Token: tok}
	fixture.Expect(t, fixture.Do(t, crashingAPI(w, 60), complete), http.StatusInternalServerError)
	check := func(removed int) {
		t.Helper()
		left := members(t, w, authz.ScopeOrg, "", w.A.ID)
		gone := 0
		for _, u := range bulk {
			if !left[u] {
				if !revoke[u] {
					t.Fatalf("approved user %s removed", u)
				}
				gone++
			}
		}
		if gone != removed {
			t.Fatalf("%d removed, want %d", gone, removed)
		}
		d := getDetail(t, w, fixture.AAdmin, id)
		if d.Status != "in_progress" || d.RevokedCount != nil {
			t.Fatalf("interrupted review shows %s", d.Status)
		}
		// Frozen: no decision changes while the completion is unfinished.
		e := fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/"+id+"/items/"+d.Items[0].ID, fixture.AAdmin, map[string]any{"decision": "pending"}), http.StatusBadRequest, "bad_request")
		if e["error"] != "Cannot modify completed review" {
			t.Fatalf("%v", e)
		}
	}
	check(60)
	fixture.Expect(t, fixture.Do(t, crashingAPI(w, 40), complete), http.StatusInternalServerError)
	check(100)
	// The sweeper leaves a fresh marker alone, then resumes a stale one.
	sw := sweepergroup.Sweeper(w.Env.Deps)
	if err := sw.Handle(context.Background(), sweep.Event{Job: "access-review-completion"}); err != nil {
		t.Fatal(err)
	}
	check(100)
	w.Env.Clock.Advance(review.StaleAfter + time.Second)
	if err := sw.Handle(context.Background(), sweep.Event{Job: "access-review-completion"}); err != nil {
		t.Fatal(err)
	}
	d = getDetail(t, w, fixture.AAdmin, id)
	if d.Status != "completed" || d.RevokedCount == nil || *d.RevokedCount != 170 {
		t.Fatalf("after the sweep: %s %v", d.Status, d.RevokedCount)
	}
	left := members(t, w, authz.ScopeOrg, "", w.A.ID)
	for _, u := range bulk {
		if left[u] == revoke[u] {
			t.Fatalf("user %s: member %v, revoked %v", u, left[u], revoke[u])
		}
	}
	if got := audits(t, w, "user.remove"); got != 170 {
		t.Fatalf("%d removals audited, want 170", got)
	}
	if got := audits(t, w, "access_review.complete"); got != 1 {
		t.Fatalf("%d completions audited", got)
	}
	// A resumed call afterwards is the already-completed answer; the sweep finds nothing.
	fixture.ExpectError(t, fixture.Do(t, w.API, complete), http.StatusBadRequest, "bad_request")
	if err := sw.Handle(context.Background(), sweep.Event{Job: "access-review-completion"}); err != nil {
		t.Fatal(err)
	}
	if got := audits(t, w, "user.remove"); got != 170 {
		t.Fatalf("%d removals audited after a second sweep", got)
	}
}
