package app_test

import (
	"testing"

	"github.com/gale-rmm/gale/shared/app/groups"

	"github.com/gale-rmm/gale/shared/routes"
)

// Every HTTP route group has exactly one builder, and every builder a group, so
// the local runtime serves what the CDK app deploys.
func TestBuildersMatchRouteGroups(t *testing.T) {
	builders := groups.Builders()
	groups := map[string]bool{}
	for _, g := range routes.Groups {
		groups[g.Function] = true
		if builders[g.Function] == nil {
			t.Errorf("route group %s has no builder in groups.Builders()", g.Function)
		}
	}
	for name := range builders {
		if !groups[name] {
			t.Errorf("groups.Builders() has %q, which is not a route group", name)
		}
	}
	if len(builders) != len(routes.Groups) {
		t.Errorf("groups.Builders() has %d entries, routes.Groups %d", len(builders), len(routes.Groups))
	}
	for _, w := range routes.Workers {
		if _, ok := builders[w]; ok {
			t.Errorf("worker %s has an HTTP builder", w)
		}
	}
}
