package mfa_test

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http"
	"os"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app/authgroup"
	"github.com/gale-rmm/gale/shared/app/organizationsgroup"

	"github.com/pquerna/otp"
	"github.com/pquerna/otp/totp"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const pw = "Correct-Horse-Battery-9"

// Call budgets (DynamoDB calls) per route. An authenticated call starts with
// two: the BatchGetItem of profile, session and membership, and the role read.
const (
	budgetSetup  = 6 // auth, profile, memberships, security settings, put setup
	budgetEnable = 7 // auth, profile+setup, memberships, settings, rate limit, transaction
	// The rate limit is a sliding window (shared/ratelimit): one update when the
	// caller's bucket is idle, two when an earlier MFA event still counts, as in
	// these flows, where setup and sign-in follow within seconds.
	budgetVerifyTOTP  = 7 // temp token, profile, rate limit (2), memberships, transaction, outbox clear after the event is sent
	budgetVerifySMS   = 8 // ... plus the SMS code
	budgetDisable     = 7 // auth, profile+SMS code, memberships, settings, rate limit, transaction
	budgetRotate      = 5 // auth, profile+SMS code, rate limit, transaction
	budgetPhoneVerify = 7 // auth, profile, two rate limits (a second one when a bucket is busy), put
	budgetPhoneConf   = 5 // auth, profile+pending phone, rate limit, transaction
	budgetSMSEnable   = 6 // auth, profile, memberships, settings, update
	budgetSMSSend     = 9 // temp token, profile, memberships, settings, two rate limits (each +1 when its row is new), put
	budgetSMSStepUp   = 9 // auth, profile, memberships, settings, two rate limits (+1 when a row is new), put
)

// world is fixture's small world (one partner, one organization) serving
// the auth group, with an organization admin (c, signing in as email) and a
// count of sign-ins, each from its own address.
type world struct {
	*fixture.World
	email  string
	c      fixture.Caller
	logins atomic.Int32
}

func newWorld(t *testing.T, vars ...string) *world {
	t.Helper()
	w := &world{World: fixture.NewSmallWorld(t, vars), email: "m-" + randDigits(8) + "@example.com"}
	w.c = fixture.User(t, w.Env, fixture.Member{Email: w.email, Password: pw, Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgAdminID})
	h, err := authgroup.Auth(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	w.API = h
	return w
}

func (w *world) post(t *testing.T, path, token string, body any) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.API, fixture.Request{Method: "POST", Path: "/api/v1/auth" + path, Token: token, Body: body,
		RemoteAddr: "198.51.100.10:4000"})
}

// login signs in from a new address each time, clear of the login rate limits.
func (w *world) login(t *testing.T, email string) map[string]any {
	t.Helper()
	n := w.logins.Add(1)
	res := fixture.Do(t, w.API, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
		Body: map[string]string{"email": email, "password": pw}, RemoteAddr: fmt.Sprintf("203.0.%d.%d:4000", n/250, n%250+1)})
	return fixture.Expect(t, res, 200).JSON(t)
}

// tempToken logs in and expects the MFA hand-off.
func (w *world) tempToken(t *testing.T, email, method string) string {
	t.Helper()
	b := w.login(t, email)
	if b["mfaRequired"] != true || b["mfaMethod"] != method || b["tokens"] != nil {
		t.Fatalf("login = %v, want the %s MFA hand-off", b, method)
	}
	tok, _ := b["tempToken"].(string)
	if tok == "" {
		t.Fatal("no tempToken")
	}
	return tok
}

