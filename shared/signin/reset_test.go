package signin_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/mailergroup"
	"github.com/gale-rmm/gale/shared/app/signingroup"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
	"github.com/gale-rmm/gale/shared/notify"
	"github.com/gale-rmm/gale/shared/passhash"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

const appURL = "https://app.gale.test"

// mailbox records what the service sends and passes it on to SES. Reading
// moto's record (testenv.SentEmails) dumps the whole emulator and takes seconds
// once other tests have filled it, so most tests read the mailbox and one test
// checks what SES itself recorded.
type mailbox struct {
	next notify.Sender
	env  *testenv.Env
	t    testing.TB
	mu   sync.Mutex
	sent []notify.Email
}

func (m *mailbox) SendSMS(ctx context.Context, phone, text string) error {
	return m.next.SendSMS(ctx, phone, text)
}

func (m *mailbox) SendEmail(ctx context.Context, e notify.Email) error {
	m.mu.Lock()
	m.sent = append(m.sent, e)
	m.mu.Unlock()
	return m.next.SendEmail(ctx, e)
}

// to returns the bodies sent to address, oldest first.
func (m *mailbox) to(address string) []string {
	m.env.DeliverMail(m.t)
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for _, e := range m.sent {
		if e.To == address {
			out = append(out, e.Text)
		}
	}
	return out
}

// resetSetup is newSetup with APP_URL, the /auth group served with a recording
// mailer, and a user whose address is unique to the test (the emulator's SES
// record is shared by every test).
func resetSetup(t *testing.T) (setup, fixture.Caller, *mailbox) {
	t.Helper()
	s := newSetup(t, "APP_URL", appURL)
	svc := signingroup.SignIn(s.env.Deps)
	mb := &mailbox{next: mailergroup.Notifier(s.env.Deps), env: s.env, t: t}
	s.env.UseMailer(mailergroup.Worker(s.env.Deps, mb))
	rt := s.env.Router()
	(&signin.Handler{Svc: svc}).Routes(rt)
	s.h = httpapi.Edge(rt, s.env.Log)
	c := fixture.User(t, s.env, fixture.Member{Email: uniqueEmail("reset"), Password: pw, Scope: authz.ScopeOrg,
		OrgID: s.org, RoleID: role.OrgTechnicianID})
	return s, c, mb
}

// forgot asks for a reset link and lets the mailer run at once, as it does in
// AWS (the token is issued when the mailer handles the job).
func forgot(t *testing.T, s setup, email, ip string) fixture.Response {
	t.Helper()
	res := post(t, s.h, "/api/v1/auth/forgot-password", map[string]string{"email": email}, ip)
	s.env.DeliverMail(t)
	return res
}

func reset(t *testing.T, s setup, token, password string) fixture.Response {
	t.Helper()
	return post(t, s.h, "/api/v1/auth/reset-password", map[string]string{"token": token, "password": password}, "198.51.100.60")
}

var linkRE = regexp.MustCompile(regexp.QuoteMeta(appURL) + `/reset-password\?token=(\S+)`)

// linkTokens returns the tokens of the reset links in bodies.
func linkTokens(t *testing.T, bodies []string) []string {
	t.Helper()
	var out []string
	for _, b := range bodies {
		match := linkRE.FindStringSubmatch(b)
		if match == nil {
			t.Fatalf("no reset link in %q", b)
		}
		tok, err := url.QueryUnescape(match[1])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tok)
	}
	return out
}

