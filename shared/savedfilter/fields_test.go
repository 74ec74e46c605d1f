package savedfilter_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/gale-rmm/gale/shared/filter"
	"github.com/gale-rmm/gale/tests/fixture"
)

// GET /filters/fields answers the engine's catalogue as it is (so the answer
// cannot drift from what Parse accepts) to every caller who may read devices,
// restricted or in another tenant alike (it holds no tenant data), for no
// DynamoDB call beyond authentication; a caller without devices:read is
// refused.
func TestFieldsListTheEngineCatalogue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var want struct {
		Data   []filter.FieldInfo `json:"data"`
		Custom filter.FieldInfo   `json:"custom"`
	}
	for _, caller := range []string{fixture.AAdmin, fixture.AViewer, fixture.ARestricted, fixture.AGroupOnly, fixture.BAdmin, fixture.PYAdmin, fixture.SysAdmin} {
		res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/fields", caller, nil), http.StatusOK)
		fixture.Budget(t, res, 1) // authentication only: the catalogue is in memory
		if err := json.Unmarshal(res.Body, &want); err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(want.Data, filter.Fields(), sameField) || !sameField(want.Custom, filter.Custom()) {
			t.Fatalf("%s: fields %s", caller, res.Body)
		}
	}
	byKey := map[string]filter.FieldInfo{}
	for _, f := range want.Data {
		byKey[f.Key] = f
	}
	if s := byKey["status"]; s.Type != filter.TypeEnum || !slices.Contains(s.Values, "quarantined") || !slices.Contains(s.Operators, "in") {
		t.Errorf("status: %+v", s)
	}
	if h := byKey["hostname"]; h.Type != filter.TypeString || h.Values != nil || !slices.Contains(h.Operators, "matches") {
		t.Errorf("hostname: %+v", h)
	}
	if want.Custom.Key != "custom.{key}" || want.Custom.Type != filter.TypeString {
		t.Errorf("custom: %+v", want.Custom)
	}

	// An API key reads it with devices:read and is refused without.
	key := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "ci",
		"scopes": []string{"devices:read"}}), http.StatusCreated).JSON(t)["key"].(string)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base + "/fields", APIKey: key}), http.StatusOK)
	other := fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/api-keys", fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "scripts",
		"scopes": []string{"scripts:read"}}), http.StatusCreated).JSON(t)["key"].(string)
	fixture.ExpectError(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base + "/fields", APIKey: other}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: base + "/fields"}), http.StatusUnauthorized, "unauthorized")
}

func sameField(a, b filter.FieldInfo) bool {
	return a.Key == b.Key && a.Type == b.Type && slices.Equal(a.Operators, b.Operators) && slices.Equal(a.Values, b.Values)
}
