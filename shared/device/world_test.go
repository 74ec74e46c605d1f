package device_test

import (
	"os"
	"testing"

	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// newWorld is fixture.World serving agents, devices and enrollment keys.
func newWorld(t *testing.T) *fixture.World {
	t.Helper()
	return fixture.NewWorld(t, "agents", "devices", "enrollment-keys")
}
