package passkey_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/descope/virtualwebauthn"
	"github.com/fxamacker/cbor/v2"
	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/passkey"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	pw     = "Correct-Horse-Battery-9"
	rpID   = "gale.test"
	origin = "https://gale.test"
)

// world is fixture's small world (one partner, one organization) serving
// the /auth group, with a relying party and a source address per sign-in.
type world struct {
	*fixture.World
	rp virtualwebauthn.RelyingParty
	ip atomic.Int32
}

func newWorld(t *testing.T) *world {
	t.Helper()
	t.Parallel()
	// Sign-in lives in the auth function, passkeys in auth-passkeys: serve both.
	fw := fixture.NewSmallWorld(t, []string{"APP_URL", origin, "WEBAUTHN_RP_ID", rpID}, "auth", "auth-passkeys")
	return &world{World: fw, rp: virtualwebauthn.RelyingParty{Name: "Gale", ID: rpID, Origin: origin}}
}

// orgUser creates an Org Admin (no Force MFA) with the test password.
func (w *world) orgUser(t *testing.T, m fixture.Member) fixture.Caller {
	t.Helper()
	m.Password, m.Scope, m.OrgID = pw, authz.ScopeOrg, w.A.ID
	if m.RoleID == "" {
		m.RoleID = role.OrgAdminID
	}
	return fixture.User(t, w.Env, m)
}

func (w *world) do(t *testing.T, method, path, token string, body any) fixture.Response {
	t.Helper()
	return fixture.Do(t, w.API, fixture.Request{Method: method, Path: path, Token: token, Body: body})
}

// authenticator is a software authenticator holding one credential.
type authenticator struct {
	auth virtualwebauthn.Authenticator
	cred virtualwebauthn.Credential
}

func newAuthenticator() *authenticator {
	a := &authenticator{auth: virtualwebauthn.NewAuthenticator(), cred: ec2Credential()}
	a.auth.AddCredential(a.cred)
	return a
}

func (a *authenticator) id() string { return b64(a.cred.ID) }

// registerOptions asks for creation options and returns them parsed.
func (w *world) registerOptions(t *testing.T, c fixture.Caller, name string) (fixture.Response, *virtualwebauthn.AttestationOptions) {
	t.Helper()
	res := fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token,
		map[string]string{"currentPassword": pw, "name": name}), 200)
	opts, err := virtualwebauthn.ParseAttestationOptions(string(res.Body))
	if err != nil {
		t.Fatalf("options are not WebAuthn creation options: %v: %s", err, res.Body)
	}
	return res, opts
}

func (w *world) attest(a *authenticator, opts *virtualwebauthn.AttestationOptions) string {
	return virtualwebauthn.CreateAttestationResponse(w.rp, a.auth, a.cred, *opts)
}

// register runs options and verify and expects 201.
func (w *world) register(t *testing.T, c fixture.Caller, a *authenticator, name string) map[string]any {
	t.Helper()
	_, opts := w.registerOptions(t, c, name)
	res := fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, w.attest(a, opts)), 201)
	return res.JSON(t)
}

// login signs in with the password from a fresh IP and returns the body.
func (w *world) login(t *testing.T, email string) fixture.Response {
	t.Helper()
	ip := fmt.Sprintf("198.51.100.%d", w.ip.Add(1))
	return fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
		Body: map[string]string{"email": email, "password": pw}, RemoteAddr: ip + ":4000"}), 200)
}

func (w *world) tempToken(t *testing.T, email string) string {
	t.Helper()
	body := w.login(t, email).JSON(t)
	tok, _ := body["tempToken"].(string)
	if body["mfaRequired"] != true || tok == "" {
		t.Fatalf("login did not ask for MFA: %v", body)
	}
	return tok
}

// loginOptions asks for assertion options for a temp token.
func (w *world) loginOptions(t *testing.T, temp string) (fixture.Response, *virtualwebauthn.AssertionOptions) {
	t.Helper()
	res := fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/options", "", map[string]string{"tempToken": temp}), 200)
	opts, err := virtualwebauthn.ParseAssertionOptions(string(res.Body))
	if err != nil {
		t.Fatalf("options are not WebAuthn request options: %v: %s", err, res.Body)
	}
	return res, opts
}

