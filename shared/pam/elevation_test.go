package pam_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/ratelimit"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestIngestStatuses walks every row of the agent ingest table: 201 pending
// (the default verdict), denied (auto_deny default), auto_approved (a rule),
// 200 ignored (no row), 413, 429, and the token of another device.
func TestIngestStatuses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "ws-1")
	other := newDevice(t, w, w.A.ID, w.A2.ID, "ws-2")

	res := fixture.Expect(t, ingest(t, w, d, prompt("CORP\\carol", `C:\Tools\setup.exe`)), http.StatusCreated)
	// BatchGetItem (agent row, ingest window), Query of the PAM# rows, one
	// transaction (request, audit, outbox, the window's count), and the
	// outbox row's clear after the event's send, before the answer (issue 32:
	// nothing runs after a response).
	fixture.Budget(t, res, 4)
	if res.DBCalls != 4 {
		t.Fatalf("ingest made %d calls, documented 4", res.DBCalls)
	}
	var out struct {
		ID     *string
		Status string
	}
	res.Decode(t, &out)
	if out.ID == nil || out.Status != "pending" {
		t.Fatalf("ingest %s", res.Body)
	}
	r := stored(t, w, w.A.ID, *out.ID)
	if r.FlowType != "uac_intercept" || r.DeviceID != d.id || r.SiteID == nil || *r.SiteID != w.A1.ID || r.DecisionSource != nil || r.PID == nil || *r.PID != 4242 {
		t.Fatalf("stored %+v", r)
	}
	if got := elevTypes(events(t, w)); got != "elevation.requested" {
		t.Fatalf("events %q", got)
	}

	// A rule decides: auto_approve for the signer, with its window.
	rule(t, w, fixture.AAdmin, map[string]any{"name": "contoso", "verdict": "auto_approve", "matchSigner": "contoso ltd", "approvalDurationMinutes": 30})
	id, status := submit(t, w, d, "CORP\\carol")
	if status != "auto_approved" {
		t.Fatalf("status %s", status)
	}
	r = stored(t, w, w.A.ID, id)
	if r.DecisionSource == nil || *r.DecisionSource != "pam_rule" || r.PamRuleName == nil || *r.PamRuleName != "contoso" ||
		r.ExpiresAt == nil || *r.ExpiresAt != "2026-11-01T09:30:00.000Z" {
		t.Fatalf("auto-approved %+v", r)
	}
	// An ignore rule of higher priority: 200, no row.
	rule(t, w, fixture.AAdmin, map[string]any{"name": "ignore updaters", "verdict": "ignore", "priority": 1, "matchPathGlob": `C:/Updaters/**`})
	before := fixture.Scan(t, w.Env)
	res = fixture.Expect(t, ingest(t, w, d, prompt("CORP\\carol", `C:\Updaters\x\up.exe`)), http.StatusOK)
	if string(res.Body) != `{"id":null,"status":"ignored"}`+"\n" && !strings.Contains(string(res.Body), `"id":null`) {
		t.Fatalf("ignored %s", res.Body)
	}
	if n := strings.Count(fixture.Scan(t, w.Env), "sk:elev#"); n != strings.Count(before, "sk:elev#") {
		t.Fatal("an ignored prompt stored a row")
	}
	// auto_deny default for what no rule matches.
	fixture.Expect(t, w.Call(t, http.MethodPut, base+"/config", fixture.AAdmin, map[string]any{"defaultUnmatchedVerdict": "auto_deny"}), http.StatusOK)
	body := prompt("CORP\\carol", `C:\Other\tool.exe`)
	body["target_executable_signer"] = "Unknown"
	res = fixture.Expect(t, ingest(t, w, d, body), http.StatusCreated)
	if res.JSON(t)["status"] != "denied" {
		t.Fatalf("default deny %s", res.Body)
	}
	if a := audits(t, w, w.A.ID); !strings.Contains(a, "agent.elevation_request.submit") || !strings.Contains(a, "agent.elevation_request.ignored") {
		t.Fatalf("audit %s", a)
	}
	// 413 over 32 KB.
	big := prompt("u", `C:\a.exe`)
	big["command_line"] = strings.Repeat("x", 33<<10)
	fixture.ExpectError(t, ingest(t, w, d, big), http.StatusRequestEntityTooLarge, "payload_too_large")
	// Device A's token on device B's path, and no token at all.
	fixture.ExpectError(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+other.id+"/elevation-requests", d.tok, prompt("u", `C:\a.exe`)), http.StatusUnauthorized, "unauthorized")
	fixture.ExpectError(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+other.id+"/elevation-requests", "", prompt("u", `C:\a.exe`)), http.StatusUnauthorized, "unauthorized")
	// A user session is not an agent token.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, "/api/v1/agents/"+d.id+"/elevation-requests", fixture.AAdmin, prompt("u", `C:\a.exe`)), http.StatusUnauthorized, "unauthorized")
	// Bad input names the field and stores nothing.
	before = fixture.Scan(t, w.Env)
	for _, c := range []struct {
		body  map[string]any
		field string
	}{
		{map[string]any{"target_executable_path": `C:\a.exe`}, "subject_username"},
		{map[string]any{"subject_username": "u"}, "target_executable_path"},
		{map[string]any{"subject_username": 7, "target_executable_path": `C:\a.exe`}, "subject_username"},
		{map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "pid": -1}, "pid"},
		{map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "pid": "12"}, "pid"},
		{map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "target_executable_hash": "abc"}, "target_executable_hash"},
		{map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "observed_at": "yesterday"}, "observed_at"},
		{map[string]any{"subject_username": "u", "target_executable_path": `C:\a.exe`, "user": "x"}, "user"},
		{map[string]any{"subject_username": strings.Repeat("u", 300), "target_executable_path": `C:\a.exe`}, "subject_username"},
		{map[string]any{"subject_username": "\u202e\u0007", "target_executable_path": `C:\a.exe`}, "subject_username"},
	} {
		fixture.Invalid(t, ingest(t, w, d, c.body), c.field)
	}
	if after := fixture.Scan(t, w.Env); strings.Count(after, "sk:elev#") != strings.Count(before, "sk:elev#") {
		t.Fatal("bad input stored a request")
	}
}

