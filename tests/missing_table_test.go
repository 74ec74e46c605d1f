package tests

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// Issue 19 finding 5: after the emulator lost its state every request answered
// 500 `internal` (ResourceNotFoundException) until the process restarted. A
// missing table is a dependency outage: 503 `Service unavailable` with
// Retry-After, on public and authenticated routes alike.
func TestMissingTableAnswers503(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	h := fixture.API(t, env, "auth")
	p := fixture.Partner(t, env, "P")
	o := fixture.Org(t, env, p.ID, "O")
	const pw = "Correct-Horse-Battery-9"
	c := fixture.User(t, env, fixture.Member{Password: pw, Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})
	login := func() fixture.Response {
		return fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
			Body: map[string]string{"email": c.Email, "password": pw}, RemoteAddr: "198.51.100.7:1"})
	}
	fixture.Expect(t, login(), http.StatusOK)

	if _, err := dynamodb.NewFromConfig(env.AWS).DeleteTable(context.Background(),
		&dynamodb.DeleteTableInput{TableName: aws.String(env.Resources.Table)}); err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]fixture.Response{
		"login": login(),
		"me":    fixture.Do(t, h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: c.Token}),
	} {
		if res.Status != http.StatusServiceUnavailable || res.Header.Get("Retry-After") == "" {
			t.Fatalf("%s with the table gone: %d (Retry-After %q) %s, want 503", name, res.Status, res.Header.Get("Retry-After"), res.Body)
		}
		if body := res.JSON(t); body["error"] != "Service unavailable" || body["code"] != "unavailable" {
			t.Fatalf("%s: body %s", name, res.Body)
		}
	}
}