func (w *world) assert(a *authenticator, opts *virtualwebauthn.AssertionOptions) json.RawMessage {
	return json.RawMessage(virtualwebauthn.CreateAssertionResponse(w.rp, a.auth, a.cred, *opts))
}

func (w *world) loginVerify(t *testing.T, temp string, assertion json.RawMessage) fixture.Response {
	t.Helper()
	return w.do(t, "POST", "/api/v1/auth/mfa/passkey/verify", "", map[string]any{"tempToken": temp, "credential": assertion})
}

// passkeyLogin runs the whole MFA login with a at counter and returns the verify answer.
func (w *world) passkeyLogin(t *testing.T, email string, a *authenticator, counter uint32) fixture.Response {
	t.Helper()
	temp := w.tempToken(t, email)
	_, opts := w.loginOptions(t, temp)
	a.cred.Counter = counter
	return w.loginVerify(t, temp, w.assert(a, opts))
}

func (w *world) stored(t *testing.T, userID string) []passkey.Passkey {
	t.Helper()
	keys, err := passkey.Store{St: w.Env.Store}.List(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func (w *world) profile(t *testing.T, userID string) *user.User {
	t.Helper()
	u, err := w.Env.Users.Get(t.Context(), userID)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (w *world) auditActions(t *testing.T, tenantKey string) []string {
	t.Helper()
	recs, err := audit.List(t.Context(), w.Env.Store, tenantKey, 50)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Action)
	}
	return out
}

func (w *world) setSecurity(t *testing.T, requireMFA bool, methods ...string) {
	t.Helper()
	sec := tenant.DefaultSecurity(w.A.ID)
	sec.RequireMFA, sec.AllowedMFAMethods = requireMFA, methods
	if err := w.Env.Store.Do(t.Context(), store.Put(sec)); err != nil {
		t.Fatal(err)
	}
}

func expectError(t *testing.T, res fixture.Response, status int, msg string) {
	t.Helper()
	fixture.Expect(t, res, status)
	if got := res.JSON(t)["error"]; got != msg {
		t.Fatalf("error = %q, want %q", got, msg)
	}
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func TestRegisterListRenameAndLogIn(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{Email: "pat@example.com"})
	a := newAuthenticator()

	res, opts := w.registerOptions(t, c, "YubiKey")
	fixture.Budget(t, res, 8)
	var creation struct {
		PublicKey struct {
			RP struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"rp"`
			Timeout int               `json:"timeout"`
			Exclude []json.RawMessage `json:"excludeCredentials"`
		} `json:"publicKey"`
	}
	res.Decode(t, &creation)
	if creation.PublicKey.RP.ID != rpID || creation.PublicKey.RP.Name != "Gale" || creation.PublicKey.Timeout != 300000 || len(creation.PublicKey.Exclude) != 0 {
		t.Fatalf("creation options = %s", res.Body)
	}
	ver := fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, w.attest(a, opts)), 201)
	fixture.Budget(t, ver, 7)
	reg := ver.JSON(t)
	pk := reg["passkey"].(map[string]any)
	if pk["id"] != a.id() || pk["name"] != "YubiKey" || reg["mfaEnabled"] != true || reg["mfaMethod"] != "passkey" || pk["lastUsedAt"] != nil {
		t.Fatalf("registered = %v", reg)
	}
	u := w.profile(t, c.UserID)
	if !u.MFAEnabled || u.MFAMethod != "passkey" || u.PasskeyCount != 1 {
		t.Fatalf("profile after registration: enabled=%v method=%q count=%d", u.MFAEnabled, u.MFAMethod, u.PasskeyCount)
	}
	keys := w.stored(t, c.UserID)
	if len(keys) != 1 || len(keys[0].PublicKey) == 0 || keys[0].AAGUID == "" || keys[0].CreatedAt == "" {
		t.Fatalf("stored = %+v", keys)
	}
	if acts := w.auditActions(t, audit.Tenant(w.A.ID, "")); !slices.Contains(acts, "auth.mfa.passkey.register") {
		t.Fatalf("audit = %v", acts)
	}

	// A second registration excludes the credential already registered.
	res, _ = w.registerOptions(t, c, "Second")
	res.Decode(t, &creation)
	if len(creation.PublicKey.Exclude) != 1 || !strings.Contains(string(creation.PublicKey.Exclude[0]), a.id()) {
		t.Fatalf("excludeCredentials = %s", res.Body)
	}

	list := fixture.Expect(t, w.do(t, "GET", "/api/v1/auth/passkeys", c.Token, nil), 200)
	fixture.Budget(t, list, 3)
	var page struct {
		Data       []map[string]any `json:"data"`
		Pagination map[string]any   `json:"pagination"`
	}
	list.Decode(t, &page)
	if len(page.Data) != 1 || page.Data[0]["id"] != a.id() || page.Pagination["total"] != float64(1) {
		t.Fatalf("list = %s", list.Body)
	}
	for k := range page.Data[0] {
		if !slices.Contains([]string{"id", "name", "createdAt", "lastUsedAt"}, k) {
			t.Fatalf("list shows %q: %s", k, list.Body)
		}
	}

	ren := fixture.Expect(t, w.do(t, "PATCH", "/api/v1/auth/passkeys/"+a.id(), c.Token, map[string]string{"name": "  Laptop  "}), 200)
	fixture.Budget(t, ren, 3)
	if ren.JSON(t)["name"] != "Laptop" {
		t.Fatalf("rename = %s", ren.Body)
	}
	expectError(t, w.do(t, "PATCH", "/api/v1/auth/passkeys/"+a.id(), c.Token, map[string]string{"name": " "}), 400, "Validation failed")

	// Login: MFA required, passkey primary and available.
	lres := w.login(t, c.Email)
	body := lres.JSON(t)
	if body["mfaRequired"] != true || body["mfaMethod"] != "passkey" || body["passkeyAvailable"] != true {
		t.Fatalf("login = %v", body)
	}
	temp := body["tempToken"].(string)
	ores, aopts := w.loginOptions(t, temp)
	fixture.Budget(t, ores, 4)
	if len(aopts.AllowCredentials) != 1 || aopts.AllowCredentials[0] != a.id() || aopts.RelyingPartyID != rpID {
		t.Fatalf("assertion options = %s", ores.Body)
	}
	a.cred.Counter = 1
	vres := fixture.Expect(t, w.loginVerify(t, temp, w.assert(a, aopts)), 200)
	fixture.Budget(t, vres, 9) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	var out struct {
		User        map[string]any `json:"user"`
		Tokens      *signin.Tokens `json:"tokens"`
		MFARequired bool           `json:"mfaRequired"`
	}
	vres.Decode(t, &out)
	if out.Tokens == nil || out.Tokens.AccessToken == "" || out.MFARequired || out.User["id"] != c.UserID {
		t.Fatalf("verify = %s", vres.Body)
	}
	claims, err := w.Env.Sessions.Signer.Verify(out.Tokens.AccessToken)
	if err != nil || !claims.MFA || claims.OrgID != w.A.ID {
		t.Fatalf("claims = %+v, %v", claims, err)
	}
	if !strings.Contains(vres.Header.Get("Set-Cookie"), signin.CookieName+"=") {
		t.Fatalf("no refresh cookie: %v", vres.Header)
	}
	keys = w.stored(t, c.UserID)
	if keys[0].SignCount != 1 || keys[0].LastUsedAt == "" {
		t.Fatalf("after login: signCount=%d lastUsedAt=%q", keys[0].SignCount, keys[0].LastUsedAt)
	}
	// The temp token was spent with the sign-in.
	expectError(t, w.loginVerify(t, temp, w.assert(a, aopts)), 401, "Invalid or expired MFA token")
	// The new token works on a "+ MFA"-free authenticated route.
	fixture.Expect(t, w.do(t, "GET", "/api/v1/auth/passkeys", out.Tokens.AccessToken, nil), 200)
}

func TestChallengeIsConsumedOnFirstRead(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()

	// Registration: the same attestation twice; the second finds no challenge.
	_, opts := w.registerOptions(t, c, "Key")
	att := w.attest(a, opts)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, att), 201)
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, att), 400,
		"Passkey registration challenge expired or already used")

	// Concurrent verifications of one challenge: exactly one takes it.
	b := newAuthenticator()
	_, opts = w.registerOptions(t, c, "Race")
	att = w.attest(b, opts)
	codes := make([]int, 5)
	var wg sync.WaitGroup
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, att).Status
		}()
	}
	wg.Wait()
	slices.Sort(codes)
	if fmt.Sprint(codes) != "[201 400 400 400 400]" {
		t.Fatalf("concurrent verifications of one challenge answered %v", codes)
	}

	// Login: a failed verification consumes the challenge too, so the right
	// assertion for it is refused afterwards.
	temp := w.tempToken(t, c.Email)
	_, aopts := w.loginOptions(t, temp)
	stranger := newAuthenticator()
	stranger.cred.ID = a.cred.ID // right id, wrong key: the signature fails
	expectError(t, w.loginVerify(t, temp, w.assert(stranger, aopts)), 401, "Passkey verification failed")
	expectError(t, w.loginVerify(t, temp, w.assert(a, aopts)), 401, "Passkey challenge expired or already used")

	// A new options call issues a new challenge for the same temp token.
	_, aopts = w.loginOptions(t, temp)
	fixture.Expect(t, w.loginVerify(t, temp, w.assert(a, aopts)), 200)
}

func TestExpiredChallengeIsRefused(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	_, opts := w.registerOptions(t, c, "Key")
	w.Env.Clock.Advance(passkey.ChallengeTTL + time.Second)
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, w.attest(a, opts)), 400,
		"Passkey registration challenge expired or already used")
	if n := len(w.stored(t, c.UserID)); n != 0 {
		t.Fatalf("%d passkeys stored from an expired challenge", n)
	}

	// Just inside the window it works.
	_, opts = w.registerOptions(t, c, "Key")
	w.Env.Clock.Advance(passkey.ChallengeTTL - time.Second)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, w.attest(a, opts)), 201)

	// At login the temp token (5 minutes) bounds the challenge as well.
	temp := w.tempToken(t, c.Email)
	_, aopts := w.loginOptions(t, temp)
	w.Env.Clock.Advance(passkey.ChallengeTTL + time.Second)
	fixture.Expect(t, w.loginVerify(t, temp, w.assert(a, aopts)), 401)
}

func TestStepUpPasswordAndRateLimit(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	wrong := map[string]string{"currentPassword": "not-the-password-1", "name": "Key"}
	res := w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token, wrong)
	expectError(t, res, 401, "Current password is incorrect")
	fixture.Budget(t, res, 6)
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token, map[string]string{"name": "Key"}), 400, "Validation failed")
	for i := 0; i < 3; i++ {
		fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token, wrong), 401)
	}
	// Delete's step-up shares the limit (5 per 5 minutes per user, apart from login).
	fixture.Expect(t, w.do(t, "DELETE", "/api/v1/auth/passkeys/AAAA", c.Token, map[string]string{"currentPassword": "nope-nope-1"}), 401)
	res = fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token,
		map[string]string{"currentPassword": pw, "name": "Key"}), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
	// Password login is not affected by the step-up limit.
	w.login(t, c.Email)
	// The window passes.
	w.Env.Clock.Advance(5*time.Minute + 5*time.Second)
	w.registerOptions(t, c, "Key")
}

func TestClonedAuthenticatorIsRefused(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	a.cred.Counter = 5
	w.register(t, c, a, "Key")
	if got := w.stored(t, c.UserID)[0].SignCount; got != 5 {
		t.Fatalf("registered signCount = %d", got)
	}
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 6), 200)
	// The same counter again (a replayed or cloned authenticator), then a lower one.
	for _, n := range []uint32{6, 3} {
		res := w.passkeyLogin(t, c.Email, a, n)
		expectError(t, res, 401, "Passkey refused: its signature counter did not increase (possible cloned authenticator)")
		if k := w.stored(t, c.UserID)[0]; k.SignCount != 6 {
			t.Fatalf("refused assertion stored signCount %d", k.SignCount)
		}
	}
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 7), 200)
	if k := w.stored(t, c.UserID)[0]; k.SignCount != 7 {
		t.Fatalf("signCount = %d, want 7", k.SignCount)
	}
}

// A synced passkey (backup eligible and backed up) signs in: the flags stored
// at registration are what its assertions are held to. One that turns backup
// eligible after registration is refused, and so is the reverse.
func TestBackupEligibilityIsKeptFromRegistration(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	synced := newAuthenticator()
	synced.auth.Options = virtualwebauthn.AuthenticatorOptions{BackupEligible: true, BackupState: true}
	w.register(t, c, synced, "Synced")
	if k := w.stored(t, c.UserID)[0]; k.Flags&0x18 != 0x18 {
		t.Fatalf("stored flags %#x lack backup eligibility and state", k.Flags)
	}
	fixture.Expect(t, w.passkeyLogin(t, c.Email, synced, 0), 200)
	synced.auth.Options = virtualwebauthn.AuthenticatorOptions{}
	expectError(t, w.passkeyLogin(t, c.Email, synced, 0), 401, "Passkey verification failed")

	d := w.orgUser(t, fixture.Member{})
	device := newAuthenticator()
	w.register(t, d, device, "Device-bound")
	device.auth.Options = virtualwebauthn.AuthenticatorOptions{BackupEligible: true}
	expectError(t, w.passkeyLogin(t, d.Email, device, 0), 401, "Passkey verification failed")
}

// A registration answering in an attestation format other than none and
// packed is refused with its reason.
func TestRegistrationFormatIsRefused(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	_, opts := w.registerOptions(t, c, "Key")
	body := w.attest(a, opts)
	// Rewrite the attestation object's fmt; the none statement stays empty.
	var m map[string]any
	_ = json.Unmarshal([]byte(body), &m)
	resp := m["response"].(map[string]any)
	raw, _ := base64.RawURLEncoding.DecodeString(resp["attestationObject"].(string))
	var obj map[string]cbor.RawMessage
	if err := cbor.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	obj["fmt"], _ = cbor.Marshal("fido-u2f")
	raw, _ = cbor.Marshal(obj)
	resp["attestationObject"] = b64(raw)
	out, _ := json.Marshal(m)
	res := w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, string(out))
	fixture.Expect(t, res, 400)
	if !strings.Contains(string(res.Body), "attestation format") {
		t.Fatalf("refusal does not name the format: %s", res.Body)
	}
}

func TestAuthenticatorWithoutCounterKeepsWorking(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator() // counter 0 throughout: no clone signal when both are zero
	w.register(t, c, a, "Key")
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 0), 200)
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 0), 200)
	// Once an authenticator reported a count, a zero is a decrease.
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 2), 200)
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 0), 401)
}

func TestConcurrentAssertionsHaveOneWinner(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	w.register(t, c, a, "Key")
	// Two pending logins, each with its own challenge, answered with the same
	// counter: both assertions are valid on their own; the compare-and-swap on
	// the stored count lets one through.
	type attempt struct {
		temp string
		cred json.RawMessage
	}
	var tries []attempt
	for range 2 {
		temp := w.tempToken(t, c.Email)
		_, opts := w.loginOptions(t, temp)
		a.cred.Counter = 1
		tries = append(tries, attempt{temp, w.assert(a, opts)})
	}
	codes := make([]int, len(tries))
	var wg sync.WaitGroup
	for i, tr := range tries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.loginVerify(t, tr.temp, tr.cred).Status
		}()
	}
	wg.Wait()
	slices.Sort(codes)
	if fmt.Sprint(codes) != "[200 401]" {
		t.Fatalf("concurrent verifications answered %v, want one 200 and one 401", codes)
	}
	if k := w.stored(t, c.UserID)[0]; k.SignCount != 1 {
		t.Fatalf("signCount = %d", k.SignCount)
	}
}

func TestAnotherUsersPasskeyIsNotFound(t *testing.T) {
	w := newWorld(t)
	alice := w.orgUser(t, fixture.Member{})
	bob := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	w.register(t, alice, a, "Alice's key")

	expectError(t, w.do(t, "PATCH", "/api/v1/auth/passkeys/"+a.id(), bob.Token, map[string]string{"name": "Mine"}), 404, "Passkey not found")
	expectError(t, w.do(t, "DELETE", "/api/v1/auth/passkeys/"+a.id(), bob.Token, map[string]string{"currentPassword": pw}), 404, "Passkey not found")
	list := fixture.Expect(t, w.do(t, "GET", "/api/v1/auth/passkeys", bob.Token, nil), 200)
	if !strings.Contains(string(list.Body), `"data":[]`) {
		t.Fatalf("bob sees %s", list.Body)
	}
	if k := w.stored(t, alice.UserID); len(k) != 1 || k[0].Name != "Alice's key" {
		t.Fatalf("alice's passkey changed: %+v", k)
	}
	fixture.Expect(t, w.do(t, "PATCH", "/api/v1/auth/passkeys/not*base64", alice.Token, map[string]string{"name": "x"}), 400)
	// Bob cannot start a login assertion for Alice with his own temp token either:
	// options list only the pending user's passkeys, and Bob has none.
	carol := w.orgUser(t, fixture.Member{TOTP: true})
	temp := w.tempToken(t, carol.Email)
	expectError(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/options", "", map[string]string{"tempToken": temp}), 400,
		"No passkey is registered for this account")
	// API keys and missing sessions never reach these routes.
	fixture.Expect(t, w.do(t, "GET", "/api/v1/auth/passkeys", "", nil), 401)
}

func TestDeleteLastFactor(t *testing.T) {
	w := newWorld(t)
	del := func(c fixture.Caller, id string) fixture.Response {
		return w.do(t, "DELETE", "/api/v1/auth/passkeys/"+id, c.Token, map[string]string{"currentPassword": pw})
	}

	t.Run("blocked under a Force MFA role", func(t *testing.T) {
		// Partner Admin is seeded with Force MFA on; the passkey routes stay open to it.
		c := fixture.User(t, w.Env, fixture.Member{Password: pw, Scope: authz.ScopePartner, PartnerID: w.PX.ID,
			RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll})
		a := newAuthenticator()
		w.register(t, c, a, "Only key")
		res := del(c, a.id())
		expectError(t, res, 403, "Cannot delete the last MFA factor while MFA is required")
		fixture.Budget(t, res, 5)
		if len(w.stored(t, c.UserID)) != 1 || !w.profile(t, c.UserID).MFAEnabled {
			t.Fatal("refused delete changed something")
		}
		// With a second passkey, one of them may go.
		b := newAuthenticator()
		w.register(t, c, b, "Backup")
		fixture.Budget(t, fixture.Expect(t, del(c, a.id()), 200), 6)
		expectError(t, del(c, b.id()), 403, "Cannot delete the last MFA factor while MFA is required")
	})

	t.Run("allowed under Force MFA when TOTP remains", func(t *testing.T) {
		c := fixture.User(t, w.Env, fixture.Member{Password: pw, Scope: authz.ScopePartner, PartnerID: w.PX.ID,
			RoleID: role.PartnerAdminID, OrgAccess: authz.OrgAccessAll, TOTP: true})
		a := newAuthenticator()
		reg := w.register(t, c, a, "Key")
		if reg["mfaMethod"] != "totp" {
			t.Fatalf("a passkey took the primary method from TOTP: %v", reg)
		}
		fixture.Expect(t, del(c, a.id()), 200)
		u := w.profile(t, c.UserID)
		if !u.MFAEnabled || u.MFAMethod != "totp" || u.PasskeyCount != 0 {
			t.Fatalf("after delete: enabled=%v method=%q count=%d", u.MFAEnabled, u.MFAMethod, u.PasskeyCount)
		}
	})

	t.Run("blocked when the organization requires MFA", func(t *testing.T) {
		c := w.orgUser(t, fixture.Member{})
		a := newAuthenticator()
		w.register(t, c, a, "Key")
		w.setSecurity(t, true, "totp", "sms", "passkey")
		defer w.setSecurity(t, false, "totp", "sms", "passkey")
		res := del(c, a.id())
		expectError(t, res, 403, "Cannot delete the last MFA factor while MFA is required")
		fixture.Budget(t, res, 7)
	})

	t.Run("allowed otherwise, and MFA turns off", func(t *testing.T) {
		c := w.orgUser(t, fixture.Member{})
		a := newAuthenticator()
		w.register(t, c, a, "Key")
		res := fixture.Expect(t, del(c, a.id()), 200)
		fixture.Budget(t, res, 8)
		u := w.profile(t, c.UserID)
		if u.MFAEnabled || u.MFAMethod != "" || u.PasskeyCount != 0 || len(w.stored(t, c.UserID)) != 0 {
			t.Fatalf("after delete: enabled=%v method=%q count=%d", u.MFAEnabled, u.MFAMethod, u.PasskeyCount)
		}
		if acts := w.auditActions(t, audit.Tenant(w.A.ID, "")); !slices.Contains(acts, "auth.mfa.passkey.delete") {
			t.Fatalf("audit = %v", acts)
		}
		// Login no longer asks for MFA.
		if body := w.login(t, c.Email).JSON(t); body["mfaRequired"] != false {
			t.Fatalf("login after the last factor went: %v", body)
		}
		expectError(t, del(c, a.id()), 404, "Passkey not found")
		expectError(t, w.do(t, "DELETE", "/api/v1/auth/passkeys/"+a.id(), c.Token, map[string]string{"currentPassword": "wrong-password-9"}),
			401, "Current password is incorrect")
	})
}

func TestOrganizationDisallowingPasskeys(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	_, opts := w.registerOptions(t, c, "Key") // allowed when the options were issued
	w.setSecurity(t, false, "totp", "sms")
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, w.attest(a, opts)), 403,
		"Passkey MFA is not allowed by your organization")
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token,
		map[string]string{"currentPassword": pw, "name": "Key"}), 403, "Passkey MFA is not allowed by your organization")
	if len(w.stored(t, c.UserID)) != 0 || w.profile(t, c.UserID).MFAEnabled {
		t.Fatal("a refused registration stored something")
	}
	// Partner users are under no organization's policy.
	p := fixture.User(t, w.Env, fixture.Member{Password: pw, Scope: authz.ScopePartner, PartnerID: w.PX.ID,
		RoleID: role.PartnerViewerID, OrgAccess: authz.OrgAccessAll})
	w.register(t, p, newAuthenticator(), "Key")
}

func TestPolicyOfEveryOrganizationOfTheUser(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	a := newAuthenticator()
	w.register(t, c, a, "Key")
	// The user also belongs to a second organization; its policy binds the
	// account's factors whichever organization the session acts in.
	other := fixture.Org(t, w.Env, w.PX.ID, "Other")
	m := &user.Membership{ID: uuid.NewString(), UserID: c.UserID, Scope: authz.ScopeOrg, OrgID: other.ID,
		RoleID: role.OrgViewerID, RoleOwner: role.SystemOwner, CreatedAt: "2026-11-01T09:00:00.000Z"}
	if err := w.Env.Store.Do(t.Context(), user.AddMembershipWrite(m)); err != nil {
		t.Fatal(err)
	}
	sec := tenant.DefaultSecurity(other.ID)
	sec.RequireMFA, sec.AllowedMFAMethods = true, []string{"totp"}
	if err := w.Env.Store.Do(t.Context(), store.Put(sec)); err != nil {
		t.Fatal(err)
	}
	expectError(t, w.do(t, "DELETE", "/api/v1/auth/passkeys/"+a.id(), c.Token, map[string]string{"currentPassword": pw}), 403,
		"Cannot delete the last MFA factor while MFA is required")
	expectError(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/options", c.Token,
		map[string]string{"currentPassword": pw, "name": "Second"}), 403, "Passkey MFA is not allowed by your organization")
	// Passkeys already registered keep working at login: changing a policy never
	// locks anyone out of their account.
	fixture.Expect(t, w.passkeyLogin(t, c.Email, a, 0), 200)
}

func TestPasskeyInsteadOfTOTP(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{TOTP: true})
	a := newAuthenticator()
	reg := w.register(t, c, a, "Key")
	if reg["mfaMethod"] != "totp" {
		t.Fatalf("registered = %v", reg)
	}
	body := w.login(t, c.Email).JSON(t)
	if body["mfaMethod"] != "totp" || body["passkeyAvailable"] != true {
		t.Fatalf("login = %v", body)
	}
	temp := body["tempToken"].(string)
	_, opts := w.loginOptions(t, temp)
	res := fixture.Expect(t, w.loginVerify(t, temp, w.assert(a, opts)), 200)
	var out struct {
		Tokens signin.Tokens `json:"tokens"`
	}
	res.Decode(t, &out)
	if claims, err := w.Env.Sessions.Signer.Verify(out.Tokens.AccessToken); err != nil || !claims.MFA {
		t.Fatalf("claims = %+v, %v", claims, err)
	}
}

func TestMalformedRequests(t *testing.T) {
	w := newWorld(t)
	c := w.orgUser(t, fixture.Member{})
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, `{"id":"x","type":"public-key"}`), 400)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/passkeys/register/verify", c.Token, `[]`), 400)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/verify", "", map[string]any{"credential": map[string]any{}}), 400)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/verify", "", map[string]any{"tempToken": "mfa_x"}), 400)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/options", "", map[string]any{"tempToken": "mfa_unknown"}), 401)
	fixture.Expect(t, w.do(t, "POST", "/api/v1/auth/mfa/passkey/options", "", map[string]any{"tempToken": "x", "extra": 1}), 400)
	fixture.Expect(t, w.do(t, "PUT", "/api/v1/auth/passkeys/AAAA", c.Token, nil), 405)
	// An id too long for its DynamoDB sort key (1024 bytes) is a malformed id, not
	// a read that DynamoDB would refuse (the emulator does not enforce the limit).
	long := b64(make([]byte, 1000))
	res := fixture.Expect(t, w.do(t, "PATCH", "/api/v1/auth/passkeys/"+long, c.Token, map[string]string{"name": "x"}), 400)
	if !strings.Contains(string(res.Body), `"id"`) {
		t.Fatalf("400 does not name id: %s", res.Body)
	}
}

// ec2Credential is a virtual authenticator credential whose P-256 coordinates
// both encode to 32 bytes. virtualwebauthn encodes them with big.Int.Bytes(), so
// about one key in 128 would have a 31-byte coordinate that the verifier rightly
// refuses; drawing until both are full length keeps every test deterministic.
func ec2Credential() virtualwebauthn.Credential {
	for {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			panic(err)
		}
		if len(k.X.Bytes()) != 32 || len(k.Y.Bytes()) != 32 {
			continue
		}
		der, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			panic(err)
		}
		return virtualwebauthn.NewCredentialWithImportedKey(virtualwebauthn.KeyTypeEC2, der)
	}
}

// Every drawn credential registers: 512 of them carry full-length coordinates.
func TestEC2CredentialsHaveFullLengthCoordinates(t *testing.T) {
	for i := 0; i < 512; i++ {
		c := ec2Credential()
		parsed, err := x509.ParsePKCS8PrivateKey(c.Key.Data)
		if err != nil {
			t.Fatal(err)
		}
		k := parsed.(*ecdsa.PrivateKey)
		if len(k.X.Bytes()) != 32 || len(k.Y.Bytes()) != 32 {
			t.Fatalf("key %d has a short coordinate", i)
		}
	}
}
