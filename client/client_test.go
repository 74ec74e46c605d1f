package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/client"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const password = "correct horse battery staple"

// site is an organization whose admin signs in with a password and TOTP,
// served over HTTP with every exchange held to the document (fixture.Server).
type site struct {
	env       *testenv.Env
	url       string
	partnerID string
	orgID     string
	email     string
	secret    string
	// world drives the fixtures' own calls as the admin (fixture token).
	world *fixture.World
}

func newSite(t testing.TB) *site {
	t.Helper()
	env := testenv.New(t)
	p := fixture.Partner(t, env, "Partner")
	o := fixture.Org(t, env, p.ID, "Org")
	email := "admin-" + uuid.NewString()[:8] + "@example.com"
	c := fixture.User(t, env, fixture.Member{Email: email, Password: password, Scope: authz.ScopeOrg,
		PartnerID: p.ID, OrgID: o.ID, RoleID: role.OrgAdminID, MFA: true})
	api := fixture.API(t, env)
	secret := fixture.EnrolTOTP(t, env, api, c.Token)
	// The enrolment spent this step's code; sign-ins use the next one.
	env.Clock.Advance(30 * time.Second)
	w := &fixture.World{Env: env, API: api, Tokens: map[string]string{"admin": c.Token}}
	return &site{env: env, url: fixture.Server(t, api).URL, partnerID: p.ID, orgID: o.ID, email: email, secret: secret, world: w}
}

// device enrols a device named host in the organization and returns its id.
func (s *site) device(t testing.TB, host string) string {
	t.Helper()
	id, _ := s.world.Device(t, "admin", s.orgID, "", host)
	return id
}

// authenticator answers the current TOTP code, as an app would.
func (s *site) authenticator(t testing.TB) func(context.Context) (string, error) {
	return func(context.Context) (string, error) { return fixture.TOTPCode(t, s.env, s.secret), nil }
}

// session is a client signed in as a new member of the organization with
// roleID; mfa tells whether the session passed a second factor.
func (s *site) session(t testing.TB, roleID string, mfa bool) *client.Gale {
	t.Helper()
	c := fixture.User(t, s.env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: s.partnerID, OrgID: s.orgID, RoleID: roleID, MFA: mfa})
	g, err := client.New(s.url, client.WithTokens(c.Token, c.RefreshToken))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func (s *site) signIn(t testing.TB) *client.Gale {
	t.Helper()
	g, err := client.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SignIn(context.Background(), s.email, password, s.authenticator(t)); err != nil {
		t.Fatal(err)
	}
	return g
}

func TestSignInAsksForTheTOTPCode(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	g, err := client.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.SignIn(ctx, s.email, password, nil); !errors.Is(err, client.ErrCodeRequired) {
		t.Fatalf("sign-in without a code: %v, want ErrCodeRequired", err)
	}
	wrong := func(context.Context) (string, error) { return "000000", nil }
	var apiErr *client.APIError
	if err := g.SignIn(ctx, s.email, password, wrong); !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message != "Invalid MFA code" {
		t.Fatalf("wrong code: %v, want 401 Invalid MFA code", err)
	}
	if err := g.SignIn(ctx, s.email, password, s.authenticator(t)); err != nil {
		t.Fatal(err)
	}
	access, refresh := g.Tokens()
	if access == "" || refresh == "" {
		t.Fatalf("tokens %q %q: want both", access, refresh)
	}
	me, err := client.OK(g.AuthMeWithResponse(ctx))
	if err != nil || me.JSON200 == nil {
		t.Fatalf("me: %v", err)
	}
}