// TestIngestFloodLimitsOneDevice: 600 a minute per device; the 601st is 429
// with retryAfter, stores nothing, and another device is unaffected.
func TestIngestFloodLimitsOneDevice(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	a := newDevice(t, w, w.A.ID, "", "flood")
	b := newDevice(t, w, w.A.ID, "", "calm")
	// Fill device a's window: n events counted in the current slot.
	k := ratelimit.BucketKey(ratelimit.AgentIngest, a.id)
	fill := func(n int) {
		t.Helper()
		l := ratelimit.Limiter{St: w.Env.Store, Clock: w.Env.Clock}
		if err := l.Seed(context.Background(), k, ratelimit.AgentIngest, n); err != nil {
			t.Fatal(err)
		}
	}
	fill(ratelimit.AgentIngest.Limit)
	before := strings.Count(fixture.Scan(t, w.Env), "sk:elev#")
	for range 5 {
		res := fixture.ExpectError(t, ingest(t, w, a, prompt("u", `C:\a.exe`)), http.StatusTooManyRequests, "rate_limited")
		if res["retryAfter"] == nil {
			t.Fatalf("no retryAfter: %v", res)
		}
	}
	if strings.Count(fixture.Scan(t, w.Env), "sk:elev#") != before {
		t.Fatal("a refused prompt stored a row")
	}
	submit(t, w, b, "u")
	// A real burst: concurrent prompts of one device past its bucket are
	// answered 201 or 429, never 5xx.
	fill(ratelimit.AgentIngest.Limit - 10)
	var wg sync.WaitGroup
	codes := make([]int, 30)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = ingest(t, w, a, prompt("u", `C:\a.exe`)).Status
		}()
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			ok++
		case http.StatusTooManyRequests:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if ok != 10 {
		t.Fatalf("%d of 30 passed a window with room for exactly 10: %v", ok, codes)
	}
}

