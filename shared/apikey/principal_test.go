package apikey_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
)

// spIssued is the create answer.
type spIssued struct {
	ID, OrgID, Status, APIKeyID, Key, KeyPrefix, Warning string
	Scopes                                               []string
}

func createSP(t *testing.T, w *fixture.World, caller string, body map[string]any) spIssued {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodPost, spURL, caller, body), http.StatusCreated)
	var sp spIssued
	res.Decode(t, &sp)
	return sp
}

func TestServicePrincipalLifecycle(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sp := createSP(t, w, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "Backup bot", "scopes": []string{"devices:read", "scripts:read"}})
	if sp.Status != "active" || sp.APIKeyID == "" || !strings.HasPrefix(sp.Key, "svc_") || sp.KeyPrefix != sp.Key[:12] || sp.Warning == "" {
		t.Fatalf("created %+v", sp)
	}
	fixture.Expect(t, withKey(t, w, sp.Key, ""), http.StatusOK)
	// The principal's key does not depend on the user who created it.
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "disabled")
	fixture.Expect(t, withKey(t, w, sp.Key, ""), http.StatusOK)
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "active")

	// Rotate: a new key, the previous revoked in the same step.
	res := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	next, _ := res["key"].(string)
	if res["apiKeyId"] == sp.APIKeyID || next == "" {
		t.Fatalf("rotate: %v", res)
	}
	if r := withKey(t, w, sp.Key, ""); r.Status != 401 || errText(t, r) != "API key is revoked" {
		t.Fatalf("previous key after rotation: %d %s", r.Status, r.Body)
	}
	fixture.Expect(t, withKey(t, w, next, ""), http.StatusOK)

	// Migrate a user's key: its scopes narrow to the intersection, and it no longer depends on the user.
	k := create(t, w, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "legacy", "scopes": []string{"devices:read", "sites:read"}})
	mig := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.AAdmin, map[string]any{"keyId": k.ID}), http.StatusOK).JSON(t)
	if sc, _ := mig["scopes"].([]any); len(sc) != 1 || sc[0] != "devices:read" || mig["servicePrincipalId"] != sp.ID {
		t.Fatalf("migrated: %v", mig)
	}
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "disabled")
	fixture.Expect(t, withKey(t, w, k.Key, ""), http.StatusOK)
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "active")

	// Disable: every active key of the principal is revoked; disabled is final.
	dis := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/disable", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if dis["status"] != "disabled" {
		t.Fatalf("disable: %v", dis)
	}
	for _, raw := range []string{next, k.Key} {
		if r := withKey(t, w, raw, ""); r.Status != 401 || errText(t, r) != "API key is revoked" {
			t.Fatalf("key of a disabled principal: %d %s", r.Status, r.Body)
		}
	}
	for _, path := range []string{"/rotate", "/disable"} {
		r := w.Call(t, http.MethodPost, spURL+"/"+sp.ID+path, fixture.AAdmin, nil)
		if fixture.Expect(t, r, http.StatusConflict); errText(t, r) != "Service principal is disabled" {
			t.Fatalf("%s on a disabled principal: %s", path, r.Body)
		}
	}
	k2 := create(t, w, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "other", "scopes": []string{"devices:read"}})
	fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.AAdmin, map[string]any{"keyId": k2.ID}), http.StatusConflict)
}

func TestServicePrincipalRules(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	// Ceiling: the acting user holds every scope granted.
	r := w.Call(t, http.MethodPost, spURL, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "x", "scopes": []string{"*"}})
	if fixture.Expect(t, r, http.StatusForbidden); errText(t, r) != "Cannot grant scopes you do not hold" {
		t.Fatalf("ceiling: %s", r.Body)
	}
	// Site- and group-restricted users are refused explicitly, on every route.
	for _, caller := range []string{fixture.ARestricted, fixture.AGroupOnly} {
		for _, c := range []struct {
			method, path string
			body         any
		}{{http.MethodGet, spURL, nil}, {http.MethodPost, spURL, map[string]any{"orgId": w.A.ID, "name": "x", "scopes": []string{}}}} {
			r := w.Call(t, c.method, c.path, caller, c.body)
			if fixture.Expect(t, r, http.StatusForbidden); errText(t, r) != "Site-restricted users cannot manage service principals, which are organization-wide" {
				t.Fatalf("%s %s as %s: %s", c.method, c.path, caller, r.Body)
			}
		}
	}
	// Migrate only keys of the principal's organization.
	sp := createSP(t, w, fixture.PXAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"*"}})
	kb := create(t, w, fixture.PXAdmin, map[string]any{"orgId": w.B.ID, "name": "b", "scopes": []string{"devices:read"}})
	fixture.Invalid(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.PXAdmin, map[string]any{"keyId": kb.ID}), "keyId")
	// MFA is required for the writes.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.ANoMFA, nil), http.StatusForbidden, "MFA_REQUIRED")
}

func TestConcurrentPrincipalRotationsLeaveOneActiveKey(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	sp := createSP(t, w, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.AAdmin, nil).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		if c == http.StatusOK {
			won++
		} else if c != http.StatusConflict {
			t.Fatalf("codes %v", codes)
		}
	}
	// A rotation that reads after another's commit rotates again
	// (legitimately); whatever the interleaving, someone won and exactly one
	// of the principal's keys is active.
	if won < 1 {
		t.Fatalf("no winner: %v", codes)
	}
	res := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"?status=active", fixture.AAdmin, nil), http.StatusOK)
	if got := len(fixture.IDs(t, res)); got != 1 {
		t.Fatalf("%d active keys, want 1", got)
	}
}