// Not parallel: moto builds its record of sent e-mail by walking every model, and
// a DynamoDB write from a concurrent test can break that walk.
func TestForgotPasswordAnswersTheSameAndMailsOnlyRealUsers(t *testing.T) {
	s, c, mb := resetSetup(t)
	disabled := fixture.User(t, s.env, fixture.Member{Email: uniqueEmail("disabled"), Password: pw, Scope: authz.ScopeOrg,
		OrgID: s.org, RoleID: role.OrgViewerID, Status: user.StatusDisabled})
	ghost := uniqueEmail("ghost")

	hashes := passhash.Verifications()
	real := fixture.Expect(t, forgot(t, s, strings.ToUpper(c.Email), "198.51.100.61"), 200)
	// Both paths do the same work: the per-IP limit (1 DynamoDB call, 2 when
	// the address's row is new: a count that finds no row, then the write that
	// makes it) and the mail job; the account is looked up by the mailer.
	fixture.Budget(t, real, 2)
	unknown := fixture.Expect(t, forgot(t, s, ghost, "198.51.100.62"), 200)
	fixture.Budget(t, unknown, 2)
	if real.DBCalls != unknown.DBCalls {
		t.Fatalf("known address: %d DynamoDB calls, unknown: %d", real.DBCalls, unknown.DBCalls)
	}
	// Neither path hashes a password (the mailer, not the request, issues the token).
	if n := passhash.Verifications() - hashes; n != 0 {
		t.Fatalf("forgot-password verified %d password hashes, want 0 on both paths", n)
	}
	off := fixture.Expect(t, forgot(t, s, disabled.Email, "198.51.100.63"), 200)
	if string(real.Body) != string(unknown.Body) || string(real.Body) != string(off.Body) {
		t.Fatalf("answers differ:\n%s\n%s\n%s", real.Body, unknown.Body, off.Body)
	}
	if strings.Contains(string(real.Body), "token") {
		t.Fatalf("answer carries a token: %s", real.Body)
	}
	// What SES recorded: one message with the link for the real user, none for the unknown address.
	var bodies []string
	for _, m := range testenv.SentEmails(t, c.Email) {
		bodies = append(bodies, m.Body)
	}
	toks := linkTokens(t, bodies)
	if len(toks) != 1 || !strings.HasPrefix(toks[0], c.UserID+".") {
		t.Fatalf("tokens = %v", toks)
	}
	if got := testenv.SentEmails(t, ghost); len(got) != 0 {
		t.Fatalf("e-mail sent to an unknown address: %v", got)
	}
	if got := mb.to(disabled.Email); len(got) != 0 {
		t.Fatalf("e-mail sent to a disabled user: %v", got)
	}
	if len(mb.sent) != 1 {
		t.Fatalf("%d e-mails sent, want 1", len(mb.sent))
	}
	// The token is stored only as a hash; the audit record holds neither.
	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 || recs[0].Action != "user.password.reset_requested" || recs[0].ResourceID != c.UserID {
		t.Fatalf("audit = %+v", recs)
	}
	secret := toks[0][strings.Index(toks[0], ".")+1:]
	if strings.Contains(fmt.Sprintf("%+v", recs), secret) {
		t.Fatal("audit holds the reset token")
	}
	items, err := s.env.Store.BatchGet(t.Context(), user.ProfileKey(c.UserID))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(items), secret) {
		t.Fatal("reset token stored in clear")
	}
}