// TestRespondStatuses walks the respond table: 200 approve and deny, 400,
// 403 (MFA, site, self-approval, key), 404, 409.
func TestRespondStatuses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d1 := newDevice(t, w, w.A.ID, w.A1.ID, "site1")
	d2 := newDevice(t, w, w.A.ID, w.A2.ID, "site2")
	id, _ := submit(t, w, d1, "CORP\\carol")
	id2, _ := submit(t, w, d2, "CORP\\dave")

	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "decision"},
		{map[string]any{"decision": "maybe"}, "decision"},
		{map[string]any{"decision": "approve", "durationMinutes": 0}, "durationMinutes"},
		{map[string]any{"decision": "approve", "durationMinutes": 1441}, "durationMinutes"},
		{map[string]any{"decision": "approve", "durationMinutes": "15"}, "durationMinutes"},
		{map[string]any{"decision": "deny", "reason": strings.Repeat("r", 2001)}, "reason"},
		{map[string]any{"decision": "deny", "note": "x"}, "note"},
	} {
		fixture.Invalid(t, respond(t, w, fixture.AAdmin, id, c.body), c.field)
	}
	fixture.Invalid(t, respond(t, w, fixture.AAdmin, "not-a-uuid", map[string]any{"decision": "deny"}), "id")
	fixture.ExpectError(t, respond(t, w, fixture.ANoMFA, id, map[string]any{"decision": "approve"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.ExpectError(t, respond(t, w, fixture.AViewer, id, map[string]any{"decision": "approve"}), http.StatusForbidden, "forbidden")
	// A technician restricted to site a1 may not decide a request of site a2.
	fixture.ExpectError(t, respond(t, w, fixture.ARestricted, id2, map[string]any{"decision": "approve"}), http.StatusForbidden, "forbidden")
	for _, caller := range []string{fixture.BAdmin, fixture.CAdmin, fixture.PYAdmin, fixture.PXSelectedB} {
		fixture.NotFound(t, respond(t, w, caller, id, map[string]any{"decision": "approve"}))
	}
	if stored(t, w, w.A.ID, id).Status != "pending" {
		t.Fatal("refused decisions changed the request")
	}
	// Approve: 15 minutes by default.
	res := fixture.Expect(t, respond(t, w, fixture.ATech, id, map[string]any{"decision": "approve", "reason": "ok"}), http.StatusOK)
	fixture.Budget(t, res, 4)
	if b := res.JSON(t); b["status"] != "approved" || b["id"] != id || b["success"] != true {
		t.Fatalf("approve %s", res.Body)
	}
	r := stored(t, w, w.A.ID, id)
	if r.ExpiresAt == nil || *r.ExpiresAt != "2026-11-01T09:15:00.000Z" || r.ApprovedByName == nil || r.DecisionSource == nil || *r.DecisionSource != "human" {
		t.Fatalf("approved %+v", r)
	}
	body := fixture.ExpectError(t, respond(t, w, fixture.AAdmin, id, map[string]any{"decision": "deny"}), http.StatusConflict, "wrong_status")
	if body["error"] != "Request is not pending (current status: approved)" {
		t.Fatalf("409 %v", body)
	}
	// Deny with a duration of its own.
	res = fixture.Expect(t, respond(t, w, fixture.AAdmin, id2, map[string]any{"decision": "deny", "reason": "no"}), http.StatusOK)
	if res.JSON(t)["status"] != "denied" {
		t.Fatalf("deny %s", res.Body)
	}
	if got := elevTypes(events(t, w)); !strings.Contains(got, "elevation.approved") || !strings.Contains(got, "elevation.denied") {
		t.Fatalf("events %s", got)
	}
	if a := audits(t, w, w.A.ID); !strings.Contains(a, "pam.elevation_request.approve") || !strings.Contains(a, "pam.elevation_request.deny") {
		t.Fatalf("audit %s", a)
	}
	// Self-approval: the subject is the approver's e-mail local part behind a
	// domain prefix; 403, and the request stays pending.
	local := strings.SplitN(email(t, w, fixture.ATech), "@", 2)[0]
	self, _ := submit(t, w, d1, "CORP\\"+strings.ToUpper(local))
	body = fixture.ExpectError(t, respond(t, w, fixture.ATech, self, map[string]any{"decision": "approve"}), http.StatusForbidden, "forbidden")
	if body["error"] != "Requester cannot approve their own elevation request" {
		t.Fatalf("self %v", body)
	}
	// The same user behind a `DOMAIN/` prefix, an `@domain` suffix or in
	// full-width letters (issue 30: these approved their own requests).
	for _, subject := range []string{"CORP/" + local, local + "@corp.local", `.\` + local, toFullWidth(local)} {
		own, _ := submit(t, w, d1, subject)
		body = fixture.ExpectError(t, respond(t, w, fixture.ATech, own, map[string]any{"decision": "approve"}), http.StatusForbidden, "forbidden")
		if body["error"] != "Requester cannot approve their own elevation request" {
			t.Fatalf("self as %s: %v", subject, body)
		}
	}
	// Denying one's own request is not a self-grant; another approver decides.
	fixture.Expect(t, respond(t, w, fixture.AAdmin, self, map[string]any{"decision": "approve", "durationMinutes": 60}), http.StatusOK)
	if r := stored(t, w, w.A.ID, self); *r.ExpiresAt != "2026-11-01T10:00:00.000Z" {
		t.Fatalf("60-minute window %+v", r)
	}
	// Partner caller of the organization decides too.
	id3, _ := submit(t, w, d1, "CORP\\erin")
	fixture.Expect(t, respond(t, w, fixture.PXAdmin, id3, map[string]any{"decision": "deny"}), http.StatusOK)
}

// TestRespondDefaultsToTheSpecsFifteenMinutes: a request a rule with its
// own approvalDurationMinutes sent to a human is approved for the spec's 15
// minutes when respond names no duration (docs/decisions.md#where-gale-follows-the-documents: the spec's default, not
// the rule's; the rule's window stays its auto-approvals').
func TestRespondDefaultsToTheSpecsFifteenMinutes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A1.ID, "ws-1")
	rule(t, w, fixture.AAdmin, map[string]any{"name": "ask", "verdict": "require_approval", "matchSigner": "contoso ltd", "approvalDurationMinutes": 120})
	id, status := submit(t, w, d, "CORP\\carol")
	if status != "pending" {
		t.Fatalf("status %s", status)
	}
	if r := stored(t, w, w.A.ID, id); r.PamRuleName == nil || *r.PamRuleName != "ask" {
		t.Fatalf("the rule did not decide: %+v", r)
	}
	fixture.Expect(t, respond(t, w, fixture.ATech, id, map[string]any{"decision": "approve"}), http.StatusOK)
	if r := stored(t, w, w.A.ID, id); r.ExpiresAt == nil || *r.ExpiresAt != "2026-11-01T09:15:00.000Z" {
		t.Fatalf("approved without durationMinutes: %+v, want 15 minutes", r)
	}
}

// TestConcurrentDecisionsHaveOneWinner: 50 concurrent approve/deny calls on
// one request: exactly one 200, the rest 409.
func TestConcurrentDecisionsHaveOneWinner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "race")
	id, _ := submit(t, w, d, "CORP\\carol")
	const n = 50
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			dec := "approve"
			if i%2 == 1 {
				dec = "deny"
			}
			codes[i] = respond(t, w, fixture.AAdmin, id, map[string]any{"decision": dec}).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners: %v", won, codes)
	}
	if got := elevTypes(events(t, w)); strings.Count(got, "elevation.approved")+strings.Count(got, "elevation.denied") != 1 {
		t.Fatalf("events %s", got)
	}
}

// TestRevokeStatuses walks the revoke table.
func TestRevokeStatuses(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A2.ID, "rv")
	id, _ := submit(t, w, d, "CORP\\carol")
	fixture.Invalid(t, revoke(t, w, fixture.AAdmin, id, map[string]any{}), "reason")
	fixture.Invalid(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": ""}), "reason")
	fixture.Invalid(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": strings.Repeat("r", 2001)}), "reason")
	fixture.ExpectError(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": "x"}), http.StatusConflict, "wrong_status")
	fixture.Expect(t, respond(t, w, fixture.AAdmin, id, map[string]any{"decision": "approve"}), http.StatusOK)
	fixture.ExpectError(t, revoke(t, w, fixture.ARestricted, id, map[string]any{"reason": "x"}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, revoke(t, w, fixture.ANoMFA, id, map[string]any{"reason": "x"}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.NotFound(t, revoke(t, w, fixture.CAdmin, id, map[string]any{"reason": "x"}))
	res := fixture.Expect(t, revoke(t, w, fixture.ATech, id, map[string]any{"reason": "done early"}), http.StatusOK)
	if res.JSON(t)["status"] != "revoked" {
		t.Fatalf("revoke %s", res.Body)
	}
	if r := stored(t, w, w.A.ID, id); r.RevokedByName == nil || r.RevokeReason == nil || *r.RevokeReason != "done early" || r.GSI2PK != "" {
		t.Fatalf("revoked %+v", r)
	}
	fixture.ExpectError(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": "again"}), http.StatusConflict, "wrong_status")
	if got := elevTypes(events(t, w)); !strings.Contains(got, "elevation.revoked") {
		t.Fatalf("events %s", got)
	}
	// An auto-approved elevation is revocable too.
	rule(t, w, fixture.AAdmin, map[string]any{"name": "auto", "verdict": "auto_approve", "matchUser": "CORP\\zed"})
	auto, status := submit(t, w, d, "CORP\\zed")
	if status != "auto_approved" {
		t.Fatalf("status %s", status)
	}
	fixture.Expect(t, revoke(t, w, fixture.AAdmin, auto, map[string]any{"reason": "x"}), http.StatusOK)
}

// TestActuation walks the actuation table, races 20 actuations, and races
// revocation against actuation.
func TestActuation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, w.A2.ID, "act")
	id, _ := submit(t, w, d, "CORP\\carol")
	fixture.ExpectError(t, actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": id}), http.StatusConflict, "wrong_status")
	fixture.Expect(t, respond(t, w, fixture.AAdmin, id, map[string]any{"decision": "approve"}), http.StatusOK)
	for _, c := range []struct {
		body  any
		field string
	}{
		{map[string]any{}, "elevationRequestId"},
		{map[string]any{"elevationRequestId": "x"}, "elevationRequestId"},
		{map[string]any{"elevationRequestId": id, "timeoutMs": 999}, "timeoutMs"},
		{map[string]any{"elevationRequestId": id, "timeoutMs": 60001}, "timeoutMs"},
		{map[string]any{"elevationRequestId": id, "extra": 1}, "extra"},
	} {
		fixture.Invalid(t, actuate(t, w, fixture.AAdmin, d.id, c.body), c.field)
	}
	fixture.Invalid(t, actuate(t, w, fixture.AAdmin, "nope", map[string]any{"elevationRequestId": id}), "id")
	fixture.ExpectError(t, actuate(t, w, fixture.ARestricted, d.id, map[string]any{"elevationRequestId": id}), http.StatusForbidden, "forbidden")
	fixture.ExpectError(t, actuate(t, w, fixture.ANoMFA, d.id, map[string]any{"elevationRequestId": id}), http.StatusForbidden, "MFA_REQUIRED")
	fixture.NotFound(t, actuate(t, w, fixture.CAdmin, d.id, map[string]any{"elevationRequestId": id}))
	other := newDevice(t, w, w.A.ID, w.A2.ID, "act2")
	fixture.NotFound(t, actuate(t, w, fixture.AAdmin, other.id, map[string]any{"elevationRequestId": id}))
	fixture.NotFound(t, actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": "00000000-0000-4000-8000-000000000009"}))

	// 20 concurrent actuations: exactly one 201.
	const n = 20
	codes := make([]int, n)
	var cmd string
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": id, "timeoutMs": 5000})
			codes[i] = res.Status
			if res.Status == http.StatusCreated {
				mu.Lock()
				cmd, _ = res.JSON(t)["commandId"].(string)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if won != 1 {
		t.Fatalf("%d winners: %v", won, codes)
	}
	fixture.ExpectError(t, actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": id}), http.StatusConflict, "race_lost")
	if r := stored(t, w, w.A.ID, id); r.Status != "actuating" || r.CommandID == nil || *r.CommandID != cmd {
		t.Fatalf("actuating %+v", r)
	}
	// The agent gets the command: the request id and the timeout, nothing else.
	beat := fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, map[string]any{"status": "ok", "agentVersion": "1.0.0"}), http.StatusOK)
	want := fmt.Sprintf(`"payload":{"elevationRequestId":"%s","timeoutMs":5000}`, id)
	if !strings.Contains(string(beat.Body), want) || !strings.Contains(string(beat.Body), `"type":"actuate_elevation"`) {
		t.Fatalf("heartbeat %s", beat.Body)
	}
	// Revoking the actuating elevation takes the command off the queue.
	fixture.Expect(t, revoke(t, w, fixture.AAdmin, id, map[string]any{"reason": "stop"}), http.StatusOK)
	beat = fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/heartbeat", d.tok, map[string]any{"status": "ok", "agentVersion": "1.0.0"}), http.StatusOK)
	if strings.Contains(string(beat.Body), "actuate_elevation") {
		t.Fatalf("revoked elevation still queued: %s", beat.Body)
	}
	fixture.ExpectError(t, actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": id}), http.StatusConflict, "wrong_status")
	if got := elevTypes(events(t, w)); !strings.Contains(got, "elevation.actuating") {
		t.Fatalf("events %s", got)
	}

	// Revoke racing actuation: whatever order they land in, a revoked
	// elevation has no command left on the device.
	for range 3 {
		rid, _ := submit(t, w, d, "CORP\\carol")
		fixture.Expect(t, respond(t, w, fixture.AAdmin, rid, map[string]any{"decision": "approve"}), http.StatusOK)
		var wg sync.WaitGroup
		var ac, rc int
		wg.Add(2)
		go func() {
			defer wg.Done()
			ac = actuate(t, w, fixture.AAdmin, d.id, map[string]any{"elevationRequestId": rid}).Status
		}()
		go func() {
			defer wg.Done()
			rc = revoke(t, w, fixture.AAdmin, rid, map[string]any{"reason": "race"}).Status
		}()
		wg.Wait()
		if rc != http.StatusOK || (ac != http.StatusCreated && ac != http.StatusConflict) {
			t.Fatalf("actuate %d, revoke %d", ac, rc)
		}
		a, err := devStore(w).Agent(context.Background(), d.id)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range a.Commands {
			// Only the command that ends it (end_elevation) may remain.
			if c.Payload["elevationRequestId"] == rid && c.Type != "end_elevation" {
				t.Fatalf("revoked elevation %s left command %s", rid, c.ID)
			}
		}
	}

	// Decommissioned device: 400.
	fixture.Expect(t, w.Call(t, http.MethodPost, "/api/v1/devices/"+other.id+"/decommission", fixture.AAdmin, nil), http.StatusOK)
	fixture.ExpectError(t, actuate(t, w, fixture.AAdmin, other.id, map[string]any{"elevationRequestId": id}), http.StatusBadRequest, "bad_request")

	// The actuator disabled: 403.
	w.Env.Deps.Cfg.PAMActuatorEnabled = false
	off := fixture.API(t, w.Env, groups...)
	res := fixture.Do(t, off, fixture.Request{Method: http.MethodPost, Path: "/api/v1/devices/" + d.id + "/actuate-elevation",
		Token: w.Tokens[fixture.AAdmin], Body: map[string]any{"elevationRequestId": id}})
	if body := fixture.ExpectError(t, res, http.StatusForbidden, "forbidden"); body["error"] != "PAM actuator disabled" {
		t.Fatalf("disabled %v", body)
	}
}

// TestExpirySweep: approved past expiresAt and pending past the pending TTL
// become expired (elevation.expired, pam.elevation_request.expire); the
// job is idempotent.
func TestExpirySweep(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := newDevice(t, w, w.A.ID, "", "exp")
	approved, _ := submit(t, w, d, "CORP\\a")
	fixture.Expect(t, respond(t, w, fixture.AAdmin, approved, map[string]any{"decision": "approve", "durationMinutes": 10}), http.StatusOK)
	rule(t, w, fixture.AAdmin, map[string]any{"name": "auto", "verdict": "auto_approve", "matchUser": "CORP\\auto"})
	auto, _ := submit(t, w, d, "CORP\\auto")
	w.Env.Clock.Advance(20 * time.Minute)
	pending, _ := submit(t, w, d, "CORP\\p")
	sw := sweepergroup.Sweeper(w.Env.Deps)
	job := sw.Jobs["elevation-expiry"]
	if job == nil {
		t.Fatal("no elevation-expiry job")
	}
	n, err := job(context.Background())
	if err != nil || n != 2 {
		t.Fatalf("first sweep %d %v", n, err)
	}
	for id, want := range map[string]string{approved: "expired", auto: "expired", pending: "pending"} {
		if got := stored(t, w, w.A.ID, id).Status; got != want {
			t.Fatalf("%s: %s, want %s", id, got, want)
		}
	}
	if n, _ := job(context.Background()); n != 0 {
		t.Fatalf("second sweep %d", n)
	}
	w.Env.Clock.Advance(31 * time.Minute)
	if n, err := job(context.Background()); err != nil || n != 1 || stored(t, w, w.A.ID, pending).Status != "expired" {
		t.Fatalf("pending sweep %d %v", n, err)
	}
	if got := elevTypes(events(t, w)); strings.Count(got, "elevation.expired") != 3 {
		t.Fatalf("events %s", got)
	}
	if a := audits(t, w, w.A.ID); strings.Count(a, "pam.elevation_request.expire") != 3 {
		t.Fatalf("audit %s", a)
	}
}

// toFullWidth writes the ASCII letters, digits and '-' of s in their
// full-width forms (U+FF01..U+FF5E), which NFKC reads back as ASCII.
func toFullWidth(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r > 0x20 && r < 0x7f {
			r += 0xFEE0
		}
		b.WriteRune(r)
	}
	return b.String()
}
