package pam_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestRulesCRUDAndValidation: create, list in priority order, PATCH merged
// and validated, delete; validation rules 1-5 and bad input name the field;
// restrictions; audit.
func TestRulesCRUDAndValidation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := rule(t, w, fixture.AAdmin, map[string]any{"name": "b", "verdict": "require_approval", "matchUser": "x", "priority": 50})
	b := rule(t, w, fixture.AAdmin, map[string]any{"name": "a", "verdict": "auto_deny", "matchPathGlob": "C:/Temp/**", "siteId": w.A1.ID})
	if b["priority"] != float64(100) || b["enabled"] != true || b["siteId"] != w.A1.ID {
		t.Fatalf("defaults %v", b)
	}
	res := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/rules", fixture.AAdmin, nil), http.StatusOK)
	fixture.Budget(t, res, 2)
	var list struct {
		Rules []struct{ ID string }
	}
	res.Decode(t, &list)
	if len(list.Rules) != 2 || list.Rules[0].ID != a["id"] {
		t.Fatalf("order %s", res.Body)
	}
	id := a["id"].(string)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"verdict": "require_approval", "matchUser": "x"}, "name"},
		{map[string]any{"name": "x", "matchUser": "x"}, "verdict"},
		{map[string]any{"name": "x", "verdict": "sometimes", "matchUser": "x"}, "verdict"},
		{map[string]any{"name": "x", "verdict": "auto_deny"}, "criteria"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "timeWindow": map[string]any{"start": "09:00", "end": "17:00"}}, "criteria"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchSigner": "s", "matchToolName": "t"}, "matchToolName"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchSigner": "s", "matchSignerGroupId": "00000000-0000-4000-8000-000000000001"}, "matchSignerGroupId"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "matchNegate": []string{"signer"}}, "matchNegate.0"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "matchNegate": []string{"bogus"}}, "matchNegate.0"},
		{map[string]any{"name": "x", "verdict": "ignore", "matchToolName": "t"}, "verdict"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchRiskTier": 5}, "matchRiskTier"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchHash": "abc"}, "matchHash"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "priority": -1}, "priority"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "priority": "high"}, "priority"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "approvalDurationMinutes": 1441}, "approvalDurationMinutes"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "timeWindow": map[string]any{"start": "25:00", "end": "17:00"}}, "timeWindow.start"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "timeWindow": map[string]any{"start": "09:00", "end": "17:00", "timezone": "Mars/Base"}}, "timeWindow.timezone"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "siteId": "nope"}, "siteId"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "siteId": w.C1.ID}, "siteId"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchSignerGroupId": "00000000-0000-4000-8000-000000000001"}, "matchSignerGroupId"},
		{map[string]any{"name": strings.Repeat("n", 256), "verdict": "auto_deny", "matchUser": "u"}, "name"},
		{map[string]any{"name": "x", "verdict": "auto_deny", "matchUser": "u", "colour": "red"}, "colour"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/rules", fixture.AAdmin, c.body), c.field)
		if _, named := c.body[strings.SplitN(c.field, ".", 2)[0]]; named && c.field != "matchToolName" && c.field != "matchSignerGroupId" {
			fixture.Invalid(t, w.Call(t, http.MethodPatch, base+"/rules/"+id, fixture.AAdmin, c.body), c.field)
		}
	}
	fixture.Invalid(t, w.Call(t, http.MethodPatch, base+"/rules/x", fixture.AAdmin, map[string]any{"name": "y"}), "id")
	// PATCH merges: clearing the only criterion is rule 1.
	fixture.Invalid(t, w.Call(t, http.MethodPatch, base+"/rules/"+id, fixture.AAdmin, map[string]any{"matchUser": nil}), "criteria")
	res = fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/rules/"+id, fixture.AAdmin, map[string]any{"enabled": false, "matchNegate": []string{"user"}}), http.StatusOK)
	if r := res.JSON(t)["rule"].(map[string]any); r["enabled"] != false || r["matchUser"] != "x" || r["name"] != "b" {
		t.Fatalf("patched %v", r)
	}
	// Restricted admin: its sites' rules only.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/rules", fixture.ARestricted, map[string]any{"name": "w", "verdict": "auto_deny", "matchUser": "u"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/rules", fixture.ARestricted, map[string]any{"name": "w", "verdict": "auto_deny", "matchUser": "u", "siteId": w.A2.ID}), http.StatusForbidden, "forbidden")
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/rules", fixture.ARestricted, map[string]any{"name": "w", "verdict": "auto_deny", "matchUser": "u", "siteId": w.A1.ID}), http.StatusCreated)
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/rules/"+id, fixture.ARestricted, map[string]any{"name": "z"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/rules/"+id, fixture.ARestricted, nil), http.StatusForbidden, "forbidden")
	// Keys never satisfy MFA; viewers cannot write; other tenants see nothing.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/rules", fixture.ANoMFA, map[string]any{"name": "w", "verdict": "auto_deny", "matchUser": "u"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/rules", fixture.AViewer, map[string]any{"name": "w", "verdict": "auto_deny", "matchUser": "u"}), http.StatusForbidden, "forbidden")
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin} {
		fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/rules/"+id, caller, map[string]any{"name": "z"}))
		fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/rules/"+id, caller, nil))
	}
	// Partner callers name the organization.
	fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/rules", fixture.PXAdmin, map[string]any{"name": "p", "verdict": "auto_deny", "matchUser": "u"}), "orgId")
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/rules", fixture.PXAdmin, map[string]any{"orgId": w.A.ID, "name": "p", "verdict": "auto_deny", "matchUser": "u"}), http.StatusCreated)
	fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/rules", fixture.PYAdmin, map[string]any{"orgId": w.A.ID, "name": "p", "verdict": "auto_deny", "matchUser": "u"}))
	res = fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/rules/"+id, fixture.AAdmin, nil), http.StatusOK)
	fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/rules/"+id, fixture.AAdmin, nil))
	if a := audits(t, w, w.A.ID); !strings.Contains(a, "pam.rule.create") || !strings.Contains(a, "pam.rule.update") || !strings.Contains(a, "pam.rule.delete") {
		t.Fatalf("audit %s", a)
	}
}

