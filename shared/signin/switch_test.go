package signin_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

// scoped is an account with an organization membership (alice of newSetup,
// Org Admin of O) and a partner membership (Partner Technician of P).
type scoped struct {
	setup
	partner     string
	orgMember   string
	partnerMemb string
}

func newScoped(t *testing.T) scoped {
	t.Helper()
	s := newSetup(t)
	o := orgOf(t, s)
	fixture.Join(t, s.env, s.user.UserID, fixture.Member{Scope: authz.ScopePartner, PartnerID: o.PartnerID, RoleID: role.PartnerTechnicianID})
	sc := scoped{setup: s, partner: o.PartnerID}
	ms, err := s.env.Deps.Users.Memberships(t.Context(), s.user.UserID)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Scope == authz.ScopeOrg {
			sc.orgMember = m.ID
		} else {
			sc.partnerMemb = m.ID
		}
	}
	return sc
}

func orgOf(t *testing.T, s setup) *tenant.Organization {
	t.Helper()
	o, err := tenant.Store{St: s.env.Store}.Org(t.Context(), s.org)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func me(t *testing.T, s setup, token string) map[string]any {
	t.Helper()
	return fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: token}), 200).JSON(t)
}

func switchTo(t *testing.T, s setup, token, membershipID string) fixture.Response {
	t.Helper()
	return fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/switch", Token: token,
		Body: map[string]string{"membershipId": membershipID}, RemoteAddr: "192.0.2.60:4000"})
}

func accessOf(t *testing.T, res fixture.Response) string {
	t.Helper()
	return res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string)
}

func TestSwitchBetweenOrganizationAndPartner(t *testing.T) {
	s := newScoped(t)
	// Login picks the partner membership (system, partner, oldest organization).
	res := fixture.Expect(t, login(t, s.setup, "alice@example.com", pw, "192.0.2.50"), 200)
	first := accessOf(t, res)
	firstRefresh := refreshCookie(t, res).Value
	body := me(t, s.setup, first)
	if u := body["user"].(map[string]any); u["scope"] != "partner" {
		t.Fatalf("login scope = %v", u["scope"])
	}
	ms := body["memberships"].([]any)
	if len(ms) != 2 {
		t.Fatalf("memberships = %v", ms)
	}
	want := map[string]string{s.orgMember: "O|Org Admin|organization", s.partnerMemb: "P|Partner Technician|partner"}
	for _, m := range ms {
		m := m.(map[string]any)
		if got := m["name"].(string) + "|" + m["roleName"].(string) + "|" + m["scope"].(string); want[m["id"].(string)] != got {
			t.Fatalf("membership %v, want %s", m, want[m["id"].(string)])
		}
	}

	// Switch to the organization.
	res = fixture.Expect(t, switchTo(t, s.setup, first, s.orgMember), 200)
	fixture.Budget(t, res, 5) // a system role: auth, memberships, profile, transaction (+1 spare)
	second := accessOf(t, res)
	cookie := refreshCookie(t, res).Value
	if u := me(t, s.setup, second)["user"].(map[string]any); u["scope"] != "organization" || u["orgId"] != s.org {
		t.Fatalf("after switch: %v", u)
	}
	// The session it came from is over: its access and refresh tokens die.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: first}), 401)
	fixture.Expect(t, doRefresh(t, s.setup, firstRefresh, true), 401)
	// The new refresh token stays in the organization.
	res = fixture.Expect(t, doRefresh(t, s.setup, cookie, true), 200)
	if u := res.JSON(t)["user"].(map[string]any); u["orgId"] != s.org || u["roleId"] != role.OrgAdminID {
		t.Fatalf("refresh after switch: %v", u)
	}
	// The next password login resumes the organization.
	res = fixture.Expect(t, login(t, s.setup, "alice@example.com", pw, "192.0.2.51"), 200)
	if u := res.JSON(t)["user"].(map[string]any); u["orgId"] != s.org {
		t.Fatalf("login after switch: %v", u)
	}
	// And back to the partner.
	res = fixture.Expect(t, switchTo(t, s.setup, accessOf(t, res), s.partnerMemb), 200)
	if u := res.JSON(t)["user"].(map[string]any); u["scope"] != "partner" || u["partnerId"] != s.partner {
		t.Fatalf("switch back: %v", u)
	}
	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 100)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Action == "auth.switch" && r.ResourceID == s.orgMember {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d auth.switch rows in O, want 1: %+v", n, recs)
	}
}

// suspend moves membership id of userID to state st (what PATCH /users/:id
// status disabled writes, shared/user), or removes it for "".
func suspend(t *testing.T, s setup, userID, id string, st user.MemberStatus) {
	t.Helper()
	if err := setState(s, userID, id, st); err != nil {
		t.Fatal(err)
	}
}