func TestAnExpiredAccessTokenIsRefreshedOnce(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	g := s.signIn(t)
	access, refresh := g.Tokens()
	s.env.Clock.Advance(16 * time.Minute) // past the access token's 15 minutes
	if _, err := client.OK(g.AuthMeWithResponse(ctx)); err != nil {
		t.Fatalf("me after expiry: %v", err)
	}
	access2, refresh2 := g.Tokens()
	if access2 == access || refresh2 == refresh || refresh2 == "" {
		t.Fatal("the tokens were not refreshed and rotated")
	}
	// Requests refused together refresh once: without that, all but one
	// would present the spent refresh token (409 race_lost). A body is sent
	// again with the new token.
	s.env.Clock.Advance(16 * time.Minute)
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for i := range 4 {
		wg.Go(func() {
			_, err := client.OK(g.CreateApiKeyWithResponse(ctx, client.ApiKeyCreateRequest{OrgId: uuid.MustParse(s.orgID), Name: fmt.Sprint("k", i)}))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("create after expiry: %v", err)
		}
	}
	_, before := g.Tokens()
	if err := g.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	if _, after := g.Tokens(); after == before {
		t.Fatal("Refresh kept the refresh token")
	}
	// A refresh that fails ends the call with its own answer (no second try).
	stale, err := client.New(s.url, client.WithTokens(access, "not-a-refresh-token"))
	if err != nil {
		t.Fatal(err)
	}
	var apiErr *client.APIError
	if _, err := client.OK(stale.AuthMeWithResponse(ctx)); !errors.As(err, &apiErr) || apiErr.Status != 401 || apiErr.Message == "" {
		t.Fatalf("expired token with an unknown refresh token: %v, want 401", err)
	}
}

func TestErrorsCarryStatusCodeAndFieldErrors(t *testing.T) {
	s := newSite(t)
	g := s.signIn(t)
	_, err := client.OK(g.CreateApiKeyWithResponse(context.Background(), client.ApiKeyCreateRequest{OrgId: uuid.MustParse(s.orgID), Name: ""}))
	var apiErr *client.APIError
	if !errors.As(err, &apiErr) {
		t.Fatalf("err %v, want *APIError", err)
	}
	if apiErr.Status != http.StatusBadRequest || apiErr.Code != "validation_failed" || apiErr.Message != "Validation failed" ||
		len(apiErr.FieldErrors["name"]) == 0 || apiErr.RequestID == "" {
		t.Fatalf("error %+v", apiErr)
	}
}

func TestAPIKeyAuthAndPages(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	g := s.signIn(t)
	org := uuid.MustParse(s.orgID)
	var raw string
	for _, name := range []string{"one", "two", "three"} {
		k, err := client.OK(g.CreateApiKeyWithResponse(ctx, client.ApiKeyCreateRequest{OrgId: org, Name: name, Scopes: &[]string{"devices:read"}}))
		if err != nil {
			t.Fatal(err)
		}
		raw = k.JSON201.Key
	}
	requests := 0
	var names []string
	for k, err := range client.All(func(page int, cursor *string) ([]client.ApiKey, client.Pagination, error) {
		requests++
		limit := 2
		r, err := client.OK(g.ListApiKeysWithResponse(ctx, &client.ListApiKeysParams{Page: &page, Limit: &limit, Cursor: cursor}))
		if err != nil {
			return nil, client.Pagination{}, err
		}
		return r.JSON200.Data, r.JSON200.Pagination, nil
	}) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, k.Name)
	}
	if len(names) != 3 || requests != 2 {
		t.Fatalf("walked %v in %d requests, want 3 keys in 2", names, requests)
	}
	kc, err := client.New(s.url, client.WithAPIKey(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.OK(kc.ListDevicesWithResponse(ctx, &client.ListDevicesParams{})); err != nil {
		t.Fatalf("devices with the key: %v", err)
	}
	// Key management refuses keys: the key's own answer, not a refresh.
	var apiErr *client.APIError
	if _, err := client.OK(kc.ListApiKeysWithResponse(ctx, &client.ListApiKeysParams{})); !errors.As(err, &apiErr) || apiErr.Status/100 != 4 {
		t.Fatalf("keys with a key: %v, want a refusal", err)
	}
}

// Refusals say what to do next (issue 35): *APIError carries details.required,
// anyOf, hint and enrollUrl as the API sends them.
func TestErrorsSayWhatToDoNext(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	org := uuid.MustParse(s.orgID)
	// A session signed in without a second factor: MFA_REQUIRED with the
	// enrolment route and the hint that a new sign-in is needed.
	var apiErr *client.APIError
	noMFA := s.session(t, role.OrgAdminID, false)
	_, err := client.OK(noMFA.CreateApiKeyWithResponse(ctx, client.ApiKeyCreateRequest{OrgId: org, Name: "k"}))
	if !errors.As(err, &apiErr) || apiErr.Code != "MFA_REQUIRED" || apiErr.EnrollURL != "/api/v1/auth/mfa/setup" ||
		!strings.Contains(apiErr.Hint, "sign in again") {
		t.Fatalf("key creation without MFA: %#v", err)
	}
	// A viewer lacks devices:write: the 403 names it.
	viewer := s.session(t, role.OrgViewerID, true)
	_, err = client.OK(viewer.DecommissionDeviceWithResponse(ctx, uuid.MustParse(s.device(t, "ws-01"))))
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusForbidden || apiErr.Required != "devices:write" || apiErr.Hint != "" {
		t.Fatalf("viewer decommission: %#v", err)
	}
	// An API key sent as a bearer token: the hint names X-API-Key.
	admin := s.signIn(t)
	k, err := client.OK(admin.CreateApiKeyWithResponse(ctx, client.ApiKeyCreateRequest{OrgId: org, Name: "k", Scopes: &[]string{"devices:read"}}))
	if err != nil {
		t.Fatal(err)
	}
	bearer, err := client.New(s.url, client.WithTokens(k.JSON201.Key, ""))
	if err != nil {
		t.Fatal(err)
	}
	_, err = client.OK(bearer.ListDevicesWithResponse(ctx, &client.ListDevicesParams{}))
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusUnauthorized || !strings.Contains(apiErr.Hint, "X-API-Key") {
		t.Fatalf("key as bearer: %#v", err)
	}
}

// The envelope's enrollUrl (428) and details.anyOf are read as well; a
// details that is not an object (a passkey refusal's reason) is no hint.
func TestErrorDetailsAreDecoded(t *testing.T) {
	bodies := map[string]string{
		"/428": `{"error":"mfa_enrollment_required","code":"mfa_enrollment_required","requestId":"r","enrollUrl":"/api/v1/auth/mfa/setup"}`,
		"/403": `{"error":"Insufficient permissions","code":"forbidden","requestId":"r","details":{"required":"devices:read","anyOf":["devices:read","devices:write"]}}`,
		"/400": `{"error":"Passkey verification failed","code":"bad_request","requestId":"r","details":"signature"}`,
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(map[string]int{"/428": 428, "/403": 403, "/400": 400}[r.URL.Path])
		fmt.Fprint(w, bodies[r.URL.Path])
	}))
	defer srv.Close()
	get := func(path string) *client.APIError {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		r, err := client.ParseAuthMeResult(res)
		if err != nil {
			t.Fatal(err)
		}
		_, err = client.OK(r, nil)
		var apiErr *client.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("%s: %v", path, err)
		}
		return apiErr
	}
	if e := get("/428"); e.EnrollURL != "/api/v1/auth/mfa/setup" {
		t.Errorf("428: %+v", e)
	}
	if e := get("/403"); e.Required != "devices:read" || len(e.AnyOf) != 2 || e.AnyOf[1] != "devices:write" {
		t.Errorf("403: %+v", e)
	}
	if e := get("/400"); e.Message != "Passkey verification failed" || e.Hint != "" || e.Code != "bad_request" {
		t.Errorf("400: %+v", e)
	}
}

