package tests

import (
	"context"
	"testing"

	"github.com/gale-rmm/gale/shared/app/groups"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// The demo seed gives every site its own id, and each demo user reads every
// site it lists (two organizations once shared a site id, and one of them got
// 404 for its own site).
func TestSeededUsersReadEverySiteTheyList(t *testing.T) {
	t.Parallel()
	const pw = "Gale-Demo-Admin-2026!"
	env := testenv.New(t, "SYSTEM_ADMIN_EMAIL", "admin@gale.local", "SYSTEM_ADMIN_PASSWORD", pw)
	if _, err := groups.Seed(context.Background(), env.Deps); err != nil {
		t.Fatal(err)
	}
	api := fixture.API(t, env)
	seen := map[string]string{}
	for _, email := range []string{"acme-admin@gale.local", "beta-tech@gale.local"} {
		login := fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
			Body: map[string]any{"email": email, "password": pw}}), 200).JSON(t)
		tokens, _ := login["tokens"].(map[string]any)
		token, _ := tokens["accessToken"].(string)
		var list struct {
			Data []struct{ ID, OrgID string }
		}
		fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: "GET", Path: "/api/v1/sites", Token: token}), 200).Decode(t, &list)
		if len(list.Data) == 0 {
			t.Fatalf("%s lists no site", email)
		}
		for _, s := range list.Data {
			if other, dup := seen[s.ID]; dup && other != s.OrgID {
				t.Fatalf("site id %s is used by two organizations", s.ID)
			}
			seen[s.ID] = s.OrgID
			fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: "GET", Path: "/api/v1/sites/" + s.ID, Token: token}), 200)
		}
	}
}