func setState(s setup, userID, id string, st user.MemberStatus) error {
	ctx := context.Background()
	ms, err := s.env.Deps.Users.Memberships(ctx, userID)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if m.ID != id {
			continue
		}
		w := store.Delete(m.PK, m.SK)
		if st != "" {
			w = store.Change(m.PK, m.SK, expression.Set(expression.Name("status"), expression.Value(st)))
		}
		return s.env.Store.Do(ctx, w)
	}
	return fmt.Errorf("no membership %s", id)
}

func TestSwitchRefusals(t *testing.T) {
	s := newScoped(t)
	tok := s.user.Token // the fixture's session, in O
	// Another account's membership, an unknown id, the session's own.
	bob := fixture.User(t, s.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: s.partner, RoleID: role.PartnerTechnicianID})
	bobs, err := s.env.Deps.Users.Memberships(t.Context(), bob.UserID)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{bobs[0].ID, uuid.NewString(), "not-a-uuid", s.orgMember} {
		fixture.ExpectError(t, switchTo(t, s.setup, tok, id), 404, "not_found")
	}
	fixture.Invalid(t, switchTo(t, s.setup, tok, " "), "membershipId")
	// An API key is not a user session.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/switch", APIKey: "gk_live_unknown",
		Body: map[string]string{"membershipId": s.partnerMemb}}), 401)
	// A pending invitation of the account.
	p2 := fixture.Partner(t, s.env, "P2")
	inv := &user.Membership{ID: uuid.NewString(), UserID: s.user.UserID, Scope: authz.ScopePartner, PartnerID: p2.ID,
		RoleID: role.PartnerTechnicianID, RoleOwner: role.SystemOwner, Status: user.MemberInvited, CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := s.env.Store.Do(t.Context(), user.AddMembershipWrite(inv)); err != nil {
		t.Fatal(err)
	}
	fixture.ExpectError(t, switchTo(t, s.setup, tok, inv.ID), 404, "not_found")
	if ms := me(t, s.setup, tok)["memberships"].([]any); len(ms) != 2 {
		t.Fatalf("me lists a pending invitation: %v", ms)
	}
	// Suspended, then removed.
	suspend(t, s.setup, s.user.UserID, s.partnerMemb, user.MemberSuspended)
	fixture.ExpectError(t, switchTo(t, s.setup, tok, s.partnerMemb), 404, "not_found")
	if ms := me(t, s.setup, tok)["memberships"].([]any); len(ms) != 1 {
		t.Fatalf("me lists a suspended membership: %v", ms)
	}
	suspend(t, s.setup, s.user.UserID, s.partnerMemb, "")
	fixture.ExpectError(t, switchTo(t, s.setup, tok, s.partnerMemb), 404, "not_found")

	// A session an identity provider opened switches nowhere.
	t2 := newScoped(t)
	pair, w, err := t2.env.Sessions.Start(t2.user.UserID, session.Claims{Scope: authz.ScopeOrg, OrgID: t2.org,
		IdP: "00000000-0000-4000-8000-0000000000aa"}, "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := t2.env.Store.Do(t.Context(), w); err != nil {
		t.Fatal(err)
	}
	fixture.ExpectError(t, switchTo(t, t2.setup, pair.AccessToken, t2.partnerMemb), 404, "not_found")
	// The same account's password session may.
	fixture.Expect(t, switchTo(t, t2.setup, t2.user.Token, t2.partnerMemb), 200)
}