func TestForgotPasswordValidationAndRateLimit(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	res := fixture.Expect(t, forgot(t, s, "not an address", "203.0.113.60"), 400)
	if fe := fieldErrors(t, res); fe["email"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	for i := 0; i < 3; i++ {
		fixture.Expect(t, forgot(t, s, uniqueEmail("nobody"), "203.0.113.60"), 200)
	}
	// The fourth from the IP is refused whatever the address: no e-mail either.
	res = fixture.Expect(t, forgot(t, s, c.Email, "203.0.113.60"), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
	if got := mb.to(c.Email); len(got) != 0 {
		t.Fatalf("e-mail sent past the limit: %v", got)
	}
}

func TestResetPasswordIsSingleUseAndRevokesSessions(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.64"), 200)
	tok := linkTokens(t, mb.to(c.Email))[0]
	s.env.Clock.Advance(time.Minute) // sessions issued before the reset must die

	// A refused password names the field and leaves the token usable.
	res := fixture.Expect(t, reset(t, s, tok, "password"), 400)
	if fe := fieldErrors(t, res); fe["password"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	fixture.Budget(t, res, 0)

	const next = "Reset-Passphrase-Works-31"
	res = fixture.Expect(t, reset(t, s, tok, next), 200)
	fixture.Budget(t, res, 3)
	if c := refreshCookie(t, res); c.MaxAge >= 0 {
		t.Fatalf("refresh cookie not cleared: %+v", c)
	}
	// Single use.
	again := fixture.Expect(t, reset(t, s, tok, "Another-Passphrase-Works-32"), 400)
	if got := again.JSON(t)["error"]; got != "Invalid or expired reset token" {
		t.Fatalf("error = %v", got)
	}
	// Every earlier session and token is dead; the new password signs in, the old does not.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: c.Token}), 401)
	fixture.Expect(t, doRefresh(t, s, c.RefreshToken, true), 401)
	fixture.Expect(t, login(t, s, c.Email, pw, "198.51.100.65"), 401)
	fixture.Expect(t, login(t, s, c.Email, next, "198.51.100.66"), 200)

	u, err := s.env.Users.Get(t.Context(), c.UserID)
	if err != nil || u.PasswordChangedAt == "" || u.TokensValidAfter == "" {
		t.Fatalf("user = %+v, %v", u, err)
	}
	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		found = found || (r.Action == "user.password.reset" && r.ResourceID == c.UserID)
	}
	if !found {
		t.Fatalf("no user.password.reset record: %+v", recs)
	}
	if dump := fmt.Sprintf("%+v", recs); strings.Contains(dump, next) || strings.Contains(dump, tok[37:]) {
		t.Fatal("audit holds a password or token")
	}
}

func TestResetTokenExpiresAfterOneHour(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	// Valid just before the hour ...
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.67"), 200)
	s.env.Clock.Advance(59 * time.Minute)
	fixture.Expect(t, reset(t, s, linkTokens(t, mb.to(c.Email))[0], "Reset-Passphrase-Works-31"), 200)
	// ... refused just after it.
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.67"), 200)
	s.env.Clock.Advance(time.Hour + time.Second)
	res := fixture.Expect(t, reset(t, s, linkTokens(t, mb.to(c.Email))[1], "Another-Passphrase-Works-32"), 400)
	if got := res.JSON(t)["error"]; got != "Invalid or expired reset token" {
		t.Fatalf("error = %v", got)
	}
	fixture.Expect(t, login(t, s, c.Email, "Reset-Passphrase-Works-31", "198.51.100.68"), 200)
}

func TestNewResetRequestInvalidatesTheOlderLink(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.70"), 200)
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.70"), 200)
	toks := linkTokens(t, mb.to(c.Email))
	if len(toks) != 2 || toks[0] == toks[1] {
		t.Fatalf("tokens = %v", toks)
	}
	fixture.Expect(t, reset(t, s, toks[0], "Reset-Passphrase-Works-31"), 400)
	fixture.Expect(t, reset(t, s, toks[1], "Reset-Passphrase-Works-31"), 200)
}

func TestResetTokenMalformedOrMissing(t *testing.T) {
	t.Parallel()
	s, c, _ := resetSetup(t)
	for _, tok := range []string{"garbage", c.UserID + ".short", c.UserID + "." + strings.Repeat("A", 43), "not-a-uuid." + strings.Repeat("A", 43)} {
		res := fixture.Expect(t, reset(t, s, tok, "Reset-Passphrase-Works-31"), 400)
		if got := res.JSON(t)["error"]; got != "Invalid or expired reset token" {
			t.Fatalf("%q: error = %v", tok, got)
		}
		fixture.Budget(t, res, 1)
	}
	res := fixture.Expect(t, reset(t, s, "", "Reset-Passphrase-Works-31"), 400)
	if fe := fieldErrors(t, res); fe["token"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
}

func TestResetLiftsLoginLockout(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	for i := 0; i < 5; i++ {
		fixture.Expect(t, login(t, s, c.Email, "wrong-password-1", fmt.Sprintf("192.0.2.%d", 120+i)), 401)
	}
	fixture.Expect(t, login(t, s, c.Email, pw, "192.0.2.130"), 401) // locked
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.71"), 200)
	fixture.Expect(t, reset(t, s, linkTokens(t, mb.to(c.Email))[0], "Reset-Passphrase-Works-31"), 200)
	fixture.Expect(t, login(t, s, c.Email, "Reset-Passphrase-Works-31", "192.0.2.131"), 200)
}

func changePassword(t *testing.T, s setup, token, current, next string) fixture.Response {
	t.Helper()
	return fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/change-password", Token: token,
		Body: map[string]string{"currentPassword": current, "newPassword": next}, RemoteAddr: "198.51.100.80:1"})
}

func TestChangePasswordRevokesOtherSessionsAndIssuesAFreshPair(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	// A second session of the same user, from another device.
	other := fixture.Expect(t, login(t, s, "alice@example.com", pw, "198.51.100.81"), 200)
	otherCookie := refreshCookie(t, other).Value
	s.env.Clock.Advance(time.Millisecond)

	fixture.Expect(t, changePassword(t, s, "", pw, "Changed-Passphrase-55"), 401) // no token
	res := fixture.Expect(t, changePassword(t, s, s.user.Token, "wrong-password-1", "Changed-Passphrase-55"), 401)
	if got := res.JSON(t)["error"]; got != "Current password is incorrect" {
		t.Fatalf("error = %v", got)
	}
	res = fixture.Expect(t, changePassword(t, s, s.user.Token, pw, "password"), 400)
	if fe := fieldErrors(t, res); fe["newPassword"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	res = fixture.Expect(t, changePassword(t, s, s.user.Token, pw, pw), 400)
	if fe := fieldErrors(t, res); fe["newPassword"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	fixture.Expect(t, changePassword(t, s, s.user.Token, "", "Changed-Passphrase-55"), 400)

	res = fixture.Expect(t, changePassword(t, s, s.user.Token, pw, "Changed-Passphrase-55"), 200)
	fixture.Budget(t, res, 5)
	body := res.JSON(t)
	if body["mfaRequired"] != false || body["user"].(map[string]any)["orgId"] != s.org {
		t.Fatalf("body = %s", res.Body)
	}
	fresh := accessToken(t, res)
	freshCookie := refreshCookie(t, res).Value

	// The caller's old token, the other device's tokens: all dead.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: s.user.Token}), 401)
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: accessToken(t, other)}), 401)
	fixture.Expect(t, doRefresh(t, s, otherCookie, true), 401)
	fixture.Expect(t, doRefresh(t, s, s.user.RefreshToken, true), 401)
	// The fresh pair works.
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: fresh}), 200)
	fixture.Expect(t, doRefresh(t, s, freshCookie, true), 200)
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "198.51.100.82"), 401)
	fixture.Expect(t, login(t, s, "alice@example.com", "Changed-Passphrase-55", "198.51.100.83"), 200)

	recs, err := audit.List(t.Context(), s.env.Store, audit.Tenant(s.org, ""), 30)
	if err != nil {
		t.Fatal(err)
	}
	var ok, denied bool
	for _, r := range recs {
		if r.Action == "user.password.change" {
			ok = ok || r.Result == "success"
			denied = denied || r.Result == "denied"
		}
	}
	if !ok || !denied {
		t.Fatalf("audit lacks the change or the denied attempt: %+v", recs)
	}
	if dump := fmt.Sprintf("%+v", recs); strings.Contains(dump, "Changed-Passphrase-55") || strings.Contains(dump, pw) {
		t.Fatal("audit holds a password")
	}
}

