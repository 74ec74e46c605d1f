package signin_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/store"

	"github.com/gale-rmm/gale/shared/app/signingroup"

	"github.com/gale-rmm/gale/shared/app/authgroup"
	"github.com/gale-rmm/gale/shared/fault"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const pw = "Correct-Horse-Battery-9"

type setup struct {
	env  *testenv.Env
	h    http.Handler
	org  string
	user fixture.Caller
}

func newSetup(t *testing.T, vars ...string) setup {
	t.Helper()
	env := testenv.New(t, vars...)
	p := fixture.Partner(t, env, "P")
	o := fixture.Org(t, env, p.ID, "O")
	c := fixture.User(t, env, fixture.Member{Email: "alice@example.com", Password: pw, Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})
	h, err := authgroup.Auth(env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	return setup{env: env, h: h, org: o.ID, user: c}
}

func login(t *testing.T, s setup, email, password, ip string) fixture.Response {
	t.Helper()
	return fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
		Body: map[string]string{"email": email, "password": password}, Header: map[string]string{"X-Forwarded-For": ip},
		RemoteAddr: ip + ":4000"})
}

func refreshCookie(t *testing.T, res fixture.Response) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		if c.Name == signin.CookieName {
			return c
		}
	}
	t.Fatalf("no %s cookie in %v", signin.CookieName, res.Header)
	return nil
}

func TestLoginSuccessSetsCookieAndTokens(t *testing.T) {
	s := newSetup(t)
	res := fixture.Expect(t, login(t, s, "Alice@Example.com", pw, "198.51.100.7"), 200)
	fixture.Budget(t, res, 11) // the attempt's count is one write; its refund rides in the sign-in's transaction; +2 new rate-limit rows (shared/ratelimit)
	body := res.JSON(t)
	if body["mfaRequired"] != false {
		t.Fatalf("mfaRequired = %v", body["mfaRequired"])
	}
	tokens := body["tokens"].(map[string]any)
	if tokens["accessToken"] == "" || tokens["expiresInSeconds"] != float64(900) {
		t.Fatalf("tokens = %v", tokens)
	}
	if strings.Contains(string(res.Body), "passwordHash") || strings.Contains(string(res.Body), "$argon2id$") {
		t.Fatal("password hash leaked")
	}
	c := refreshCookie(t, res)
	if !c.HttpOnly || !c.Secure || c.SameSite != http.SameSiteStrictMode || c.Path != "/api/v1/auth" {
		t.Fatalf("cookie flags wrong: %+v", c)
	}
	// The cookie lives as long as the refresh token (7 days) by the injected
	// clock, not the wall clock (which would make it a deletion under a fake one).
	if c.MaxAge != int(session.RefreshTTL/time.Second) {
		t.Fatalf("cookie Max-Age = %d, want %d", c.MaxAge, int(session.RefreshTTL/time.Second))
	}
	if strings.Contains(string(res.Body), c.Value) {
		t.Fatal("refresh token must not be in the body")
	}
	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Action != "user.login" || recs[0].IP != "198.51.100.7" {
		t.Fatalf("audit = %+v", recs)
	}
}

func TestLoginFailuresAreIndistinguishable(t *testing.T) {
	s := newSetup(t)
	wrong := fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", "192.0.2.1"), 401)
	unknown := fixture.Expect(t, login(t, s, "nobody@example.com", "wrong-password-1", "192.0.2.2"), 401)
	for _, r := range []fixture.Response{wrong, unknown} {
		if got := r.JSON(t)["error"]; got != "Invalid email or password" {
			t.Fatalf("error = %v", got)
		}
	}
}

// An over-long e-mail is an unknown account: the same 401, and no read with a
// key DynamoDB would refuse (partition keys are at most 2048 bytes; the emulator
// does not enforce that, so the test counts calls: the two rate-limit updates and
// the failure count, keyed by the address's hash).
func TestLoginWithOverlongEmail(t *testing.T) {
	s := newSetup(t)
	res := fixture.Expect(t, login(t, s, strings.Repeat("a", 3000)+"@example.com", "wrong-password-1", "192.0.2.9"), 401)
	if got := res.JSON(t)["error"]; got != "Invalid email or password" {
		t.Fatalf("error = %v", got)
	}
	fixture.Budget(t, res, 5) // +2: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
}