// code computes the current TOTP code with pquerna/otp's generator, independent
// of the service's verifier, at the fake clock's time.
func (w *world) code(t *testing.T, secret string) string {
	t.Helper()
	c, err := totp.GenerateCodeCustom(secret, w.Env.Clock.Now(), totp.ValidateOpts{Period: 30, Digits: otp.DigitsSix, Algorithm: otp.AlgorithmSHA1})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tick moves to the next TOTP time step.
func (w *world) tick() { w.Env.Clock.Advance(30 * time.Second) }

type setupBody struct {
	Secret        string   `json:"secret"`
	OTPAuthURL    string   `json:"otpAuthUrl"`
	QRCodeDataURL string   `json:"qrCodeDataUrl"`
	RecoveryCodes []string `json:"recoveryCodes"`
}

func (w *world) setup(t *testing.T, token string) setupBody {
	t.Helper()
	res := fixture.Expect(t, w.post(t, "/mfa/setup", token, nil), 200)
	fixture.Budget(t, res, budgetSetup)
	var s setupBody
	res.Decode(t, &s)
	return s
}

// enableTOTP runs setup and enable for token's user and returns the secret and
// recovery codes. The clock moves to the next step, so the code used is spent.
func (w *world) enableTOTP(t *testing.T, token string) (string, []string) {
	t.Helper()
	s := w.setup(t, token)
	res := fixture.Expect(t, w.post(t, "/mfa/enable", token, map[string]string{"code": w.code(t, s.Secret)}), 200)
	fixture.Budget(t, res, budgetEnable)
	var out struct {
		RecoveryCodes []string `json:"recoveryCodes"`
		MFAEnabled    bool     `json:"mfaEnabled"`
		MFAMethod     string   `json:"mfaMethod"`
	}
	res.Decode(t, &out)
	if !out.MFAEnabled || out.MFAMethod != "totp" || strings.Join(out.RecoveryCodes, ",") != strings.Join(s.RecoveryCodes, ",") {
		t.Fatalf("enable = %+v; setup codes %v", out, s.RecoveryCodes)
	}
	w.tick()
	return s.Secret, out.RecoveryCodes
}

func (w *world) verify(t *testing.T, tempToken, code string) fixture.Response {
	t.Helper()
	return w.post(t, "/mfa/verify", "", map[string]string{"tempToken": tempToken, "code": code})
}

// signedIn checks a full login response with mfa: true and returns the access token.
func signedIn(t *testing.T, res fixture.Response) string {
	t.Helper()
	fixture.Expect(t, res, 200)
	b := res.JSON(t)
	tokens, _ := b["tokens"].(map[string]any)
	if b["mfaRequired"] != false || tokens == nil {
		t.Fatalf("verify = %v", b)
	}
	tok, _ := tokens["accessToken"].(string)
	if c := claims(t, tok); c["mfa"] != true {
		t.Fatalf("access token claims %v lack mfa: true", c)
	}
	found := false
	for _, c := range (&http.Response{Header: res.Header}).Cookies() {
		found = found || (c.Name == signin.CookieName && c.Value != "" && c.HttpOnly)
	}
	if !found {
		t.Fatal("no refresh cookie")
	}
	return tok
}

// claims decodes a JWT's payload (the signature is the service's business).
func claims(t *testing.T, jwt string) map[string]any {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func expectError(t *testing.T, res fixture.Response, status int, msg string) map[string]any {
	t.Helper()
	fixture.Expect(t, res, status)
	b := res.JSON(t)
	if msg != "" && b["error"] != msg {
		t.Fatalf("error = %v, want %q", b["error"], msg)
	}
	return b
}

// usedHint checks the hint of a refused code: present exactly when the code
// was a TOTP code already used (a wrong code learns nothing more).
func usedHint(t *testing.T, body map[string]any, want bool) {
	t.Helper()
	d, _ := body["details"].(map[string]any)
	hint, _ := d["hint"].(string)
	if want && hint != "this code was already used: wait for the next code" || !want && body["details"] != nil {
		t.Fatalf("refusal %v: want a used-code hint %v", body, want)
	}
}

func (w *world) profile(t *testing.T, uid string) *user.User {
	t.Helper()
	u, err := w.Env.Users.Get(t.Context(), uid)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (w *world) audits(t *testing.T, action string) []audit.Record {
	t.Helper()
	recs, err := audit.List(t.Context(), w.Env.Store, audit.Tenant(w.A.ID, ""), 100)
	if err != nil {
		t.Fatal(err)
	}
	var out []audit.Record
	for _, r := range recs {
		if r.Action == action {
			out = append(out, r)
		}
	}
	return out
}

func (w *world) setPolicy(t *testing.T, require bool, methods ...string) {
	t.Helper()
	k := tenant.SecurityKey(w.A.ID)
	sec := tenant.SecuritySettings{Keys: store.Keys{PK: k.PK, SK: k.SK}, OrgID: w.A.ID, RequireMFA: require, AllowedMFAMethods: methods}
	if err := w.Env.Store.Do(t.Context(), store.Put(sec)); err != nil {
		t.Fatal(err)
	}
}

func randDigits(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		d, _ := rand.Int(rand.Reader, big.NewInt(10))
		b.WriteString(d.String())
	}
	return b.String()
}

// uniquePhone is a number no other test (or package) uses on the shared emulator.
func uniquePhone() string { return "+1555" + randDigits(7) }

var sixDigits = regexp.MustCompile(`\b(\d{6})\b`)

// lastSMS reads the newest code SNS sent to phone.
func lastSMS(t *testing.T, phone string, want int) string {
	t.Helper()
	msgs := testenv.SentSMS(t, phone)
	if len(msgs) != want {
		t.Fatalf("%d messages to %s, want %d", len(msgs), phone, want)
	}
	m := sixDigits.FindStringSubmatch(msgs[len(msgs)-1].Message)
	if m == nil {
		t.Fatalf("no code in %q", msgs[len(msgs)-1].Message)
	}
	return m[1]
}

// enableSMS verifies phone for token's user and turns on SMS MFA.
func (w *world) enableSMS(t *testing.T, token, phone string, sent int) []string {
	t.Helper()
	res := fixture.Expect(t, w.post(t, "/phone/verify", token, map[string]string{"phoneNumber": phone}), 200)
	fixture.Budget(t, res, budgetPhoneVerify)
	if b := res.JSON(t); b["sentTo"] == phone || !strings.HasSuffix(b["sentTo"].(string), phone[len(phone)-2:]) {
		t.Fatalf("sentTo = %v (must be masked)", b["sentTo"])
	}
	code := lastSMS(t, phone, sent+1)
	res = fixture.Expect(t, w.post(t, "/phone/confirm", token, map[string]string{"code": code}), 200)
	fixture.Budget(t, res, budgetPhoneConf)
	if b := res.JSON(t); b["phoneNumber"] != phone || b["phoneVerified"] != true {
		t.Fatalf("confirm = %v", b)
	}
	res = fixture.Expect(t, w.post(t, "/mfa/sms/enable", token, nil), 200)
	fixture.Budget(t, res, budgetSMSEnable)
	var out struct {
		RecoveryCodes []string `json:"recoveryCodes"`
		MFAMethod     string   `json:"mfaMethod"`
	}
	res.Decode(t, &out)
	if len(out.RecoveryCodes) != 10 {
		t.Fatalf("sms enable = %s", res.Body)
	}
	return out.RecoveryCodes
}

func TestTOTPSetupEnableLoginAndReplay(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.setup(t, w.c.Token)
	if len(s.Secret) != 32 || !strings.HasPrefix(s.OTPAuthURL, "otpauth://totp/Gale:") || !strings.Contains(s.OTPAuthURL, "issuer=Gale") ||
		!strings.HasPrefix(s.QRCodeDataURL, "data:image/png;base64,") || len(s.RecoveryCodes) != 10 {
		t.Fatalf("setup = %+v", s)
	}
	for _, c := range s.RecoveryCodes {
		if !regexp.MustCompile(`^[A-Z0-9]{4}-[A-Z0-9]{4}$`).MatchString(c) {
			t.Fatalf("recovery code %q", c)
		}
	}
	if u := w.profile(t, w.c.UserID); u.MFAEnabled || u.MFASecret != "" {
		t.Fatal("setup alone enabled MFA")
	}
	res := fixture.Expect(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": w.code(t, s.Secret)}), 200)
	fixture.Budget(t, res, budgetEnable)

	// At rest: the secret sealed, the codes hashed.
	u := w.profile(t, w.c.UserID)
	if !u.TOTPEnrolled() || u.MFAMethod != "totp" || !strings.HasPrefix(u.MFASecret, "v1.") || strings.Contains(u.MFASecret, s.Secret) {
		t.Fatalf("profile: enrolled=%v method=%q secret=%q", u.TOTPEnrolled(), u.MFAMethod, u.MFASecret)
	}
	if len(u.MFARecoveryCodes) != 10 || len(u.MFARecoveryCodes[0]) != 64 || strings.Contains(strings.Join(u.MFARecoveryCodes, ","), s.RecoveryCodes[0]) {
		t.Fatalf("stored recovery codes %v", u.MFARecoveryCodes)
	}
	recs := w.audits(t, "auth.mfa.setup")
	if len(recs) != 1 || recs[0].ResourceID != w.c.UserID || recs[0].Details["method"] != "totp" {
		t.Fatalf("audit = %+v", recs)
	}
	for _, r := range recs {
		raw, _ := json.Marshal(r)
		if strings.Contains(string(raw), s.Secret) || strings.Contains(string(raw), s.RecoveryCodes[0]) {
			t.Fatal("audit record holds a secret")
		}
	}
	// The setup is consumed.
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": w.code(t, s.Secret)}), 409, "")

	// The code that enabled TOTP is spent: signing in within the same step fails.
	fixture.Expect(t, w.post(t, "/logout", w.c.Token, nil), 200)
	tok := w.tempToken(t, w.email, "totp")
	// The refusal says so (issue 35): the message stays, details.hint tells
	// what to do.
	usedHint(t, expectError(t, w.verify(t, tok, w.code(t, s.Secret)), 401, "Invalid MFA code"), true)

	w.tick()
	code := w.code(t, s.Secret)
	res = w.verify(t, tok, code)
	fixture.Budget(t, res, budgetVerifyTOTP)
	access := signedIn(t, res)
	if fixture.Do(t, w.API, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: access}).JSON(t)["user"].(map[string]any)["mfaEnabled"] != true {
		t.Fatal("/auth/me does not show mfaEnabled")
	}
	logins := w.audits(t, "user.login")
	if len(logins) == 0 || logins[0].Details["mfa"] != true {
		t.Fatalf("user.login audit = %+v", logins)
	}

	// The temp token is spent, and the same code on a fresh sign-in is a replay.
	expectError(t, w.verify(t, tok, code), 401, "Invalid or expired MFA token")
	tok2 := w.tempToken(t, w.email, "totp")
	usedHint(t, expectError(t, w.verify(t, tok2, code), 401, "Invalid MFA code"), true)
	w.tick()
	signedIn(t, w.verify(t, tok2, w.code(t, s.Secret)))
}

func TestAuthenticatedVerifyConfirmsSetup(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	s := w.setup(t, w.c.Token)
	res := fixture.Expect(t, w.post(t, "/mfa/verify", w.c.Token, map[string]string{"code": w.code(t, s.Secret)}), 200)
	if b := res.JSON(t); b["mfaEnabled"] != true || len(b["recoveryCodes"].([]any)) != 10 {
		t.Fatalf("verify {code} = %v", b)
	}
	if !w.profile(t, w.c.UserID).TOTPEnrolled() {
		t.Fatal("not enrolled")
	}
	// Without a bearer token, {code} alone names nothing to verify.
	expectError(t, w.post(t, "/mfa/verify", "", map[string]string{"code": "123456"}), 400, "Validation failed")
}

func TestRecoveryCodeWorksOnce(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	_, codes := w.enableTOTP(t, w.c.Token)
	tok := w.tempToken(t, w.email, "totp")
	res := w.verify(t, tok, strings.ToLower(codes[3]))
	fixture.Budget(t, res, budgetVerifyTOTP)
	signedIn(t, res)
	u := w.profile(t, w.c.UserID)
	if u.MFARecoveryCodes[3] != "-" || len(u.MFARecoveryCodes) != 10 {
		t.Fatalf("stored codes after use: %v", u.MFARecoveryCodes)
	}
	expectError(t, w.verify(t, w.tempToken(t, w.email, "totp"), codes[3]), 401, "Invalid MFA code")
	signedIn(t, w.verify(t, w.tempToken(t, w.email, "totp"), strings.ReplaceAll(codes[4], "-", "")))
}

func TestConcurrentVerifySameCodeOneWinner(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, codes := w.enableTOTP(t, w.c.Token)
	for _, totpRound := range []bool{true, false} {
		w.Env.Clock.Advance(5*time.Minute + 5*time.Second) // a fresh rate-limit window
		code := codes[0]
		if totpRound {
			code = w.code(t, secret)
		}
		toks := []string{w.tempToken(t, w.email, "totp"), w.tempToken(t, w.email, "totp"), w.tempToken(t, w.email, "totp")}
		var mu sync.Mutex
		statuses := map[int]int{}
		var wg sync.WaitGroup
		for _, tok := range toks {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Raced: the three share one rate-limit count, and the one
				// that loses its compare-and-swap reads it again (a call
				// over the uncontended budget when they meet).
				res := fixture.Do(t, w.API, fixture.Request{Method: "POST", Path: "/api/v1/auth/mfa/verify",
					Body: map[string]string{"tempToken": tok, "code": code}, RemoteAddr: "198.51.100.10:4000", Raced: true})
				mu.Lock()
				statuses[res.Status]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		if statuses[200] != 1 || statuses[401] != 2 {
			t.Fatalf("code %s: statuses %v, want one 200 and two 401", code, statuses)
		}
	}
}

func TestVerifyRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, _ := w.enableTOTP(t, w.c.Token)

	t.Run("validation", func(t *testing.T) {
		expectError(t, w.verify(t, "mfa_x", ""), 400, "Validation failed")
		expectError(t, w.post(t, "/mfa/verify", "", map[string]any{"code": "123456", "tempToken": "x", "extra": 1}), 400, "")
	})
	t.Run("unknown temp token", func(t *testing.T) {
		expectError(t, w.verify(t, "mfa_unknown", w.code(t, secret)), 401, "Invalid or expired MFA token")
	})
	t.Run("expired temp token", func(t *testing.T) {
		tok := w.tempToken(t, w.email, "totp")
		w.Env.Clock.Advance(5*time.Minute + time.Second)
		expectError(t, w.verify(t, tok, w.code(t, secret)), 401, "Invalid or expired MFA token")
	})
	t.Run("wrong and malformed codes", func(t *testing.T) {
		w.Env.Clock.Advance(5*time.Minute + 5*time.Second) // a fresh rate-limit window
		tok := w.tempToken(t, w.email, "totp")
		usedHint(t, expectError(t, w.verify(t, tok, "000000"), 401, "Invalid MFA code"), false)
		usedHint(t, expectError(t, w.verify(t, tok, "ZZZZ-ZZZZ"), 401, "Invalid MFA code"), false)
		expectError(t, w.verify(t, tok, "not a code"), 401, "Invalid MFA code")
		// A failed attempt does not spend the temp token.
		signedIn(t, w.verify(t, tok, w.code(t, secret)))
	})
	t.Run("rate limit", func(t *testing.T) {
		w.Env.Clock.Advance(5*time.Minute + 5*time.Second)
		tok := w.tempToken(t, w.email, "totp")
		for i := 0; i < 5; i++ {
			expectError(t, w.verify(t, tok, "000001"), 401, "")
		}
		b := expectError(t, w.verify(t, tok, w.code(t, secret)), 429, "")
		if ra, _ := b["retryAfter"].(float64); ra < 1 || ra > 305 {
			t.Fatalf("retryAfter = %v", b["retryAfter"])
		}
	})
	t.Run("disabled user", func(t *testing.T) {
		w.Env.Clock.Advance(5*time.Minute + 5*time.Second)
		access := signedIn(t, w.verify(t, w.tempToken(t, w.email, "totp"), w.code(t, secret)))
		w.tick()
		tok := w.tempToken(t, w.email, "totp")
		k := user.ProfileKey(w.c.UserID)
		if err := w.Env.Store.Do(t.Context(), store.Set(k.PK, k.SK, "status", user.StatusDisabled)); err != nil {
			t.Fatal(err)
		}
		expectError(t, w.verify(t, tok, w.code(t, secret)), 401, "Invalid or expired MFA token")
		expectError(t, w.post(t, "/mfa/disable", access, map[string]string{"code": w.code(t, secret)}), 401, "Account is disabled")
		expectError(t, w.post(t, "/mfa/sms/send", access, nil), 401, "Account is disabled")
	})
}

func TestEnableRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": "123456"}), 400, "No TOTP setup in progress or it expired; start again with /auth/mfa/setup")
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": "12345"}), 400, "Validation failed")
	s := w.setup(t, w.c.Token)
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": "000000"}), 400, "Invalid MFA code")
	// The setup data lives 10 minutes.
	w.Env.Clock.Advance(10*time.Minute + time.Second)
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": w.code(t, s.Secret)}), 400, "No TOTP setup in progress or it expired; start again with /auth/mfa/setup")
	// A new setup replaces the old: the old secret's codes do not confirm it.
	s1 := w.setup(t, w.c.Token)
	s2 := w.setup(t, w.c.Token)
	if s1.Secret == s2.Secret {
		t.Fatal("two setups share a secret")
	}
	if c1, c2 := w.code(t, s1.Secret), w.code(t, s2.Secret); c1 != c2 {
		expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": c1}), 400, "Invalid MFA code")
	}
	fixture.Expect(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": w.code(t, s2.Secret)}), 200)
	expectError(t, w.post(t, "/mfa/setup", w.c.Token, nil), 409, "TOTP is already enabled; disable it first to enrol another authenticator")
	// API keys and anonymous callers are refused.
	expectError(t, w.post(t, "/mfa/setup", "", nil), 401, "")
	expectError(t, fixture.Do(t, w.API, fixture.Request{Method: "POST", Path: "/api/v1/auth/mfa/setup", APIKey: "svc_x"}), 401, "")
}

func TestDisableNeedsCodeAndClearsFactors(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	expectError(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": "123456"}), 400, "MFA is not enabled")
	secret, codes := w.enableTOTP(t, w.c.Token)
	expectError(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": ""}), 400, "Validation failed")
	expectError(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": "000000"}), 400, "Invalid MFA code")
	expectError(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": "AAAA-AAAA"}), 400, "Invalid MFA code")

	w.setPolicy(t, true, "totp", "sms", "passkey")
	expectError(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": w.code(t, secret)}), 403, "MFA is required by your organization and cannot be disabled")
	if !w.profile(t, w.c.UserID).TOTPEnrolled() {
		t.Fatal("refused disable changed the profile")
	}
	w.setPolicy(t, false, "totp", "sms", "passkey")

	res := fixture.Expect(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": codes[0]}), 200)
	fixture.Budget(t, res, budgetDisable)
	if b := res.JSON(t); b["mfaEnabled"] != false {
		t.Fatalf("disable = %v", b)
	}
	u := w.profile(t, w.c.UserID)
	if u.MFAEnabled || u.MFASecret != "" || len(u.MFARecoveryCodes) != 0 || u.MFAMethod != "" || u.PhoneNumber != "" || u.MFALastStep != 0 {
		t.Fatalf("profile after disable: %+v", u)
	}
	recs := w.audits(t, "auth.mfa.disable")
	if len(recs) != 1 || recs[0].ResourceID != w.c.UserID {
		t.Fatalf("audit = %+v", recs)
	}
	// Sign-in no longer asks for a second factor.
	if b := w.login(t, w.email); b["mfaRequired"] != false {
		t.Fatalf("login after disable = %v", b)
	}
}

func TestDisableKeepsPasskeyPrimary(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, _ := w.enableTOTP(t, w.c.Token)
	// shared/passkey keeps passkeyCount on the profile; one passkey is registered.
	k := user.ProfileKey(w.c.UserID)
	if err := w.Env.Store.Do(t.Context(), store.Set(k.PK, k.SK, "passkeyCount", 1)); err != nil {
		t.Fatal(err)
	}
	// With a passkey left, MFA stays on, so an organization requiring MFA allows it.
	w.setPolicy(t, true, "totp", "sms", "passkey")
	res := fixture.Expect(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": w.code(t, secret)}), 200)
	if b := res.JSON(t); b["mfaEnabled"] != true || b["mfaMethod"] != "passkey" {
		t.Fatalf("disable = %v", b)
	}
	if u := w.profile(t, w.c.UserID); !u.MFAEnabled || u.MFAMethod != "passkey" || u.MFASecret != "" {
		t.Fatalf("profile: %+v", u)
	}
}

func TestRotateRecoveryCodes(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	expectError(t, w.post(t, "/mfa/recovery-codes", w.c.Token, map[string]string{"code": "123456"}), 400, "MFA is not enabled")
	secret, old := w.enableTOTP(t, w.c.Token)
	expectError(t, w.post(t, "/mfa/recovery-codes", w.c.Token, nil), 400, "Validation failed")
	expectError(t, w.post(t, "/mfa/recovery-codes", w.c.Token, map[string]string{"code": "000000"}), 400, "Invalid MFA code")
	code := w.code(t, secret)
	res := fixture.Expect(t, w.post(t, "/mfa/recovery-codes", w.c.Token, map[string]string{"code": code}), 200)
	fixture.Budget(t, res, budgetRotate)
	var out struct {
		RecoveryCodes []string `json:"recoveryCodes"`
	}
	res.Decode(t, &out)
	if len(out.RecoveryCodes) != 10 || out.RecoveryCodes[0] == old[0] {
		t.Fatalf("rotate = %v", out.RecoveryCodes)
	}
	// The TOTP code was spent by the rotation; an authenticated route hints too.
	usedHint(t, expectError(t, w.post(t, "/mfa/recovery-codes", w.c.Token, map[string]string{"code": code}), 400, "Invalid MFA code"), true)
	w.Env.Clock.Advance(5*time.Minute + 5*time.Second) // a fresh rate-limit window
	if recs := w.audits(t, "auth.mfa.recovery_codes.rotate"); len(recs) != 1 {
		t.Fatalf("audit = %+v", recs)
	}
	// Old codes are gone; new ones work, once.
	expectError(t, w.verify(t, w.tempToken(t, w.email, "totp"), old[1]), 401, "Invalid MFA code")
	signedIn(t, w.verify(t, w.tempToken(t, w.email, "totp"), out.RecoveryCodes[1]))
	// A recovery code is accepted as the current code, and spent.
	fixture.Expect(t, w.post(t, "/mfa/recovery-codes", w.c.Token, map[string]string{"code": out.RecoveryCodes[2]}), 200)
}

func TestSMSFactorEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	phone := uniquePhone()
	expectError(t, w.post(t, "/mfa/sms/enable", w.c.Token, nil), 400, "A verified phone number is required; verify one with /auth/phone/verify")
	expectError(t, w.post(t, "/phone/verify", w.c.Token, map[string]string{"phoneNumber": "0155512345"}), 400, "Validation failed")
	expectError(t, w.post(t, "/phone/confirm", w.c.Token, map[string]string{"code": "123456"}), 400, "No phone verification in progress or the code expired; request a new code")
	fixture.Expect(t, w.post(t, "/phone/verify", w.c.Token, map[string]string{"phoneNumber": phone}), 200)
	expectError(t, w.post(t, "/phone/confirm", w.c.Token, map[string]string{"code": "000000"}), 400, "Invalid MFA code")
	// The phone code lives 10 minutes.
	w.Env.Clock.Advance(10*time.Minute + time.Second)
	expectError(t, w.post(t, "/phone/confirm", w.c.Token, map[string]string{"code": lastSMS(t, phone, 1)}), 400, "No phone verification in progress or the code expired; request a new code")

	codes := w.enableSMS(t, w.c.Token, phone, 1)
	u := w.profile(t, w.c.UserID)
	if !u.SMSEnrolled() || u.MFAMethod != "sms" || u.PhoneNumber != phone {
		t.Fatalf("profile: %+v", u)
	}
	recs := w.audits(t, "auth.mfa.setup")
	if len(recs) != 1 || recs[0].Details["method"] != "sms" || strings.Contains(fmt.Sprint(recs[0].Details), phone) {
		t.Fatalf("audit = %+v", recs)
	}
	expectError(t, w.post(t, "/mfa/sms/enable", w.c.Token, nil), 409, "SMS MFA is already enabled")
	// The phone cannot be swapped under an enabled SMS factor.
	expectError(t, w.post(t, "/phone/verify", w.c.Token, map[string]string{"phoneNumber": uniquePhone()}), 409, "Disable SMS MFA before changing your phone number")

	fixture.Expect(t, w.post(t, "/logout", w.c.Token, nil), 200)
	tok := w.tempToken(t, w.email, "sms")
	// No code was sent for this sign-in yet.
	expectError(t, w.verify(t, tok, "123456"), 401, "Invalid MFA code")
	res := fixture.Expect(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok}), 200)
	fixture.Budget(t, res, budgetSMSSend)
	code := lastSMS(t, phone, 3)
	res = w.verify(t, tok, code)
	fixture.Budget(t, res, budgetVerifySMS)
	signedIn(t, res)
	// Single use.
	tok2 := w.tempToken(t, w.email, "sms")
	expectError(t, w.verify(t, tok2, code), 401, "Invalid MFA code")
	// A recovery code from the SMS enrolment works too.
	signedIn(t, w.verify(t, tok2, codes[0]))
	// An SMS code expires with the sign-in (5 minutes).
	tok3 := w.tempToken(t, w.email, "sms")
	fixture.Expect(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok3}), 200)
	late := lastSMS(t, phone, 4)
	w.Env.Clock.Advance(5*time.Minute + 5*time.Second)
	tok4 := w.tempToken(t, w.email, "sms")
	expectError(t, w.verify(t, tok4, late), 401, "Invalid MFA code")
}

func TestSMSStepUpAndDisable(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	phone := uniquePhone()
	w.enableSMS(t, w.c.Token, phone, 0)
	expectError(t, w.post(t, "/mfa/sms/send", "", nil), 400, "Validation failed")
	res := fixture.Expect(t, w.post(t, "/mfa/sms/send", w.c.Token, nil), 200)
	fixture.Budget(t, res, budgetSMSStepUp)
	code := lastSMS(t, phone, 2)
	fixture.Expect(t, w.post(t, "/mfa/disable", w.c.Token, map[string]string{"code": code}), 200)
	u := w.profile(t, w.c.UserID)
	if u.MFAEnabled || u.MFASMSEnabled || u.PhoneNumber != "" || u.PhoneVerified {
		t.Fatalf("profile after disable: %+v", u)
	}
	expectError(t, w.post(t, "/mfa/sms/send", w.c.Token, nil), 400, "SMS MFA is not enabled for this account")
}

func TestTOTPStaysPrimaryWhenSMSAdded(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, _ := w.enableTOTP(t, w.c.Token)
	phone := uniquePhone()
	w.enableSMS(t, w.c.Token, phone, 0)
	if u := w.profile(t, w.c.UserID); u.MFAMethod != "totp" || !u.SMSEnrolled() || !u.TOTPEnrolled() {
		t.Fatalf("profile: %+v", u)
	}
	// Both factors are accepted at sign-in.
	tok := w.tempToken(t, w.email, "totp")
	fixture.Expect(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok}), 200)
	signedIn(t, w.verify(t, tok, lastSMS(t, phone, 2)))
	signedIn(t, w.verify(t, w.tempToken(t, w.email, "totp"), w.code(t, secret)))
}

func TestSMSRateLimits(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	t.Run("phone verify per phone", func(t *testing.T) {
		phone := uniquePhone()
		for i := 0; i < 3; i++ {
			fixture.Expect(t, w.post(t, "/phone/verify", w.c.Token, map[string]string{"phoneNumber": phone}), 200)
		}
		other := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgViewerID})
		b := expectError(t, w.post(t, "/phone/verify", other.Token, map[string]string{"phoneNumber": phone}), 429, "")
		if ra, _ := b["retryAfter"].(float64); ra < 1 || ra > 3660 {
			t.Fatalf("retryAfter = %v", b["retryAfter"])
		}
	})
	t.Run("phone verify per user", func(t *testing.T) {
		c := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgViewerID})
		for i := 0; i < 5; i++ {
			fixture.Expect(t, w.post(t, "/phone/verify", c.Token, map[string]string{"phoneNumber": uniquePhone()}), 200)
		}
		expectError(t, w.post(t, "/phone/verify", c.Token, map[string]string{"phoneNumber": uniquePhone()}), 429, "")
	})
	t.Run("sms send per temp token and per phone", func(t *testing.T) {
		email := "s-" + randDigits(8) + "@example.com"
		c := fixture.User(t, w.Env, fixture.Member{Email: email, Password: pw, Scope: authz.ScopeOrg, OrgID: w.A.ID, RoleID: role.OrgViewerID})
		phone := uniquePhone()
		w.enableSMS(t, c.Token, phone, 0)
		tok := w.tempToken(t, email, "sms")
		for i := 0; i < 3; i++ {
			fixture.Expect(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok}), 200)
		}
		b := expectError(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok}), 429, "")
		if ra, _ := b["retryAfter"].(float64); ra < 1 || ra > 305 {
			t.Fatalf("retryAfter = %v", b["retryAfter"])
		}
		tok2 := w.tempToken(t, email, "sms")
		for i := 0; i < 2; i++ {
			fixture.Expect(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok2}), 200)
		}
		// Five sent to this phone in 15 minutes: the sixth is refused whatever the token.
		expectError(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok2}), 429, "")
		if n := len(testenv.SentSMS(t, phone)); n != 6 { // 1 verification + 5 sign-in codes
			t.Fatalf("%d messages sent", n)
		}
	})
}