func TestChangePasswordLimitsGuesses(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	for i := 0; i < 5; i++ {
		fixture.Expect(t, changePassword(t, s, s.user.Token, fmt.Sprintf("guess-number-%d", i), "Changed-Passphrase-55"), 401)
	}
	res := fixture.Expect(t, changePassword(t, s, s.user.Token, pw, "Changed-Passphrase-55"), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
	s.env.Clock.Advance(5*time.Minute + 5*time.Second)
	fixture.Expect(t, changePassword(t, s, s.user.Token, pw, "Changed-Passphrase-55"), 200)
}

func TestConcurrentPasswordChangesHaveOneWinner(t *testing.T) {
	t.Parallel()
	s := newSetup(t)
	s.env.Clock.Advance(time.Millisecond)
	const n = 4
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = changePassword(t, s, s.user.Token, pw, fmt.Sprintf("Concurrent-Passphrase-%d-x", i)).Status
		}()
	}
	wg.Wait()
	winner := -1
	for i, c := range codes {
		switch c {
		case 200:
			if winner >= 0 {
				t.Fatalf("two winners: %v", codes)
			}
			winner = i
		case 409, 401: // lost the compare-and-swap, or arrived after the winner revoked the session
		default:
			t.Fatalf("unexpected status %d in %v", c, codes)
		}
	}
	if winner < 0 {
		t.Fatalf("no winner: %v", codes)
	}
	for i := range codes {
		want := 401
		if i == winner {
			want = 200
		}
		fixture.Expect(t, login(t, s, "alice@example.com", fmt.Sprintf("Concurrent-Passphrase-%d-x", i), fmt.Sprintf("192.0.2.%d", 140+i)), want)
	}
}

func TestPasswordChangeVoidsAPendingResetLink(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.72"), 200)
	fixture.Expect(t, changePassword(t, s, c.Token, pw, "Changed-Passphrase-55"), 200)
	fixture.Expect(t, reset(t, s, linkTokens(t, mb.to(c.Email))[0], "Reset-Passphrase-Works-31"), 400)
	fixture.Expect(t, login(t, s, c.Email, "Changed-Passphrase-55", "198.51.100.73"), 200)
}

func TestConcurrentResetsWithOneTokenHaveOneWinner(t *testing.T) {
	t.Parallel()
	s, c, mb := resetSetup(t)
	fixture.Expect(t, forgot(t, s, c.Email, "198.51.100.74"), 200)
	tok := linkTokens(t, mb.to(c.Email))[0]
	codes := make([]int, 4)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = reset(t, s, tok, fmt.Sprintf("Racing-Passphrase-%d-x", i)).Status
		}()
	}
	wg.Wait()
	wins := 0
	for _, code := range codes {
		switch code {
		case 200:
			wins++
		case 400:
		default:
			t.Fatalf("unexpected status %d in %v", code, codes)
		}
	}
	if wins != 1 {
		t.Fatalf("%d winners: %v", wins, codes)
	}
}
