package pam_test

import (
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestPatchRefusesNullAndWrongTypeByField: on the rule, signer-group and
// software-policy PATCH bodies, null on a field the document does not mark
// nullable, and a value of the wrong type on any field, is a 400 naming the
// field (a field inside timeWindow by its dotted path); null on a nullable
// field clears it.
func TestPatchRefusesNullAndWrongTypeByField(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	r := rule(t, w, fixture.AAdmin, map[string]any{"name": "r", "verdict": "auto_deny", "matchUser": "u", "matchPathGlob": "C:/Temp/**"})
	ruleURL := base + "/rules/" + r["id"].(string)
	g := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.AAdmin, map[string]any{"name": "vendors",
		"description": "d", "signers": []string{"Fabrikam"}}), http.StatusCreated).JSON(t)["signerGroups"].([]any)[0].(map[string]any)
	groupURL := base + "/signer-groups/" + g["id"].(string)
	sp := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/software-policies", fixture.AAdmin, map[string]any{"name": "tools", "mode": "allowlist",
		"executables": []map[string]any{{"signer": "Fabrikam"}}}), http.StatusCreated).JSON(t)["softwarePolicy"].(map[string]any)
	policyURL := base + "/software-policies/" + sp["id"].(string)
	for _, c := range []struct {
		url, field string
		value      any
		at         string
	}{
		{ruleURL, "name", nil, "name"}, {ruleURL, "name", 3, "name"},
		{ruleURL, "verdict", nil, "verdict"}, {ruleURL, "priority", nil, "priority"},
		{ruleURL, "enabled", nil, "enabled"}, {ruleURL, "enabled", "yes", "enabled"},
		{ruleURL, "matchUser", 7, "matchUser"}, {ruleURL, "matchRiskTier", "high", "matchRiskTier"},
		{ruleURL, "matchNegate", "user", "matchNegate"},
		{ruleURL, "timeWindow", map[string]any{"start": 9, "end": "17:00"}, "timeWindow.start"},
		{groupURL, "name", nil, "name"}, {groupURL, "signers", nil, "signers"}, {groupURL, "description", 5, "description"},
		{policyURL, "name", nil, "name"}, {policyURL, "mode", nil, "mode"}, {policyURL, "executables", nil, "executables"},
		{policyURL, "priority", "1", "priority"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPatch, c.url, fixture.AAdmin, map[string]any{c.field: c.value}), c.at)
	}
	got := fixture.Expect(t, w.Call(t, http.MethodPatch, ruleURL, fixture.AAdmin, map[string]any{"matchPathGlob": nil}), http.StatusOK).JSON(t)["rule"].(map[string]any)
	if got["matchPathGlob"] != nil || got["matchUser"] != "u" || got["name"] != "r" || got["enabled"] != true {
		t.Fatalf("rule after clearing matchPathGlob: %v", got)
	}
	cleared := fixture.Expect(t, w.Call(t, http.MethodPatch, groupURL, fixture.AAdmin, map[string]any{"description": nil}), http.StatusOK).JSON(t)["signerGroups"].([]any)[0].(map[string]any)
	if cleared["description"] != nil || cleared["name"] != "vendors" {
		t.Fatalf("signer group after clearing description: %v", cleared)
	}
}
