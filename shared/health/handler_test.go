package health_test

import (
	"os"
	"testing"

	"github.com/gale-rmm/gale/shared/app/healthgroup"

	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestHealthy(t *testing.T) {
	env := testenv.New(t)
	h, err := healthgroup.Health(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	res := fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: "/api/v1/health"}), 200)
	fixture.Budget(t, res, 1) // DescribeTable; the queues are SQS calls
	body := res.JSON(t)
	checks, _ := body["checks"].(map[string]any)
	if body["status"] != "ok" || body["version"] == "" || checks["table"] != "ok" || checks["queues"] != "ok" {
		t.Fatalf("body %s", res.Body)
	}
}

func TestDegradedIs503(t *testing.T) {
	env := testenv.New(t)
	env.Cfg.DeliveryQueueURL = env.Cfg.DeliveryQueueURL + "-gone"
	env.Store.Table = env.Store.Table + "-gone"
	h, err := healthgroup.Health(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	body := fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: "/api/v1/health"}), 503).JSON(t)
	checks, _ := body["checks"].(map[string]any)
	if body["status"] != "degraded" || checks["table"] != "unavailable" || checks["queues"] != "unavailable" {
		t.Fatalf("body %v", body)
	}
}

func TestOpenAPIDocumentIsPublic(t *testing.T) {
	env := testenv.New(t)
	h, err := healthgroup.Health(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	res := fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: "/api/v1/openapi.json"}), 200)
	fixture.Budget(t, res, 0)
	body := res.JSON(t)
	paths, _ := body["paths"].(map[string]any)
	if body["openapi"] != "3.1.0" || paths["/api/v1/health"] == nil || paths["/api/v1/openapi.json"] == nil {
		t.Fatalf("document %.300s", res.Body)
	}
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
}

// Issue 35: GET / and GET /api/v1 name the reference page and the document
// instead of a bare 404; nothing below them is caught.
func TestIndexPointsAtTheReference(t *testing.T) {
	env := testenv.New(t)
	h, err := healthgroup.Health(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/", "/api/v1"} {
		res := fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: path}), 200)
		fixture.Budget(t, res, 0)
		body := res.JSON(t)
		if body["docs"] != "/api/v1/docs" || body["openapi"] != "/api/v1/openapi.json" {
			t.Fatalf("GET %s: body %s", path, res.Body)
		}
	}
	for _, path := range []string{"/x", "/api/v1/", "/api/v1/nothing"} {
		fixture.Expect(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: path}), 404)
	}
	for _, path := range []string{"/?x=1", "/api/v1?x=1"} {
		fixture.Invalid(t, fixture.Do(t, h, fixture.Request{Method: "GET", Path: path}), "x")
	}
}
