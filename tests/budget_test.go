package tests

import (
	"net/http"
	"sort"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestEveryOperationHasABudget enumerates the operations of the OpenAPI
// document and fails when one has no DynamoDB call budget in fixture.Budgets
// or no capacity budget in fixture.CapacityBudgets
// (which fixture.Do asserts on every exchange), or when a budget names no
// documented operation. A new route is budgeted in the change that documents it.
func TestEveryOperationHasABudget(t *testing.T) {
	documented := map[string]bool{}
	for _, op := range operations(t) {
		documented[op.method+" "+op.path] = true
	}
	var missing, stray []string
	for op := range documented {
		if b, ok := fixture.Budgets[op]; !ok {
			missing = append(missing, op)
		} else if b < 0 {
			t.Errorf("%s: negative budget %d", op, b)
		}
		if _, ok := fixture.CapacityBudgets[op]; !ok {
			t.Errorf("documented operation without a capacity budget in fixture.CapacityBudgets: %s (make budgets)", op)
		}
	}
	for op := range fixture.CapacityBudgets {
		if !documented[op] {
			t.Errorf("fixture.CapacityBudgets names an operation the OpenAPI document does not have: %s", op)
		}
	}
	for op := range fixture.Budgets {
		if !documented[op] {
			stray = append(stray, op)
		}
	}
	sort.Strings(missing)
	sort.Strings(stray)
	for _, op := range missing {
		t.Errorf("documented operation without a DynamoDB call budget in fixture.Budgets: %s", op)
	}
	for _, op := range stray {
		t.Errorf("fixture.Budgets names an operation the OpenAPI document does not have: %s", op)
	}
	if len(documented) < 100 {
		t.Errorf("only %d documented operations found", len(documented))
	}
}

// TestBudgetsOfRoutesNoHandlerTestServes exercises, through fixture.Do and so
// against their budgets, the documented operations that no handler test of
// their package serves through fixture.Do: the reference page (served from
// memory: no DynamoDB call), the /api/v1 spelling of the pending-count of
// account deletions (the handler tests use the /admin alias) and reading one
// service principal.
func TestBudgetsOfRoutesNoHandlerTestServes(t *testing.T) {
	w := fixture.NewWorld(t, "health", "admin", "service-principals")
	for _, p := range []string{"/api/v1/docs", "/api/v1/docs/scalar.js"} {
		res := w.Call(t, http.MethodGet, p, "", nil)
		// 200 once `make docs` has built the bundle; the budget holds either way.
		if res.DBCalls != 0 {
			t.Errorf("GET %s made %d DynamoDB calls", p, res.DBCalls)
		}
	}
	var c struct {
		Count int `json:"count"`
	}
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/admin/account-deletion-requests/pending-count", fixture.SysAdmin, nil), http.StatusOK).Decode(t, &c)
	if c.Count != 0 {
		t.Errorf("pending count %d in a world without requests", c.Count)
	}
	var sp struct {
		ID string `json:"id"`
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/service-principals", fixture.AAdmin,
		map[string]any{"orgId": w.A.ID, "name": "budgeted", "scopes": []string{"devices:read"}}), http.StatusCreated).Decode(t, &sp)
	if sp.ID == "" {
		t.Fatal("no principal id")
	}
	fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/service-principals/"+sp.ID, fixture.AAdmin, nil), http.StatusOK)
}
