package auth_test

import (
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/auth"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Issue 35: refusals say what to do next.

func TestKeySentAsBearerPointsAtTheHeader(t *testing.T) {
	if auth.KeyPrefix != apikey.Prefix {
		t.Fatalf("auth's key prefix %q, apikey's %q", auth.KeyPrefix, apikey.Prefix)
	}
	w := newWorld(t)
	body := fixture.Expect(t, w.get(t, "/user", apikey.Prefix+"abcdefghijklmnopqrstuvwxyz012345", ""), 401).JSON(t)
	d, _ := body["details"].(map[string]any)
	hint, _ := d["hint"].(string)
	if body["error"] != "Invalid or expired token" || body["code"] != "unauthorized" || !strings.Contains(hint, "X-API-Key") {
		t.Fatalf("body %v, want the spec's message and a hint naming X-API-Key", body)
	}
	// A broken JWT is no key: no hint about keys.
	body = fixture.Expect(t, w.get(t, "/user", w.caller.Token+"x", ""), 401).JSON(t)
	if body["details"] != nil {
		t.Fatalf("a bad JWT got key hints: %v", body)
	}
}

func TestMFARequiredNamesTheNextSteps(t *testing.T) {
	w := newWorld(t)
	body := fixture.Expect(t, w.get(t, "/mfa", w.caller.Token, ""), 403).JSON(t)
	d, _ := body["details"].(map[string]any)
	hint, _ := d["hint"].(string)
	if body["error"] != "MFA required" || d["enrollUrl"] != "/api/v1/auth/mfa/setup" ||
		!strings.Contains(hint, "/api/v1/auth/mfa/setup") || !strings.Contains(hint, "sign in again") {
		t.Fatalf("body %v, want the enrolment route and the new sign-in named", body)
	}
}