// A wrong password for a known address and any password for an unknown one do
// the same hashing work: one Argon2id verification each. Counted, not timed, so
// the test holds on a loaded machine.
func TestLoginHashesOnceForKnownAndUnknown(t *testing.T) {
	s := newSetup(t)
	hashes := func(email, ip string) int64 {
		before := passhash.Verifications()
		fixture.Expect(t, login(t, s, email, "wrong-password-1", ip), 401)
		return passhash.Verifications() - before
	}
	known, unknown := hashes("alice@example.com", "192.0.2.10"), hashes("ghost@example.com", "192.0.2.11")
	if known != 1 || unknown != 1 {
		t.Fatalf("Argon2id verifications: known %d, unknown %d; want 1 each", known, unknown)
	}
}

// A wrong password for a known address and an unknown address make the same
// DynamoDB calls, attempt after attempt (the failure count included).
func TestLoginStoreWorkIsTheSameForKnownAndUnknown(t *testing.T) {
	s := newSetup(t)
	for i := 0; i < 3; i++ {
		known := fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", fmt.Sprintf("192.0.2.%d", 30+i)), 401)
		unknown := fixture.Expect(t, login(t, s, "ghost@example.com", "wrong-password-1", fmt.Sprintf("192.0.2.%d", 40+i)), 401)
		if known.DBCalls != unknown.DBCalls {
			t.Fatalf("attempt %d: known address %d calls, unknown %d", i, known.DBCalls, unknown.DBCalls)
		}
	}
}

func TestDisabledUserCannotLogIn(t *testing.T) {
	s := newSetup(t)
	fixture.User(t, s.env, fixture.Member{Email: "bob@example.com", Password: pw, Scope: authz.ScopeOrg, OrgID: s.org, RoleID: role.OrgViewerID, Status: user.StatusDisabled})
	fixture.Expect(t, login(t, s, "bob@example.com", pw, "192.0.2.3"), 401)
}

func TestLoginRateLimitPerIPAndEmail(t *testing.T) {
	s := newSetup(t)
	for i := 0; i < 5; i++ {
		fixture.Expect(t, login(t, s, "carol@example.com", "wrong-password-1", "203.0.113.9"), 401)
	}
	res := fixture.Expect(t, login(t, s, "carol@example.com", "wrong-password-1", "203.0.113.9"), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
}

func TestLockoutAfterFiveFailures(t *testing.T) {
	s := newSetup(t)
	for i := 0; i < 5; i++ { // distinct IPs so only the account counter trips
		fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", fmt.Sprintf("192.0.2.%d", 100+i)), 401)
	}
	// Locked: the right password is refused with the same text.
	res := fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.200"), 401)
	if res.JSON(t)["error"] != "Invalid email or password" {
		t.Fatalf("body %s", res.Body)
	}
	s.env.Clock.Advance(16 * time.Minute)
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.201"), 200)
}

// Four failures just before a 15-minute boundary and four just after, then the
// right password: still locked (the window slides; there is no boundary).
func TestLockoutSurvivesAWindowBoundary(t *testing.T) {
	s := newSetup(t)
	s.env.Clock.Set(time.Date(2026, 11, 1, 9, 14, 40, 0, time.UTC))
	for i := 0; i < 8; i++ {
		if i == 4 {
			s.env.Clock.Set(time.Date(2026, 11, 1, 9, 15, 5, 0, time.UTC))
		}
		fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", fmt.Sprintf("192.0.2.%d", 100+i)), 401)
	}
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.200"), 401)
}

// 50 concurrent wrong passwords from 50 addresses, held inside their
// verification, then the right password while they are in flight: it is
// refused without being verified, and at most 5 passwords are ever verified
// (each attempt is counted before its password is checked).
func TestLockoutHoldsUnderABurst(t *testing.T) {
	s := newSetup(t)
	var verified atomic.Int64
	started, release := make(chan struct{}, 100), make(chan struct{})
	restore := signin.SetVerify(func(hash, password string) bool {
		verified.Add(1)
		if password != pw {
			started <- struct{}{}
			<-release // held in flight until the right password has had its answer
		}
		return passhash.Verify(hash, password)
	})
	defer restore()
	var wg sync.WaitGroup
	codes := make([]int, 50)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = login(t, s, "alice@example.com", "wrong-password-1", fmt.Sprintf("198.18.%d.%d", i/200, 1+i%200)).Status
		}()
	}
	for range signin.Lockout.Limit {
		<-started // five wrong passwords are being verified
	}
	right := login(t, s, "alice@example.com", pw, "198.18.9.9")
	close(release)
	wg.Wait()
	fixture.Expect(t, right, 401)
	for i, c := range codes {
		if c != 401 {
			t.Fatalf("attempt %d answered %d", i, c)
		}
	}
	if n := verified.Load(); n > int64(signin.Lockout.Limit) {
		t.Fatalf("%d passwords verified; want at most %d", n, signin.Lockout.Limit)
	}
}

