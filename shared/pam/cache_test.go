package pam_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestChainFollowsEveryChange: the compiled decision chain is cached per
// organization and policies version; every kind of change between two
// decisions (a rule edited, disabled, deleted; a signer group's signers; the
// config's default verdict; a software policy created, disabled, deleted)
// decides the very next prompt, and every prompt costs 4 DynamoDB calls
// (with the outbox clear of its event, sent before the answer).
func TestChainFollowsEveryChange(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "cache")
	expect := func(step, want string) {
		t.Helper()
		for range 2 { // the second decision runs on the cached chain
			res := fixture.Expect(t, ingest(t, w, d, prompt("CORP\\carol", `C:\Tools\setup.exe`)), http.StatusCreated)
			fixture.Budget(t, res, 4)
			if got := res.JSON(t)["status"]; got != want {
				t.Fatalf("%s: status %v, want %s", step, got, want)
			}
		}
	}
	call := func(method, path string, body any, code int) map[string]any {
		t.Helper()
		return fixture.Expect(t, w.Call(t, method, base+path, fixture.AAdmin, body), code).JSON(t)
	}
	expect("no rules", "pending")
	r1 := rule(t, w, fixture.AAdmin, map[string]any{"name": "deny other", "verdict": "auto_deny", "matchPathGlob": `C:/Other/**`})["id"].(string)
	expect("a rule that does not match", "pending")
	call(http.MethodPatch, "/rules/"+r1, map[string]any{"matchPathGlob": `C:/Tools/**`}, http.StatusOK)
	expect("the rule edited to match", "denied")

	g := call(http.MethodPost, "/signer-groups", map[string]any{"name": "vendors", "signers": []string{"Fabrikam"}}, http.StatusCreated)["signerGroups"].([]any)[0].(map[string]any)["id"].(string)
	r2 := rule(t, w, fixture.AAdmin, map[string]any{"name": "vendors", "verdict": "auto_approve", "priority": 1, "matchSignerGroupId": g})["id"].(string)
	expect("a signer group without the signer", "denied")
	call(http.MethodPatch, "/signer-groups/"+g, map[string]any{"signers": []string{"Fabrikam", "Contoso Ltd"}}, http.StatusOK)
	expect("the signer added to the group", "auto_approved")
	call(http.MethodDelete, "/rules/"+r2, nil, http.StatusOK)
	expect("the approving rule deleted", "denied")
	call(http.MethodDelete, "/signer-groups/"+g, nil, http.StatusOK)
	call(http.MethodPatch, "/rules/"+r1, map[string]any{"enabled": false}, http.StatusOK)
	expect("the denying rule disabled", "pending")
	call(http.MethodPut, "/config", map[string]any{"defaultUnmatchedVerdict": "auto_deny"}, http.StatusOK)
	expect("default verdict auto_deny", "denied")

	sp := call(http.MethodPost, "/software-policies", map[string]any{"name": "tools", "mode": "allowlist",
		"executables": []any{map[string]any{"signer": "Contoso Ltd"}}}, http.StatusCreated)["softwarePolicy"].(map[string]any)["id"].(string)
	expect("an allowlist", "auto_approved")
	call(http.MethodPatch, "/software-policies/"+sp, map[string]any{"enabled": false}, http.StatusOK)
	expect("the allowlist disabled", "denied")
	call(http.MethodPatch, "/software-policies/"+sp, map[string]any{"enabled": true}, http.StatusOK)
	expect("the allowlist enabled again", "auto_approved")
	call(http.MethodDelete, "/software-policies/"+sp, nil, http.StatusOK)
	expect("the allowlist deleted", "denied")
}

// TestIngestCountsEveryAuthenticatedRequest: the window read with the token
// is counted by the ingest's transaction (the last place passes, the next is
// 429), a bad body (invalid or undecodable) counts on its own, and an
// unknown device is 401.
func TestIngestCountsEveryAuthenticatedRequest(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "meter")
	k := ratelimit.BucketKey(ratelimit.AgentIngest, d.id)
	fill := func(n int) {
		t.Helper()
		l := ratelimit.Limiter{St: w.Env.Store, Clock: w.Env.Clock}
		if err := l.Seed(context.Background(), k, ratelimit.AgentIngest, n); err != nil {
			t.Fatal(err)
		}
	}
	fill(ratelimit.AgentIngest.Limit - 1)
	fixture.Budget(t, fixture.Expect(t, ingest(t, w, d, prompt("u", `C:\a.exe`)), http.StatusCreated), 4)
	fixture.ExpectError(t, ingest(t, w, d, prompt("u", `C:\a.exe`)), http.StatusTooManyRequests, "rate_limited")

	fill(ratelimit.AgentIngest.Limit - 1)
	fixture.Invalid(t, ingest(t, w, d, map[string]any{"subject_username": "u"}), "target_executable_path")
	fixture.ExpectError(t, ingest(t, w, d, prompt("u", `C:\a.exe`)), http.StatusTooManyRequests, "rate_limited")

	// A body the decode refuses (a field the input does not have) counts too.
	fill(ratelimit.AgentIngest.Limit - 1)
	fixture.Invalid(t, ingest(t, w, d, map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "user": "x"}), "user")
	fixture.ExpectError(t, ingest(t, w, d, prompt("u", `C:\a.exe`)), http.StatusTooManyRequests, "rate_limited")

	ghost := dev{id: "0190a000-0000-7000-8000-000000000001", tok: d.tok}
	fixture.ExpectError(t, ingest(t, w, ghost, prompt("u", `C:\a.exe`)), http.StatusUnauthorized, "unauthorized")
}

// TestFullWindowIsRefusedFromTheTokenRead: a device whose ingest window is
// full is refused by the token check's read alone (the one BatchGetItem), 429
// whatever the body (valid, invalid, undecodable), and neither its window
// nor anything else is written.
func TestFullWindowIsRefusedFromTheTokenRead(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "full")
	k := ratelimit.BucketKey(ratelimit.AgentIngest, d.id)
	l := ratelimit.Limiter{St: w.Env.Store, Clock: w.Env.Clock}
	if err := l.Seed(context.Background(), k, ratelimit.AgentIngest, ratelimit.AgentIngest.Limit); err != nil {
		t.Fatal(err)
	}
	before := fixture.Scan(t, w.Env)
	for _, body := range []map[string]any{
		prompt("u", `C:\a.exe`),
		{"subject_username": "u"},
		{"subject_username": "u", "target_executable_path": `C:\a.exe`, "user": "x"},
	} {
		res := ingest(t, w, d, body)
		fixture.ExpectError(t, res, http.StatusTooManyRequests, "rate_limited")
		if res.DBCalls != 1 {
			t.Fatalf("a full window's refusal made %d DynamoDB calls, want the token check's 1", res.DBCalls)
		}
	}
	if after := fixture.Scan(t, w.Env); after != before {
		t.Fatal("a refusal of a full window wrote")
	}
}
