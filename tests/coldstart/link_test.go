// Package coldstart holds each function's binary to what its group needs: a
// function links a heavy or sensitive dependency only when its own routes use
// it, which keeps binaries small and cold starts short.
package coldstart

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// links names the packages that only some functions may link, and which.
// sso finishes a sign-in (tokens, the MFA hand-off) through shared/signin.
var links = map[string][]string{
	"github.com/aws/aws-sdk-go-v2/service/sesv2":       {"mailer"},
	"github.com/aws/aws-sdk-go-v2/service/sns":         {"mailer"},
	"golang.org/x/crypto/argon2":                       {"auth", "auth-passkeys", "sweeper", "mailer", "sso"},
	"github.com/wagslane/go-password-validator":        {"auth", "auth-passkeys", "sweeper", "mailer", "sso"},
	"github.com/gale-rmm/gale/shared/signin":           {"auth", "auth-passkeys", "sweeper", "mailer", "sso"},
	"github.com/coreos/go-oidc/v3/oidc":                {"sso"},
	"golang.org/x/oauth2":                              {"sso"},
	"github.com/go-jose/go-jose/v4":                    {"sso"},
	"github.com/go-webauthn/webauthn/webauthn":         {"auth-passkeys"},
	"github.com/fxamacker/cbor/v2":                     {"auth-passkeys"},
	"gopkg.in/yaml.v3":                                 {"health"},
	"github.com/getkin/kin-openapi/openapi3":           {},
	"github.com/gale-rmm/gale/tests/fixture":           {},
	"github.com/gale-rmm/gale/shared/app/groups":       {},
	"github.com/gale-rmm/gale/shared/emulator":         {},
	"github.com/gale-rmm/gale/shared/notify/awsnotify": {"mailer"},
	// The agent channel: the WebSocket server runs only under make run and
	// tests; the Management API client where something is pushed (filters
	// and search link it through devicesgroup.Service, which wires the
	// actuation route's package; they never build it).
	"github.com/coder/websocket":                                   {},
	"github.com/gale-rmm/gale/shared/channel/bridge":               {},
	"github.com/aws/aws-sdk-go-v2/service/apigatewaymanagementapi": {"agent-channel", "agents", "devices", "pam", "sweeper", "filters", "search"},
	// The zone database (about 450 KB of data): site timezones (organizations,
	// sites) and PAM rules' time windows, wherever the PAM service is wired
	// (shared/app/pamgroup; filters and search through devicesgroup). Not auth
	// or users, which reach shared/pam's types through shared/push only.
	"time/tzdata": {"organizations", "sites", "agent-channel", "agents", "devices", "pam", "sweeper", "filters", "search"},
}

// needs names, for a package, what every function linking it must link too.
// The PAM service loads time-window zones with time.LoadLocation and Lambda's
// provided.al2023 image has no zoneinfo.
var needs = map[string]string{
	"github.com/gale-rmm/gale/shared/app/pamgroup": "time/tzdata",
}

func TestFunctionsLinkOnlyWhatTheyUse(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(filepath.Join(root, "functions"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		fn := d.Name()
		cmd := exec.Command("go", "list", "-deps", "./functions/"+fn)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %s: %v", fn, err)
		}
		deps := strings.Fields(string(out))
		for pkg, allowed := range links {
			if slices.Contains(deps, pkg) && !slices.Contains(allowed, fn) {
				t.Errorf("%s links %s (only %v may)", fn, pkg, allowed)
			}
		}
		for pkg, need := range needs {
			if slices.Contains(deps, pkg) && !slices.Contains(deps, need) {
				t.Errorf("%s links %s without %s", fn, pkg, need)
			}
		}
	}
}