// A success takes its own count back: after four failures, the right
// password signs in again and again (counted and not refunded, the second
// success would find five attempts counted and be refused).
func TestLockoutSuccessTakesItsCountBack(t *testing.T) {
	s := newSetup(t)
	for i := 0; i < 4; i++ {
		fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", fmt.Sprintf("192.0.2.%d", 100+i)), 401)
	}
	for i := 0; i < 3; i++ {
		fixture.Expect(t, login(t, s, "alice@example.com", pw, fmt.Sprintf("192.0.2.%d", 200+i)), 200)
	}
	// The fifth failure still locks.
	fixture.Expect(t, login(t, s, "alice@example.com", "wrong-password-1", "192.0.2.210"), 401)
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.211"), 401)
}

// An address without an account locks like one with: five failures, then
// the attempt is refused without a read or a verification, for both.
func TestLockedAttemptReadsNothingForKnownAndUnknown(t *testing.T) {
	s := newSetup(t)
	for _, email := range []string{"alice@example.com", "ghost@example.com"} {
		for i := 0; i < 5; i++ {
			fixture.Expect(t, login(t, s, email, "wrong-password-1", fmt.Sprintf("192.0.2.%d", 100+i)), 401)
		}
	}
	before := passhash.Verifications()
	known := fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.120"), 401)
	unknown := fixture.Expect(t, login(t, s, "ghost@example.com", pw, "192.0.2.121"), 401)
	if n := passhash.Verifications() - before; n != 0 {
		t.Fatalf("%d verifications while locked", n)
	}
	fixture.Budget(t, known, 5) // the two rate limits and the refused count; +2 new rate-limit rows (shared/ratelimit)
	if known.DBCalls != unknown.DBCalls || known.JSON(t)["error"] != unknown.JSON(t)["error"] {
		t.Fatalf("locked known %d calls %s, unknown %d calls %s", known.DBCalls, known.Body, unknown.DBCalls, unknown.Body)
	}
}

func doRefresh(t *testing.T, s setup, cookie string, csrf bool) fixture.Response {
	h := map[string]string{"Cookie": signin.CookieName + "=" + cookie}
	if csrf {
		h["x-service-csrf"] = "1"
	}
	return fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh", Header: h})
}

func TestRefreshRotatesAndDetectsReuse(t *testing.T) {
	s := newSetup(t)
	first := refreshCookie(t, fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.4"), 200)).Value

	fixture.Expect(t, doRefresh(t, s, first, false), 403) // CSRF header required with the cookie
	s.env.Clock.Advance(time.Hour)
	res := fixture.Expect(t, doRefresh(t, s, first, true), 200)
	fixture.Budget(t, res, 5) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit); +1 the session's membership (a refresh is refused once it ends)
	rotated := refreshCookie(t, res)
	second := rotated.Value
	// Seven days are absolute: the rotated cookie keeps the family's end.
	if want := int((session.RefreshTTL - time.Hour) / time.Second); rotated.MaxAge != want {
		t.Fatalf("rotated cookie Max-Age = %d, want %d", rotated.MaxAge, want)
	}
	access := res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string)
	if second == first {
		t.Fatal("refresh token not rotated")
	}
	me, err := authgroup.Auth(s.env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	fixture.Expect(t, fixture.Do(t, me, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: access}), 200)

	s.env.Clock.Advance(session.RaceGrace + time.Second)
	// Reusing the spent token revokes the family: the new refresh token and access token die too.
	fixture.Expect(t, doRefresh(t, s, first, true), 401)
	fixture.Expect(t, doRefresh(t, s, second, true), 401)
	fixture.Expect(t, fixture.Do(t, me, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: access}), 401)
}

