package pam_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/sweepergroup"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
)

// TestFinalRequestsExpireAfterRetention: a request that becomes denied
// (by a person or at ingest), revoked or expired carries the table's ttl,
// PAM_REQUEST_RETENTION_DAYS after the write that made it final (that same
// write); pending, approved and auto_approved requests carry none. Past its
// ttl reads no longer find a request (they hide it until DynamoDB deletes
// it). Before, nothing set a ttl on elevation requests.
func TestFinalRequestsExpireAfterRetention(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, groups...)
	w.Env.Deps.Cfg.PAMActuatorEnabled = true
	const retention = 10 * 24 * time.Hour
	w.Env.Deps.Cfg.PAMRequestRetention = retention
	w.API = fixture.API(t, w.Env, groups...)
	d := newDevice(t, w, w.A.ID, "", "keep")
	ttlOf := func(id string) int64 { t.Helper(); return stored(t, w, w.A.ID, id).TTL }
	until := func() int64 { return w.Env.Clock.Now().Add(retention).Unix() }

	pending, _ := submit(t, w, d, "CORP\\p")
	approved, _ := submit(t, w, d, "CORP\\a")
	denied, _ := submit(t, w, d, "CORP\\d")
	revoked, _ := submit(t, w, d, "CORP\\r")
	rule(t, w, fixture.AAdmin, map[string]any{"name": "deny", "verdict": "auto_deny", "matchUser": "CORP\\deny"})
	rule(t, w, fixture.AAdmin, map[string]any{"name": "auto", "verdict": "auto_approve", "matchUser": "CORP\\auto"})
	autoDenied, st := submit(t, w, d, "CORP\\deny")
	if st != "denied" || ttlOf(autoDenied) != until() {
		t.Fatalf("denied at ingest: %s, ttl %d, want %d", st, ttlOf(autoDenied), until())
	}
	auto, st := submit(t, w, d, "CORP\\auto")
	if st != "auto_approved" {
		t.Fatalf("auto: %s", st)
	}
	w.Env.Clock.Advance(time.Minute)
	fixture.Expect(t, respond(t, w, fixture.AAdmin, approved, map[string]any{"decision": "approve", "durationMinutes": 60}), http.StatusOK)
	fixture.Expect(t, respond(t, w, fixture.AAdmin, revoked, map[string]any{"decision": "approve"}), http.StatusOK)
	fixture.Expect(t, respond(t, w, fixture.AAdmin, denied, map[string]any{"decision": "deny", "reason": "no"}), http.StatusOK)
	if got := ttlOf(denied); got != until() {
		t.Fatalf("denied ttl %d, want %d", got, until())
	}
	w.Env.Clock.Advance(time.Minute)
	fixture.Expect(t, revoke(t, w, fixture.AAdmin, revoked, map[string]any{"reason": "done"}), http.StatusOK)
	if got := ttlOf(revoked); got != until() {
		t.Fatalf("revoked ttl %d, want %d", got, until())
	}
	for _, id := range []string{pending, approved, auto} {
		if r := stored(t, w, w.A.ID, id); r.TTL != 0 {
			t.Fatalf("%s request %s has ttl %d", r.Status, id, r.TTL)
		}
	}
	// The sweeper expires the pending one (pending TTL 30 minutes) and the
	// auto-approved one (15 minutes): expired is final.
	w.Env.Clock.Advance(31 * time.Minute)
	if n, err := sweepergroup.Sweeper(w.Env.Deps).Jobs["elevation-expiry"](context.Background()); err != nil || n != 2 {
		t.Fatalf("sweep %d %v", n, err)
	}
	for _, id := range []string{pending, auto} {
		if r := stored(t, w, w.A.ID, id); r.Status != "expired" || r.TTL != until() {
			t.Fatalf("%s: %s ttl %d, want expired at %d", id, r.Status, r.TTL, until())
		}
	}
	if ttlOf(approved) != 0 {
		t.Fatal("approved (still active) has a ttl")
	}
	// Past the retention of the first final ones, reads no longer find them
	// (until DynamoDB deletes them), and the others are still there.
	w.Env.Clock.Advance(retention - 32*time.Minute)
	ps := pam.Store{St: w.Env.Store}
	for id, gone := range map[string]bool{autoDenied: true, denied: true, revoked: false, approved: false} {
		_, err := ps.Request(context.Background(), w.A.ID, id)
		if gone != errors.Is(err, store.ErrNotFound) {
			t.Fatalf("%s after the retention: %v", id, err)
		}
	}
}