// TestSignerGroupsAndConfig: trimmed, de-duplicated signers; delete refused
// while rules reference the group (409 naming the count); config.
func TestSignerGroupsAndConfig(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.AAdmin,
		map[string]any{"name": "Vendors", "signers": []string{" Contoso Ltd ", "contoso ltd", "Fabrikam"}}), http.StatusCreated)
	g := res.JSON(t)["signerGroups"].([]any)[0].(map[string]any)
	if s := g["signers"].([]any); len(s) != 2 || s[0] != "Contoso Ltd" {
		t.Fatalf("signers %v", s)
	}
	gid := g["id"].(string)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"signers": []string{"a"}}, "name"},
		{map[string]any{"name": ""}, "name"},
		{map[string]any{"name": "x", "description": strings.Repeat("d", 2001)}, "description"},
		{map[string]any{"name": "x", "signers": []string{strings.Repeat("s", 256)}}, "signers.0"},
		{map[string]any{"name": "x", "signers": "Contoso"}, "signers"},
		{map[string]any{"name": "x", "colour": 1}, "colour"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.AAdmin, c.body), c.field)
	}
	many := make([]string, 501)
	for i := range many {
		many[i] = "signer " + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + strings.Repeat("y", i/26)
	}
	fixture.Invalid(t, w.Call(t, http.MethodPatch, base+"/signer-groups/"+gid, fixture.AAdmin, map[string]any{"signers": many}), "signers")
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.ARestricted, map[string]any{"name": "x"}), http.StatusForbidden, "forbidden")
	rule(t, w, fixture.AAdmin, map[string]any{"name": "r1", "verdict": "auto_approve", "matchSignerGroupId": gid})
	rule(t, w, fixture.AAdmin, map[string]any{"name": "r2", "verdict": "auto_deny", "matchSignerGroupId": gid, "matchUser": "u"})
	body := fixture.ExpectError(t, w.Call(t, http.MethodDelete, base+"/signer-groups/"+gid, fixture.AAdmin, nil), http.StatusConflict, "conflict")
	if !strings.Contains(body["error"].(string), "2 rules") {
		t.Fatalf("409 %v", body)
	}
	fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/signer-groups/"+gid, fixture.CAdmin, nil))
	res = fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/signer-groups/"+gid, fixture.AAdmin, map[string]any{"description": "v"}), http.StatusOK)
	if res.JSON(t)["signerGroups"].([]any)[0].(map[string]any)["description"] != "v" {
		t.Fatalf("patch %s", res.Body)
	}
	other := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.AAdmin, map[string]any{"name": "Empty"}), http.StatusCreated).JSON(t)["signerGroups"].([]any)[0].(map[string]any)["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/signer-groups/"+other, fixture.AAdmin, nil), http.StatusOK)
	if ids := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/signer-groups", fixture.BAdmin, nil), http.StatusOK).JSON(t)["signerGroups"].([]any); len(ids) != 0 {
		t.Fatalf("B sees %v", ids)
	}

	// Config: default require_approval; PUT auto_deny.
	res = fixture.Expect(t, w.Call(t, http.MethodGet, base+"/config", fixture.AViewer, nil), http.StatusOK)
	if c := res.JSON(t)["config"].(map[string]any); c["defaultUnmatchedVerdict"] != "require_approval" || c["orgId"] != w.A.ID {
		t.Fatalf("config %s", res.Body)
	}
	fixture.Invalid(t, w.Call(t, http.MethodPut, base+"/config", fixture.AAdmin, map[string]any{"defaultUnmatchedVerdict": "ignore"}), "defaultUnmatchedVerdict")
	fixture.Invalid(t, w.Call(t, http.MethodPut, base+"/config", fixture.AAdmin, map[string]any{}), "defaultUnmatchedVerdict")
	fixture.ExpectError(t, w.Call(t, http.MethodPut, base+"/config", fixture.ARestricted, map[string]any{"defaultUnmatchedVerdict": "auto_deny"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, w.Call(t, http.MethodPut, base+"/config", fixture.ANoMFA, map[string]any{"defaultUnmatchedVerdict": "auto_deny"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.Expect(t, w.Call(t, http.MethodPut, base+"/config", fixture.AAdmin, map[string]any{"defaultUnmatchedVerdict": "auto_deny"}), http.StatusOK)
	res = fixture.Expect(t, w.Call(t, http.MethodGet, base+"/config?orgId="+w.A.ID, fixture.PXAdmin, nil), http.StatusOK)
	if res.JSON(t)["config"].(map[string]any)["defaultUnmatchedVerdict"] != "auto_deny" {
		t.Fatalf("config %s", res.Body)
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/config", fixture.PXAdmin, nil), "orgId")
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/config?orgId="+w.A.ID, fixture.PYAdmin, nil))
	if a := audits(t, w, w.A.ID); !strings.Contains(a, "pam.signer_group.create") || !strings.Contains(a, "pam.signer_group.delete") || !strings.Contains(a, "pam.config.update") {
		t.Fatalf("audit %s", a)
	}
}

// TestSeparationOfDuties: an auto_approve rule never decides a request whose
// subject created or last edited it; a rule edited between two decisions
// decides the second by its new form.
func TestSeparationOfDuties(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "sod")
	tech := strings.SplitN(email(t, w, fixture.ATech), "@", 2)[0]
	// The technician writes an auto_approve rule naming its own Windows account.
	r := rule(t, w, fixture.ATech, map[string]any{"name": "mine", "verdict": "auto_approve", "matchUser": "CORP\\" + tech})
	id, status := submit(t, w, d, "CORP\\"+tech)
	if status != "pending" {
		t.Fatalf("self-written rule decided its author's request: %s", status)
	}
	// Nor can the technician approve it by hand.
	fixture.ExpectError(t, respond(t, w, fixture.ATech, id, map[string]any{"decision": "approve"}), http.StatusForbidden, "forbidden")
	// Another admin's rule does decide it.
	rule(t, w, fixture.AAdmin, map[string]any{"name": "admin's", "verdict": "auto_approve", "matchUser": "CORP\\" + tech, "priority": 200})
	if _, status := submit(t, w, d, "CORP\\"+tech); status != "auto_approved" {
		t.Fatalf("status %s", status)
	}
	// The rule edited between two decisions: the second decision follows the edit.
	other := rule(t, w, fixture.AAdmin, map[string]any{"name": "ops", "verdict": "auto_approve", "matchUser": "CORP\\ops", "priority": 1})
	if _, status := submit(t, w, d, "CORP\\ops"); status != "auto_approved" {
		t.Fatalf("status %s", status)
	}
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/rules/"+other["id"].(string), fixture.AAdmin, map[string]any{"verdict": "auto_deny"}), http.StatusOK)
	if _, status := submit(t, w, d, "CORP\\ops"); status != "denied" {
		t.Fatalf("after the edit: %s", status)
	}
	// An admin who edits a rule that would approve them becomes its last editor.
	admin := strings.SplitN(email(t, w, fixture.AAdmin), "@", 2)[0]
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/rules/"+r["id"].(string), fixture.AAdmin, map[string]any{"matchUser": admin, "priority": 0}), http.StatusOK)
	if _, status := submit(t, w, d, admin); status != "pending" {
		t.Fatalf("editor's own request: %s", status)
	}
}

// TestSeparationOfDutiesCoversWhatARuleRestsOn is issue 30's attack: an
// admin's auto_approve rule references signer group G; a technician
// (devices:write + MFA) adds `Evil Signer` to G; the technician's own prompt
// signed by `Evil Signer` is not auto-approved, whatever form its subject
// takes, and goes on down the chain (pending under require_approval), while
// anybody else's is. The same for an allowlist the technician edited. Before
// signer groups recorded their editors (and the chain asked about them), the
// technician's prompt was auto_approved; before the subject matcher read
// `DOMAIN/` and `@domain`, so was the prompt under the edited allowlist.
func TestSeparationOfDutiesCoversWhatARuleRestsOn(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "sod-group")
	tech := strings.SplitN(email(t, w, fixture.ATech), "@", 2)[0]
	signed := func(subject, signer string) string {
		t.Helper()
		body := prompt(subject, `C:\Tools\setup.exe`)
		body["target_executable_signer"] = signer
		var out struct{ ID, Status string }
		fixture.Expect(t, ingest(t, w, d, body), http.StatusCreated).Decode(t, &out)
		return out.Status
	}
	g := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/signer-groups", fixture.AAdmin,
		map[string]any{"name": "Vendors", "signers": []string{"Fabrikam"}}), http.StatusCreated).JSON(t)["signerGroups"].([]any)[0].(map[string]any)
	gid := g["id"].(string)
	if g["createdBy"] != w.Users[fixture.AAdmin] || g["updatedBy"] != w.Users[fixture.AAdmin] {
		t.Fatalf("authors of a new group %v", g)
	}
	rule(t, w, fixture.AAdmin, map[string]any{"name": "vendors", "verdict": "auto_approve", "matchSignerGroupId": gid})
	res := fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/signer-groups/"+gid, fixture.ATech,
		map[string]any{"signers": []string{"Fabrikam", "Evil Signer"}}), http.StatusOK)
	if g := res.JSON(t)["signerGroups"].([]any)[0].(map[string]any); g["createdBy"] != w.Users[fixture.AAdmin] || g["updatedBy"] != w.Users[fixture.ATech] {
		t.Fatalf("authors after the technician's edit %v", g)
	}
	for _, subject := range []string{`CORP\` + tech, "CORP/" + tech, tech + "@corp.local", strings.ToUpper(tech)} {
		if status := signed(subject, "Evil Signer"); status != "pending" {
			t.Fatalf("%s: the technician's own prompt under the group it edited was %s", subject, status)
		}
	}
	if status := signed(`CORP\carol`, "Evil Signer"); status != "auto_approved" {
		t.Fatalf("another subject under the same rule: %s", status)
	}
	if l := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/signer-groups", fixture.AViewer, nil), http.StatusOK).JSON(t)["signerGroups"].([]any); len(l) != 1 ||
		l[0].(map[string]any)["updatedBy"] != w.Users[fixture.ATech] {
		t.Fatalf("list %v", l)
	}

	// An allowlist the technician last edited does not approve the
	// technician's prompt; the rules and the default verdict decide it.
	swp := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/software-policies", fixture.AAdmin,
		map[string]any{"name": "tools", "mode": "allowlist", "executables": []any{map[string]any{"signer": "Contoso Ltd"}}}), http.StatusCreated).JSON(t)["softwarePolicy"].(map[string]any)
	if status := signed("CORP/"+tech, "Contoso Ltd"); status != "auto_approved" {
		t.Fatalf("the admin's allowlist before the edit: %s", status)
	}
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/software-policies/"+swp["id"].(string), fixture.ATech, map[string]any{"priority": 7}), http.StatusOK)
	for _, subject := range []string{`CORP\` + tech, "CORP/" + tech, tech + "@corp.local", `.\` + tech} {
		if status := signed(subject, "Contoso Ltd"); status != "pending" {
			t.Fatalf("%s: the technician's own prompt under the allowlist it edited was %s", subject, status)
		}
	}
	if status := signed(`CORP\carol`, "Contoso Ltd"); status != "auto_approved" {
		t.Fatalf("another subject under the allowlist: %s", status)
	}
}

// TestSoftwarePoliciesBridge: CRUD, validation, and the bridge deciding
// before rules (blocklist denies, allowlist approves for 15 minutes).
func TestSoftwarePoliciesBridge(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "swp")
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"mode": "allowlist", "executables": []any{map[string]any{"signer": "x"}}}, "name"},
		{map[string]any{"name": "x", "executables": []any{map[string]any{"signer": "x"}}}, "mode"},
		{map[string]any{"name": "x", "mode": "greylist", "executables": []any{map[string]any{"signer": "x"}}}, "mode"},
		{map[string]any{"name": "x", "mode": "allowlist", "executables": []any{}}, "executables"},
		{map[string]any{"name": "x", "mode": "allowlist", "executables": []any{map[string]any{}}}, "executables.0"},
		{map[string]any{"name": "x", "mode": "allowlist", "executables": []any{map[string]any{"hash": "zz"}}}, "executables.0.hash"},
		{map[string]any{"name": "x", "mode": "allowlist", "priority": 100001, "executables": []any{map[string]any{"signer": "x"}}}, "priority"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/software-policies", fixture.AAdmin, c.body), c.field)
	}
	allow := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/software-policies", fixture.AAdmin,
		map[string]any{"name": "tools", "mode": "allowlist", "executables": []any{map[string]any{"signer": "Contoso Ltd"}}}), http.StatusCreated).JSON(t)["softwarePolicy"].(map[string]any)
	// A rule that would deny is not reached: the bridge decides first.
	rule(t, w, fixture.AAdmin, map[string]any{"name": "deny all", "verdict": "auto_deny", "matchPathGlob": "**"})
	id, status := submit(t, w, d, "CORP\\carol")
	if status != "auto_approved" {
		t.Fatalf("status %s", status)
	}
	if r := stored(t, w, w.A.ID, id); r.MatchedPolicyName == nil || *r.MatchedPolicyName != "tools" || *r.DecisionSource != "software_policy" || *r.ExpiresAt != "2026-11-01T09:15:00.000Z" {
		t.Fatalf("bridge %+v", r)
	}
	fixture.Expect(t, w.Call(t, http.MethodPost, base+"/software-policies", fixture.AAdmin,
		map[string]any{"name": "bad", "mode": "blocklist", "executables": []any{map[string]any{"signer": "contoso ltd"}}}), http.StatusCreated)
	if _, status := submit(t, w, d, "CORP\\carol"); status != "denied" {
		t.Fatalf("blocklist beats allowlist at equal strength: %s", status)
	}
	pid := allow["id"].(string)
	fixture.Expect(t, w.Call(t, http.MethodPatch, base+"/software-policies/"+pid, fixture.AAdmin, map[string]any{"enabled": false}), http.StatusOK)
	fixture.ExpectError(t, w.Call(t, http.MethodPatch, base+"/software-policies/"+pid, fixture.ARestricted, map[string]any{"enabled": true}), http.StatusForbidden, "forbidden")
	fixture.NotFound(t, w.Call(t, http.MethodPatch, base+"/software-policies/"+pid, fixture.CAdmin, map[string]any{"enabled": true}))
	if l := fixture.Expect(t, w.Call(t, http.MethodGet, base+"/software-policies", fixture.AViewer, nil), http.StatusOK).JSON(t)["softwarePolicies"].([]any); len(l) != 2 {
		t.Fatalf("list %v", l)
	}
	fixture.Expect(t, w.Call(t, http.MethodDelete, base+"/software-policies/"+pid, fixture.AAdmin, nil), http.StatusOK)
	fixture.NotFound(t, w.Call(t, http.MethodDelete, base+"/software-policies/"+pid, fixture.AAdmin, nil))
	if a := audits(t, w, w.A.ID); !strings.Contains(a, "pam.software_policy.create") || !strings.Contains(a, "pam.software_policy.update") || !strings.Contains(a, "pam.software_policy.delete") {
		t.Fatalf("audit %s", a)
	}
}

// TestPolicySettingsAndHeartbeat: the effective uacInterceptionEnabled,
// closest level wins, default true; the heartbeat reports it.
func TestPolicySettingsAndHeartbeat(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "uac")
	eff := func() map[string]any {
		t.Helper()
		return fixture.Expect(t, w.Call(t, http.MethodGet, base+"/policy-settings/effective?deviceId="+d.id, fixture.AViewer, nil), http.StatusOK).JSON(t)
	}
	beat := func() bool {
		t.Helper()
		var r struct {
			Config struct {
				PAM struct{ UACInterceptionEnabled bool }
			}
		}
		fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, map[string]any{"status": "ok", "agentVersion": "1"}), http.StatusOK).Decode(t, &r)
		return r.Config.PAM.UACInterceptionEnabled
	}
	put := func(caller, level, target string, v any) fixture.Response {
		t.Helper()
		return w.Call(t, http.MethodPut, base+"/policy-settings", caller, map[string]any{"level": level, "targetId": target, "uacInterceptionEnabled": v})
	}
	if e := eff(); e["uacInterceptionEnabled"] != true || e["source"] != "default" || !beat() {
		t.Fatalf("default %v", e)
	}
	fixture.Expect(t, put(fixture.PXAdmin, "partner", w.PX.ID, false), http.StatusOK)
	if e := eff(); e["uacInterceptionEnabled"] != false || e["source"].(map[string]any)["level"] != "partner" || beat() {
		t.Fatalf("partner %v", e)
	}
	fixture.Expect(t, put(fixture.AAdmin, "organization", w.A.ID, true), http.StatusOK)
	fixture.Expect(t, put(fixture.AAdmin, "site", w.A1.ID, false), http.StatusOK)
	if e := eff(); e["uacInterceptionEnabled"] != false || e["source"].(map[string]any)["level"] != "site" {
		t.Fatalf("site %v", e)
	}
	fixture.Expect(t, put(fixture.AAdmin, "device", d.id, true), http.StatusOK)
	if e := eff(); e["uacInterceptionEnabled"] != true || e["source"].(map[string]any)["targetId"] != d.id || !beat() {
		t.Fatalf("device %v", e)
	}
	fixture.Expect(t, put(fixture.AAdmin, "device", d.id, nil), http.StatusOK)
	if e := eff(); e["source"].(map[string]any)["level"] != "site" {
		t.Fatalf("cleared %v", e)
	}
	// Restrictions and tenancy.
	fixture.ExpectError(t, put(fixture.ARestricted, "site", w.A2.ID, false), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, put(fixture.ARestricted, "organization", w.A.ID, false), http.StatusForbidden, "forbidden")
	fixture.NotFound(t, put(fixture.AAdmin, "partner", w.PX.ID, false))
	fixture.NotFound(t, put(fixture.CAdmin, "site", w.A1.ID, false))
	fixture.NotFound(t, put(fixture.PYAdmin, "partner", w.PX.ID, false))
	fixture.NotFound(t, w.Call(t, http.MethodGet, base+"/policy-settings/effective?deviceId="+d.id, fixture.BAdmin, nil))
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"targetId": w.A.ID, "uacInterceptionEnabled": true}, "level"},
		{map[string]any{"level": "planet", "targetId": w.A.ID, "uacInterceptionEnabled": true}, "level"},
		{map[string]any{"level": "site", "targetId": "x", "uacInterceptionEnabled": true}, "targetId"},
		{map[string]any{"level": "site", "targetId": w.A1.ID}, "uacInterceptionEnabled"},
		{map[string]any{"level": "site", "targetId": w.A1.ID, "uacInterceptionEnabled": "yes"}, "uacInterceptionEnabled"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPut, base+"/policy-settings", fixture.AAdmin, c.body), c.field)
	}
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/policy-settings/effective", fixture.AAdmin, nil), "deviceId")
	fixture.Invalid(t, w.Call(t, http.MethodGet, base+"/policy-settings/effective?deviceId=zz", fixture.AAdmin, nil), "deviceId")
}

// TestPreview: the draft matched alone over the window; bounds; validation.
func TestPreview(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "pv")
	for i := range 12 {
		submit(t, w, d, "CORP\\user"+string(rune('a'+i%3)))
	}
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/rules/preview", fixture.ATech, map[string]any{"matchUser": "corp\\usera", "name": "draft", "verdict": "auto_approve"}), http.StatusOK)
	var p struct {
		TotalMatched, TotalScanned, WindowDays int
		Truncated                              bool
		StatusBreakdown                        map[string]int
		Sample                                 []struct{ ID, Status string }
	}
	res.Decode(t, &p)
	if p.TotalMatched != 4 || p.TotalScanned != 12 || p.WindowDays != 30 || p.Truncated || p.StatusBreakdown["pending"] != 4 || len(p.Sample) != 4 {
		t.Fatalf("preview %s", res.Body)
	}
	res = fixture.Expect(t, w.Call(t, http.MethodPost, base+"/rules/preview", fixture.ATech, map[string]any{"matchAdGroup": "Admins"}), http.StatusOK)
	if res.JSON(t)["totalMatched"] != float64(0) {
		t.Fatalf("ad group %s", res.Body)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{}, "criteria"},
		{map[string]any{"matchUser": "u", "windowDays": 0}, "windowDays"},
		{map[string]any{"matchUser": "u", "windowDays": 91}, "windowDays"},
		{map[string]any{"matchUser": "u", "flowType": "x"}, "flowType"},
		{map[string]any{"matchUser": "u", "matchToolName": "t", "matchHash": strings.Repeat("a", 64)}, "matchToolName"},
		{map[string]any{"matchUser": "u", "bogus": 1}, "bogus"},
	} {
		fixture.Invalid(t, w.Call(t, http.MethodPost, base+"/rules/preview", fixture.AAdmin, c.body), c.field)
	}
	fixture.ExpectError(t, w.Call(t, http.MethodPost, base+"/rules/preview", fixture.AViewer, map[string]any{"matchUser": "u"}), http.StatusForbidden, "forbidden")
	fixture.NotFound(t, w.Call(t, http.MethodPost, base+"/rules/preview", fixture.PYAdmin, map[string]any{"orgId": w.A.ID, "matchUser": "u"}))
}
