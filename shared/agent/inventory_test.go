package agent_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/tests/fixture"
)

// TestDeviceUpdatedEvents: device.updated on PATCH /devices/:id and on an
// inventory upload that changes the device record; not on an unchanged
// upload, nor on a heartbeat.
func TestDeviceUpdatedEvents(t *testing.T) {
	w := newWorld(t)
	id, tok := w.Device(t, fixture.AAdmin, w.A.ID, "", "upd")
	events(t, w)
	hw := "/api/v1/agents/" + id + "/hardware"
	fixture.Expect(t, w.AgentCall(t, http.MethodPut, hw, tok, map[string]any{"cpuCores": 4, "model": "X1"}), http.StatusOK)
	if ev := strings.Join(events(t, w), ","); ev != "device.updated" {
		t.Fatalf("changed hardware raised %q", ev)
	}
	w.Env.Clock.Advance(time.Second)
	res := fixture.Expect(t, w.AgentCall(t, http.MethodPut, hw, tok, map[string]any{"cpuCores": 4, "model": "X1"}), http.StatusOK)
	fixture.Budget(t, res, 3)
	if ev := events(t, w); len(ev) != 0 {
		t.Fatalf("unchanged hardware raised %v", ev)
	}
	w.Env.Clock.Advance(time.Second)
	fixture.Expect(t, w.AgentCall(t, http.MethodPut, "/api/v1/agents/"+id+"/network", tok, map[string]any{"ipAddress": "10.0.0.5"}), http.StatusOK)
	w.Env.Clock.Advance(time.Second)
	fixture.Expect(t, w.AgentCall(t, http.MethodPost, beatPath(id), tok, beat()), http.StatusOK)
	fixture.Expect(t, w.Call(t, http.MethodPatch, "/api/v1/devices/"+id, fixture.AAdmin, map[string]any{"displayName": "Front desk"}), http.StatusOK)
	if ev := strings.Join(events(t, w), ","); ev != "device.updated,device.updated" {
		t.Fatalf("network upload, heartbeat and PATCH raised %q", ev)
	}
}