// The refresh token is taken from the cookie only: a token in the body is
// refused (400 naming refreshToken) even with the CSRF header, and a body
// never stands in for the cookie.
func TestRefreshTokenOnlyByCookie(t *testing.T) {
	s := newSetup(t)
	tok := refreshCookie(t, fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.7"), 200)).Value
	csrf := map[string]string{"x-service-csrf": "1"}
	res := fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh",
		Header: csrf, Body: map[string]string{"refreshToken": tok}}), 400)
	if fe, _ := res.JSON(t)["details"].(map[string]any)["fieldErrors"].(map[string]any); fe["refreshToken"] == nil {
		t.Fatalf("body %s", res.Body)
	}
	withCookie := map[string]string{"x-service-csrf": "1", "Cookie": signin.CookieName + "=" + tok}
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh",
		Header: withCookie, Body: map[string]string{"refreshToken": tok}}), 400)
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh", Header: csrf}), 401)
	// The token was never spent by the refused calls: the cookie still works.
	fixture.Expect(t, doRefresh(t, s, tok, true), 200)
}

func TestConcurrentRefreshHasOneWinner(t *testing.T) {
	s := newSetup(t)
	tok := refreshCookie(t, fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.5"), 200)).Value
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// One client's double-submits (the race the grace window serves;
			// the per-IP refresh limit allows a burst of 10).
			codes[i] = fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh",
				Header:     map[string]string{"Cookie": signin.CookieName + "=" + tok, "x-service-csrf": "1"},
				RemoteAddr: "192.0.2.50:1"}).Status
		}()
	}
	wg.Wait()
	wins := 0
	for _, c := range codes {
		switch c {
		case 200:
			wins++
		case 409:
		default:
			t.Fatalf("unexpected status %d in %v", c, codes)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners: %v", wins, codes)
	}
}

func TestLogoutRevokesEverything(t *testing.T) {
	s := newSetup(t)
	res := fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.6"), 200)
	access := res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string)
	cookie := refreshCookie(t, res).Value
	s.env.Clock.Advance(time.Millisecond)
	out := fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/logout", Token: access}), 200)
	if c := refreshCookie(t, out); c.MaxAge >= 0 {
		t.Fatalf("cookie not cleared: %+v", c)
	}
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: access}), 401)
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: s.user.Token}), 401)
	fixture.Expect(t, doRefresh(t, s, cookie, true), 401)
}

func TestMeShowsMFAAndPhoneStatus(t *testing.T) {
	s := newSetup(t)
	res := fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: s.user.Token}), 200)
	fixture.Budget(t, res, 3)
	u := res.JSON(t)["user"].(map[string]any)
	for _, k := range []string{"mfaEnabled", "phoneVerified", "email", "orgId"} {
		if _, ok := u[k]; !ok {
			t.Fatalf("me lacks %s: %v", k, u)
		}
	}
}

func TestDisabledUserRefusedAtOnce(t *testing.T) {
	s := newSetup(t)
	k := user.ProfileKey(s.user.UserID)
	if err := s.env.Store.Do(t.Context(), storeSetStatus(k.PK, k.SK, user.StatusDisabled)); err != nil {
		t.Fatal(err)
	}
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: s.user.Token}), 401)
}

