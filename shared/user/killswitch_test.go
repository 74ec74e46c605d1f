package user_test

import (
	"net/http"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
)

// Disabling an account is a kill switch
// (docs/decisions.md#kill-switches-always-win): raced by ten edits the account
// makes to itself (each moves its profile's version on), the system
// administrator's disable answers 200, and afterwards the account's session is
// refused. The same for a suspension of its membership raced by its own edits
// and a removal raced by role changes.
func TestKillSwitchesWinAgainstTheEditsTheyStop(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "users", "auth")
	for _, c := range []struct {
		name   string
		caller string
		method string
		body   map[string]any
		rival  func(m fixture.Caller) fixture.Request
	}{
		{"account disable", fixture.SysAdmin, http.MethodPatch, map[string]any{"orgId": w.A.ID, "status": "disabled"},
			func(m fixture.Caller) fixture.Request {
				return fixture.Request{Method: http.MethodPatch, Path: "/api/v1/users/me", Token: m.Token, Body: map[string]any{"name": "Busy"}}
			}},
		{"membership suspension", fixture.AAdmin, http.MethodPatch, map[string]any{"orgId": w.A.ID, "status": "disabled"},
			func(m fixture.Caller) fixture.Request {
				return fixture.Request{Method: http.MethodPatch, Path: "/api/v1/users/me", Token: m.Token, Body: map[string]any{"name": "Busy"}}
			}},
		{"removal", fixture.AAdmin, http.MethodDelete, nil,
			func(m fixture.Caller) fixture.Request {
				return fixture.Request{Method: http.MethodPost, Path: "/api/v1/users/" + m.UserID + "/role", Token: w.Tokens[fixture.PXAdmin],
					Body: map[string]any{"orgId": w.A.ID, "roleId": role.OrgTechnicianID}}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID, MFA: true})
			if c.name == "membership suspension" {
				// A second membership keeps the account out of A's hands: A suspends its membership only.
				fixture.Join(t, w.Env, m.UserID, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PY.ID, OrgID: w.C.ID, RoleID: role.OrgViewerID})
			}
			inA := fixture.Request{Method: http.MethodGet, Path: "/api/v1/users?orgId=" + w.A.ID, Token: m.Token}
			fixture.Expect(t, fixture.Do(t, w.API, inA), http.StatusOK) // control: the member acts in A
			path := "/api/v1/users/" + m.UserID
			if c.method == http.MethodDelete {
				path += "?orgId=" + w.A.ID
			}
			var wg sync.WaitGroup
			var kill fixture.Response
			start := make(chan struct{})
			wg.Add(11)
			go func() {
				defer wg.Done()
				<-start
				kill = fixture.Do(t, w.API, fixture.Request{Method: c.method, Path: path, Token: w.Tokens[c.caller], Body: c.body, Raced: true})
			}()
			for range 10 {
				go func() {
					defer wg.Done()
					<-start
					if res := fixture.Do(t, w.API, c.rival(m)); res.Status >= 500 {
						t.Errorf("rival: %d %s", res.Status, res.Body)
					}
				}()
			}
			close(start)
			wg.Wait()
			if kill.Status != http.StatusOK {
				t.Fatalf("%s raced by the edits it stops: %d %s", c.name, kill.Status, kill.Body)
			}
			if res := fixture.Do(t, w.API, inA); res.Status == http.StatusOK {
				t.Fatalf("the member's session acts in A after the %s", c.name)
			}
		})
	}
}
