package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
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
	env    *testenv.Env
	url    string
	orgID  string
	email  string
	secret string
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
	return &site{env: env, url: fixture.Server(t, api).URL, orgID: o.ID, email: email, secret: secret, world: w}
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