func TestOrganizationDisallowsSMS(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	phone := uniquePhone()
	w.setPolicy(t, false, "totp", "passkey")
	fixture.Expect(t, w.post(t, "/phone/verify", w.c.Token, map[string]string{"phoneNumber": phone}), 200)
	fixture.Expect(t, w.post(t, "/phone/confirm", w.c.Token, map[string]string{"code": lastSMS(t, phone, 1)}), 200)
	expectError(t, w.post(t, "/mfa/sms/enable", w.c.Token, nil), 403, "SMS MFA is not allowed by your organization")

	// Enabled while allowed, then the organization switches SMS off: no code is sent.
	w.setPolicy(t, false, "totp", "sms", "passkey")
	fixture.Expect(t, w.post(t, "/mfa/sms/enable", w.c.Token, nil), 200)
	w.setPolicy(t, false, "totp")
	tok := w.tempToken(t, w.email, "sms")
	expectError(t, w.post(t, "/mfa/sms/send", "", map[string]string{"tempToken": tok}), 403, "SMS MFA is not allowed by your organization")
	if n := len(testenv.SentSMS(t, phone)); n != 1 {
		t.Fatalf("%d messages sent", n)
	}
	// TOTP can be disallowed too.
	w.setPolicy(t, false, "sms")
	expectError(t, w.post(t, "/mfa/setup", w.c.Token, nil), 403, "TOTP MFA is not allowed by your organization")
}