func TestForceMFARoleAnswers428UntilTOTPEnrolled(t *testing.T) {
	s := newSetup(t)
	p := fixture.Partner(t, s.env, "MSP")
	c := fixture.User(t, s.env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
	// /auth/me is an enrolment route: allowed.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: c.Token}), 200)
}

func TestPendingMFASignInDiesWithPasswordChange(t *testing.T) {
	s := newSetup(t)
	fixture.User(t, s.env, fixture.Member{Email: "mfa@example.com", Password: pw, Scope: authz.ScopeOrg, OrgID: s.org, RoleID: role.OrgViewerID, TOTP: true})
	body := fixture.Expect(t, login(t, s, "mfa@example.com", pw, "192.0.2.40"), 200).JSON(t)
	if body["mfaRequired"] != true || body["tempToken"] == nil || body["tokens"] != nil {
		t.Fatalf("login = %v", body)
	}
	temp := body["tempToken"].(string)
	svc := signingroup.SignIn(s.env.Deps)
	u, err := svc.PendingUser(t.Context(), temp)
	if err != nil || u.Email != "mfa@example.com" {
		t.Fatalf("pending user: %v", err)
	}
	s.env.Clock.Advance(time.Millisecond)
	if err := s.env.Store.Do(t.Context(), user.RevokeSessionsWrite(u.ID, s.env.Clock.Now())); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PendingUser(t.Context(), temp); err != signin.ErrTempToken {
		t.Fatalf("after revocation: %v", err)
	}
}

// enforced is a stand-in SSO policy (our own interface) until SSO providers exist.
type enforced map[string]bool

func (e enforced) Enforced(_ context.Context, orgID string) (bool, error) { return e[orgID], nil }

func TestPasswordLoginRefusedWhenOrganizationEnforcesSSO(t *testing.T) {
	s := newSetup(t)
	svc := signingroup.SignIn(s.env.Deps)
	svc.SSO = enforced{s.org: true}
	_, err := svc.Login(t.Context(), "alice@example.com", pw, signin.Client{IP: "192.0.2.60", SourceIP: "192.0.2.60"})
	fe, ok := fault.As(err)
	if !ok || fe.Kind != fault.KindForbidden {
		t.Fatalf("login under enforceSSO: %v", err)
	}
	svc.SSO = enforced{}
	if _, err := svc.Login(t.Context(), "alice@example.com", pw, signin.Client{IP: "192.0.2.61", SourceIP: "192.0.2.61"}); err != nil {
		t.Fatalf("login without enforcement: %v", err)
	}
}

// A spent token replayed within the grace window counts as a lost race only
// for the client that rotated it; from anyone else it revokes the family. Both
// are audited as auth.refresh.reuse, and neither issues tokens.
func TestRefreshReplayWithinGraceFromAnotherClient(t *testing.T) {
	s := newSetup(t)
	first := refreshCookie(t, fixture.Expect(t, login(t, s, "alice@example.com", pw, "192.0.2.4"), 200)).Value
	res := fixture.Expect(t, doRefresh(t, s, first, true), 200)
	second := refreshCookie(t, res).Value

	// The same client's double-submit: 409, no tokens, family alive.
	race := fixture.Expect(t, doRefresh(t, s, first, true), 409)
	if strings.Contains(string(race.Body), "accessToken") {
		t.Fatalf("a lost race issued tokens: %s", race.Body)
	}
	// Another client within the grace window: reuse, the family dies.
	h := map[string]string{"Cookie": signin.CookieName + "=" + first, "x-service-csrf": "1", "User-Agent": "curl/8.0"}
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/refresh", Header: h}), 401)
	fixture.Expect(t, doRefresh(t, s, second, true), 401)

	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 50)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range recs {
		if r.Action == "auth.refresh.reuse" {
			n++
		}
	}
	if n != 2 {
		t.Fatalf("%d auth.refresh.reuse records, want 2", n)
	}
}

// Ending the other sessions kills their refresh and access tokens, not the
// caller's own.
func TestRevokeOtherSessions(t *testing.T) {
	s := newSetup(t)
	signIn := func(ip string) (access, refresh string) {
		res := fixture.Expect(t, login(t, s, "alice@example.com", pw, ip), 200)
		return res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string), refreshCookie(t, res).Value
	}
	laptop, _ := signIn("192.0.2.21")
	phone, phoneRefresh := signIn("192.0.2.22")
	me, err := authgroup.Auth(s.env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	res := fixture.Expect(t, fixture.Do(t, me, fixture.Request{Method: "POST", Path: "/api/v1/auth/sessions/revoke-others", Token: laptop}), 200)
	// The phone's session and the one the test fixture signed in with.
	if res.JSON(t)["revoked"] != float64(2) {
		t.Fatalf("answer %s", res.Body)
	}
	fixture.Expect(t, fixture.Do(t, me, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: phone}), 401)
	fixture.Expect(t, doRefresh(t, s, phoneRefresh, true), 401)
	fixture.Expect(t, fixture.Do(t, me, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: laptop}), 200)
}

// storeSetStatus writes an account's status to the table behind the service's back.
func storeSetStatus(pk, sk string, s user.Status) *store.Write {
	return store.Set(pk, sk, "status", s)
}
