package agent_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/agent"
	"github.com/gale-rmm/gale/tests/fixture"
)

func TestClean(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"plain-host":                           "plain-host",
		"evil\u202Egnp.exe":                    "evilgnp.exe",
		"a\u2066b\u2069c\u200Ed\u200Fe\u061Cf": "abcdef",
		"tab\there\nnew\x00nul\x7fdel\u0085":   "tabherenewnuldel",
		"line\u2028para\u2029":                 "linepara",
		"  spaced  ":                           "spaced",
		"ünïcödé-名前":                           "ünïcödé-名前",
	} {
		if got := agent.Clean(in, 255); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := agent.Clean(strings.Repeat("名", 300), 255); len([]rune(got)) != 255 {
		t.Errorf("cut to %d characters", len([]rune(got)))
	}
}

// Issue 18, item 5: agent-supplied hostnames kept bidi-override and other
// control characters; they are stored clean and cut to length.
func TestAgentStringsAreStoredClean(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, raw := w.EnrollmentKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "k", "maxUsage": 2})
	body := fixture.EnrollBody(raw, "pay\u202Eroll\u0007-"+strings.Repeat("x", 200))
	body["osVersion"] = "11\u2066 Pro\u2069"
	body["hardware"] = map[string]any{"model": "Think\u202Dpad\x1b[31m"}
	res := fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/agents/enroll",
		RemoteAddr: "198.51.100.77:1234", Body: body}), http.StatusCreated)
	var e struct{ DeviceID, AuthToken string }
	res.Decode(t, &e)
	d := fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+e.DeviceID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	host, _ := d["hostname"].(string)
	if host != "payroll-"+strings.Repeat("x", 200) {
		t.Fatalf("stored hostname %q", host)
	}
	if d["osVersion"] != "11 Pro" || d["hardware"].(map[string]any)["model"] != "Thinkpad[31m" {
		t.Fatalf("stored %v / %v", d["osVersion"], d["hardware"])
	}
	// A heartbeat's hostname too.
	fixture.Expect(t, w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+e.DeviceID+"/heartbeat", e.AuthToken,
		map[string]any{"status": "ok", "agentVersion": "1.0.1", "hostname": "new\u202Ename", "lastUser": "ad\u200Fmin"}), http.StatusOK)
	d = fixture.Expect(t, w.Call(t, http.MethodGet, "/api/v1/devices/"+e.DeviceID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if d["hostname"] != "newname" || d["lastUser"] != "admin" {
		t.Fatalf("after heartbeat: %v %v", d["hostname"], d["lastUser"])
	}
}