func TestSwitchKeepsMFAAssurance(t *testing.T) {
	s := newSetup(t)
	o := orgOf(t, s)
	// Partner Admin forces MFA; alice has no TOTP and her session no second factor.
	fixture.Join(t, s.env, s.user.UserID, fixture.Member{Scope: authz.ScopePartner, PartnerID: o.PartnerID, RoleID: role.PartnerAdminID})
	ms, err := s.env.Deps.Users.Memberships(t.Context(), s.user.UserID)
	if err != nil {
		t.Fatal(err)
	}
	admin := ms[0].ID
	if ms[0].Scope != authz.ScopePartner {
		admin = ms[1].ID
	}
	body := fixture.ExpectError(t, switchTo(t, s, s.user.Token, admin), 428, "mfa_enrollment_required")
	if body["enrollUrl"] != "/api/v1/auth/mfa/setup" {
		t.Fatalf("428 without enrollUrl: %v", body)
	}
	// A session that passed a second factor switches, and the new one keeps it.
	bob := fixture.User(t, s.env, fixture.Member{Scope: authz.ScopeOrg, OrgID: s.org, RoleID: role.OrgAdminID, TOTP: true, MFA: true})
	fixture.Join(t, s.env, bob.UserID, fixture.Member{Scope: authz.ScopePartner, PartnerID: o.PartnerID, RoleID: role.PartnerAdminID})
	bms, err := s.env.Deps.Users.Memberships(t.Context(), bob.UserID)
	if err != nil {
		t.Fatal(err)
	}
	target := bms[0].ID
	if bms[0].Scope != authz.ScopePartner {
		target = bms[1].ID
	}
	tok := accessOf(t, fixture.Expect(t, switchTo(t, s, bob.Token, target), 200))
	c, err := s.env.Sessions.Signer.Verify(tok)
	if err != nil || !c.MFA || c.Scope != authz.ScopePartner {
		t.Fatalf("switched claims %+v, %v", c, err)
	}
	// An account with a second factor whose session skipped it (enrolled
	// since) signs in again instead: 403 mfa_required, even where nothing forces MFA.
	carol := fixture.User(t, s.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: o.PartnerID, RoleID: role.PartnerTechnicianID, TOTP: true})
	fixture.Join(t, s.env, carol.UserID, fixture.Member{Scope: authz.ScopeOrg, OrgID: s.org, RoleID: role.OrgViewerID})
	cms, err := s.env.Deps.Users.Memberships(t.Context(), carol.UserID)
	if err != nil {
		t.Fatal(err)
	}
	org := cms[0].ID
	if cms[0].Scope != authz.ScopeOrg {
		org = cms[1].ID
	}
	fixture.ExpectError(t, switchTo(t, s, carol.Token, org), 403, "MFA_REQUIRED")
}

func TestRefreshRefusedOnceMembershipEnds(t *testing.T) {
	for _, st := range []user.MemberStatus{user.MemberSuspended, ""} {
		s := newSetup(t)
		res := fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.70"), 200)
		ms, err := s.env.Deps.Users.Memberships(t.Context(), s.user.UserID)
		if err != nil {
			t.Fatal(err)
		}
		suspend(t, s, s.user.UserID, ms[0].ID, st)
		fixture.ExpectError(t, doRefresh(t, s, refreshCookie(t, res).Value, true), 401, "unauthorized")
	}
}

// TestSwitchRacesSuspend races a switch against its target's suspension:
// whichever lands first, no session acts in the suspended membership.
func TestSwitchRacesSuspend(t *testing.T) {
	s := newScoped(t)
	for i := range 5 {
		var wg sync.WaitGroup
		var res fixture.Response
		var serr error
		wg.Add(2)
		go func() {
			defer wg.Done()
			res = fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/switch", Token: s.user.Token,
				Body: map[string]string{"membershipId": s.partnerMemb}, Raced: true})
		}()
		go func() { defer wg.Done(); serr = setState(s.setup, s.user.UserID, s.partnerMemb, user.MemberSuspended) }()
		wg.Wait()
		if serr != nil {
			t.Fatal(serr)
		}
		switch res.Status {
		case 404:
		case 200:
			fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: accessOf(t, res)}), 401)
			fixture.Expect(t, doRefresh(t, s.setup, refreshCookie(t, res).Value, true), 401)
			// The fixture's session ended with the switch: start another in O.
			pair, w, err := s.env.Sessions.Start(s.user.UserID, session.Claims{Scope: authz.ScopeOrg, OrgID: s.org}, "127.0.0.1", "test")
			if err != nil {
				t.Fatal(err)
			}
			if err := s.env.Store.Do(t.Context(), w); err != nil {
				t.Fatal(err)
			}
			s.user.Token = pair.AccessToken
		default:
			t.Fatalf("round %d: %d %s", i, res.Status, res.Body)
		}
		suspend(t, s.setup, s.user.UserID, s.partnerMemb, user.MemberActive)
	}
}

// TestConcurrentSwitchesFromOneSession: one session, one new session.
func TestConcurrentSwitchesFromOneSession(t *testing.T) {
	s := newScoped(t)
	const n = 20
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/switch", Token: s.user.Token,
				Body: map[string]string{"membershipId": s.partnerMemb}, Raced: true}).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		switch c {
		case http.StatusOK:
			won++
		case http.StatusUnauthorized:
		default:
			t.Fatalf("codes %v", codes)
		}
	}
	if won != 1 {
		t.Fatalf("%d switches won: %v", won, codes)
	}
	live, err := s.env.Sessions.Others(context.Background(), s.user.UserID, "")
	if err != nil {
		t.Fatal(err)
	}
	// The fixture opened one session per membership; the switch ended O's.
	started := 0
	for _, x := range live {
		if x.ID == s.user.SessionID {
			t.Fatalf("the session switched from is live: %+v", x)
		}
		if x.UserAgent != "fixture" {
			started++
		}
	}
	if started != 1 {
		t.Fatalf("%d sessions started by %d switches: %+v", started, n, live)
	}
}