// A TOTP code already used is refused with a hint (CodeUsed) and SignIn asks
// for the next code on the same temp token; a wrong code is not asked again.
func TestSignInAsksAgainForAUsedCode(t *testing.T) {
	s := newSite(t)
	ctx := context.Background()
	s.signIn(t) // spends this step's code
	g, err := client.New(s.url)
	if err != nil {
		t.Fatal(err)
	}
	asked := 0
	code := func(context.Context) (string, error) {
		asked++
		if asked > 1 {
			s.env.Clock.Advance(30 * time.Second) // the user waits for the next code
		}
		return fixture.TOTPCode(t, s.env, s.secret), nil
	}
	if err := g.SignIn(ctx, s.email, password, code); err != nil || asked != 2 {
		t.Fatalf("sign-in with the used code first: %v after %d codes, want success after 2", err, asked)
	}
	asked = 0
	wrong := func(context.Context) (string, error) { asked++; return "000000", nil }
	if err := g.SignIn(ctx, s.email, password, wrong); err == nil || client.CodeUsed(err) || asked != 1 {
		t.Fatalf("wrong code: %v after %d codes, want one refusal", err, asked)
	}
	// Used codes only, three times: the refusal ends the sign-in.
	asked = 0
	s.env.Clock.Advance(5*time.Minute + 5*time.Second) // a fresh window of the verify limit (5 in 5 min)
	used := fixture.TOTPCode(t, s.env, s.secret)
	s.signIn(t)
	again := func(context.Context) (string, error) { asked++; return used, nil }
	if err := g.SignIn(ctx, s.email, password, again); !client.CodeUsed(err) || asked != 3 {
		t.Fatalf("a used code every time: %v after %d codes, want CodeUsed after 3", err, asked)
	}
}
