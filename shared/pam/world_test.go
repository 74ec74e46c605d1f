package pam_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/device"
	"github.com/gale-rmm/gale/shared/pam"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const base = "/api/v1/pam"

var groups = []string{"pam", "agents", "devices", "enrollment-keys", "api-keys"}

// newWorld is the cast serving the PAM, agents, devices and enrollment-keys
// groups with the actuator enabled.
func newWorld(t *testing.T) *fixture.World {
	t.Helper()
	w := fixture.NewWorld(t, groups...)
	w.Env.Deps.Cfg.PAMActuatorEnabled = true
	w.API = fixture.API(t, w.Env, groups...)
	return w
}

// dev is an enrolled device and its agent token.
type dev struct{ id, tok string }

func newDevice(t *testing.T, w *fixture.World, orgID, siteID, host string) dev {
	t.Helper()
	caller := fixture.AAdmin
	switch orgID {
	case w.B.ID:
		caller = fixture.BAdmin
	case w.C.ID:
		caller = fixture.CAdmin
	}
	id, tok := w.Device(t, caller, orgID, siteID, host)
	return dev{id, tok}
}

func prompt(subject, path string) map[string]any {
	return map[string]any{"subject_username": subject, "target_executable_path": path,
		"target_executable_signer": "Contoso Ltd", "pid": 4242, "parent_image": `C:\Windows\explorer.exe`,
		"command_line": `"C:\Tools\setup.exe" /quiet`, "observed_at": "2026-11-01T08:59:59.000Z"}
}

func ingest(t *testing.T, w *fixture.World, d dev, body any) fixture.Response {
	t.Helper()
	return w.AgentCall(t, http.MethodPost, "/api/v1/agents/"+d.id+"/elevation-requests", d.tok, body)
}

// submit records a prompt and returns the request id and status.
func submit(t *testing.T, w *fixture.World, d dev, subject string) (string, string) {
	t.Helper()
	res := fixture.Expect(t, ingest(t, w, d, prompt(subject, `C:\Tools\setup.exe`)), http.StatusCreated)
	var out struct{ ID, Status string }
	res.Decode(t, &out)
	return out.ID, out.Status
}

func respond(t *testing.T, w *fixture.World, caller, id string, body any) fixture.Response {
	t.Helper()
	return w.Call(t, http.MethodPost, base+"/elevation-requests/"+id+"/respond", caller, body)
}

func revoke(t *testing.T, w *fixture.World, caller, id string, body any) fixture.Response {
	t.Helper()
	return w.Call(t, http.MethodPost, base+"/elevation-requests/"+id+"/revoke", caller, body)
}

func actuate(t *testing.T, w *fixture.World, caller, deviceID string, body any) fixture.Response {
	t.Helper()
	return w.Call(t, http.MethodPost, "/api/v1/devices/"+deviceID+"/actuate-elevation", caller, body)
}

// stored reads request id of orgID from the table.
func stored(t *testing.T, w *fixture.World, orgID, id string) *pam.Request {
	t.Helper()
	r, err := pam.Store{St: w.Env.Store}.Request(context.Background(), orgID, id)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// email is a cast member's e-mail address.
func email(t *testing.T, w *fixture.World, caller string) string {
	t.Helper()
	var u struct {
		Email string `dynamodbav:"email"`
	}
	if err := w.Env.Store.Get(context.Background(), "USER#"+w.Users[caller], "PROFILE", &u); err != nil {
		t.Fatal(err)
	}
	return u.Email
}

// events drains the events queue and returns the events' types and data.
func events(t *testing.T, w *fixture.World) []map[string]any { return fixture.Events(t, w) }

func elevTypes(evs []map[string]any) string {
	var out []string
	for _, e := range evs {
		if s, _ := e["type"].(string); strings.HasPrefix(s, "elevation.") {
			out = append(out, s)
		}
	}
	return strings.Join(out, ",")
}

// audits lists the audit actions recorded for tenant key (ORG#<id>).
func audits(t *testing.T, w *fixture.World, orgID string) string {
	t.Helper()
	items, err := w.Env.Store.All(context.Background(), store.Query{PK: "AUDIT#ORG#" + orgID})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		var a struct {
			Action string `dynamodbav:"action"`
		}
		_ = store.Unmarshal(it, &a)
		out = append(out, a.Action)
	}
	return strings.Join(out, ",")
}

func rule(t *testing.T, w *fixture.World, caller string, body map[string]any) map[string]any {
	t.Helper()
	res := fixture.Expect(t, w.Call(t, http.MethodPost, base+"/rules", caller, body), http.StatusCreated)
	r, _ := res.JSON(t)["rule"].(map[string]any)
	return r
}

func devStore(w *fixture.World) device.Store { return device.Store{St: w.Env.Store} }