func TestForceMFAUntilTOTPEnabled(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	p := fixture.Partner(t, w.Env, "MSP")
	admin := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
	orgs, err := organizationsgroup.Organizations(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	list := func() fixture.Response {
		return fixture.Do(t, orgs, fixture.Request{Method: "GET", Path: "/api/v1/organizations", Token: admin.Token})
	}
	b := expectError(t, list(), 428, "mfa_enrollment_required")
	if b["enrollUrl"] != "/api/v1/auth/mfa/setup" {
		t.Fatalf("428 body = %v", b)
	}
	// Enrolment routes stay open; SMS does not satisfy Force MFA, TOTP does.
	w.enableSMS(t, admin.Token, uniquePhone(), 0)
	expectError(t, list(), 428, "mfa_enrollment_required")
	s := w.setup(t, admin.Token)
	fixture.Expect(t, w.post(t, "/mfa/enable", admin.Token, map[string]string{"code": w.code(t, s.Secret)}), 200)
	fixture.Expect(t, list(), 200)
}

func TestTwoFactorSwitchedOff(t *testing.T) {
	t.Parallel()
	w := newWorld(t, "ENABLE_2FA", "false")
	expectError(t, w.post(t, "/mfa/setup", w.c.Token, nil), 403, "Two-factor authentication is disabled on this server")
	expectError(t, w.post(t, "/mfa/enable", w.c.Token, map[string]string{"code": "123456"}), 403, "Two-factor authentication is disabled on this server")
	expectError(t, w.post(t, "/mfa/sms/enable", w.c.Token, nil), 403, "Two-factor authentication is disabled on this server")
	// Force MFA is waived with it: no authenticator could be enrolled.
	p := fixture.Partner(t, w.Env, "MSP")
	admin := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopePartner, PartnerID: p.ID, RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
	orgs, err := organizationsgroup.Organizations(w.Env.Deps)
	if err != nil {
		t.Fatal(err)
	}
	fixture.Expect(t, fixture.Do(t, orgs, fixture.Request{Method: "GET", Path: "/api/v1/organizations", Token: admin.Token}), 200)
}

func TestSecretsNeverInResponsesOrLogs(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, _ := w.enableTOTP(t, w.c.Token)
	me := fixture.Do(t, w.API, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: w.c.Token})
	for _, leak := range []string{secret, "mfaSecret", "mfaRecoveryCodes", "mfaLastStep", "mfaSmsEnabled"} {
		if strings.Contains(string(me.Body), leak) {
			t.Fatalf("/auth/me leaks %q: %s", leak, me.Body)
		}
	}
}

// Issue 30: each MFA verification is counted before the code is checked
// (the per-user limit, 5 per 5 minutes), so 50 concurrent wrong codes get at
// most 5 checks (a checked one answers 401, a refused one 429 unchecked), and
// the right code sent after them is refused too.
func TestVerifyBurstChecksAtMostFive(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	secret, _ := w.enableTOTP(t, w.c.Token)
	w.Env.Clock.Advance(5*time.Minute + 5*time.Second) // a fresh rate-limit window
	tok := w.tempToken(t, w.email, "totp")
	right := w.code(t, secret)
	wrong := "000000"
	if wrong == right {
		wrong = "000001"
	}
	got := fixture.Burst(50, func() fixture.Response { return w.verify(t, tok, wrong) })
	if got[http.StatusUnauthorized] > 5 || got[http.StatusUnauthorized]+got[http.StatusTooManyRequests] != 50 {
		t.Fatalf("answers by status %v; want at most 5 checked (401), the rest refused unchecked (429)", got)
	}
	fixture.Expect(t, w.verify(t, tok, right), http.StatusTooManyRequests)
}
