package signin_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/audit"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/signin"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/tenant"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
)

func post(t *testing.T, h http.Handler, path string, body any, ip string) fixture.Response {
	t.Helper()
	return fixture.Do(t, h, fixture.Request{Method: "POST", Path: path, Body: body, RemoteAddr: ip + ":4000"})
}

func register(t *testing.T, s setup, email, password, ip string) fixture.Response {
	t.Helper()
	return post(t, s.h, "/api/v1/auth/register", map[string]string{"name": "New Person", "email": email, "password": password}, ip)
}

func registerPartner(t *testing.T, s setup, partner, email, password, ip string) fixture.Response {
	t.Helper()
	return post(t, s.h, "/api/v1/auth/register-partner",
		map[string]string{"partnerName": partner, "name": "Owner", "email": email, "password": password}, ip)
}

func fieldErrors(t *testing.T, res fixture.Response) map[string]any {
	t.Helper()
	body := res.JSON(t)
	d, _ := body["details"].(map[string]any)
	fe, ok := d["fieldErrors"].(map[string]any)
	if !ok {
		t.Fatalf("no fieldErrors: %s", res.Body)
	}
	return fe
}

func accessToken(t *testing.T, res fixture.Response) string {
	t.Helper()
	tok, _ := res.JSON(t)["tokens"].(map[string]any)["accessToken"].(string)
	if tok == "" {
		t.Fatalf("no access token: %s", res.Body)
	}
	return tok
}

func uniqueEmail(tag string) string { return tag + "-" + uuid.NewString()[:8] + "@example.com" }

func TestRegistrationDisabledAnswers404(t *testing.T) {
	t.Parallel()
	s := newSetup(t) // ENABLE_REGISTRATION unset
	for _, path := range []string{"/api/v1/auth/register", "/api/v1/auth/register-partner"} {
		for _, body := range []any{
			map[string]string{"partnerName": "P", "name": "N", "email": "x@example.com", "password": pw},
			"not json", // the body is not even read
		} {
			res := fixture.Expect(t, post(t, s.h, path, body, "198.51.100.20"), 404)
			fixture.Budget(t, res, 0)
			if got := res.JSON(t)["error"]; got != "Not Found" {
				t.Fatalf("%s: error = %v", path, got)
			}
		}
	}
}

func TestRegisterCreatesUnscopedUserAndSignsIn(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	res := fixture.Expect(t, register(t, s, " Newbie@Example.com ", pw, "198.51.100.21"), 201)
	fixture.Budget(t, res, 5) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	body := res.JSON(t)
	u := body["user"].(map[string]any)
	if u["email"] != "newbie@example.com" || u["status"] != "active" || u["name"] != "New Person" {
		t.Fatalf("user = %v", u)
	}
	if _, scoped := u["scope"]; scoped {
		t.Fatalf("registered user has a scope: %v", u)
	}
	if c := refreshCookie(t, res); !c.HttpOnly || !c.Secure || c.Path != signin.CookiePath {
		t.Fatalf("cookie = %+v", c)
	}
	if strings.Contains(string(res.Body), pw) || strings.Contains(string(res.Body), "$argon2id$") {
		t.Fatal("password leaked")
	}
	// The token works on an authenticated route, and the password signs in.
	me := fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: accessToken(t, res)}), 200)
	if me.JSON(t)["user"].(map[string]any)["id"] != u["id"] {
		t.Fatalf("me = %s", me.Body)
	}
	fixture.Expect(t, login(t, s, "newbie@example.com", pw, "198.51.100.22"), 200)
	// No membership was created.
	ms, err := s.env.Users.Memberships(t.Context(), u["id"].(string))
	if err != nil || len(ms) != 0 {
		t.Fatalf("memberships = %v, %v", ms, err)
	}
	recs, err := audit.List(t.Context(), s.env.Store, "SYSTEM", 20)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, r := range recs {
		if r.Action == "user.register" && r.ResourceID == u["id"] {
			found = r.Actor.ID == u["id"] && r.IP == "198.51.100.21"
		}
	}
	if !found {
		t.Fatalf("no user.register record: %+v", recs)
	}
}

func TestRegisterValidationNamesTheField(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	cases := []struct {
		body  map[string]string
		field string
	}{
		{map[string]string{"name": "N", "email": uniqueEmail("v"), "password": "password"}, "password"},   // common
		{map[string]string{"name": "N", "email": uniqueEmail("v"), "password": "aaaaaaaaaa"}, "password"}, // weak
		{map[string]string{"name": "N", "email": uniqueEmail("v"), "password": "Sh0rt!"}, "password"},     // short
		{map[string]string{"name": " ", "email": uniqueEmail("v"), "password": pw}, "name"},
		{map[string]string{"name": "N", "email": "not-an-email", "password": pw}, "email"},
	}
	for _, c := range cases {
		res := fixture.Expect(t, post(t, s.h, "/api/v1/auth/register", c.body, "198.51.100.23"), 400)
		fixture.Budget(t, res, 0)
		if fe := fieldErrors(t, res); fe[c.field] == nil || len(fe) != 1 {
			t.Fatalf("%v: fieldErrors = %v, want %s", c.body, fe, c.field)
		}
	}
	// Unknown fields are refused.
	fixture.Expect(t, post(t, s.h, "/api/v1/auth/register",
		map[string]string{"name": "N", "email": uniqueEmail("v"), "password": pw, "role": "admin"}, "198.51.100.23"), 400)
}

func TestRegisterDuplicateEmailIs409(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	// An existing user (the fixture's, any case) and a freshly registered one.
	res := fixture.Expect(t, register(t, s, "ALICE@example.com", "Another-Strong-Pass-42", "198.51.100.24"), 409)
	fixture.Budget(t, res, 3) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	if got := res.JSON(t)["error"]; got != "Email is already registered" {
		t.Fatalf("error = %v", got)
	}
	if strings.Contains(string(res.Body), s.user.UserID) {
		t.Fatal("409 reveals the account id")
	}
	fixture.Expect(t, register(t, s, "dup@example.com", pw, "198.51.100.24"), 201)
	fixture.Expect(t, register(t, s, "dup@example.com", "Another-Strong-Pass-42", "198.51.100.24"), 409)
	// The original password still works: nothing was overwritten.
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "198.51.100.25"), 200)
	fixture.Expect(t, login(t, s, "dup@example.com", pw, "198.51.100.25"), 200)
}

func TestRegisterRateLimitPerIP(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	for i := 0; i < 5; i++ {
		fixture.Expect(t, register(t, s, uniqueEmail("rl"), pw, "203.0.113.30"), 201)
	}
	res := fixture.Expect(t, register(t, s, uniqueEmail("rl"), pw, "203.0.113.30"), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 || res.Header.Get("Retry-After") == "" {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
	// Another source IP is not affected; X-Forwarded-For cannot dodge the limit.
	fixture.Expect(t, register(t, s, uniqueEmail("rl"), pw, "203.0.113.31"), 201)
	spoof := fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/register", RemoteAddr: "203.0.113.30:1",
		Header: map[string]string{"X-Forwarded-For": "192.0.2.99"},
		Body:   map[string]string{"name": "N", "email": uniqueEmail("rl"), "password": pw}})
	fixture.Expect(t, spoof, 429)
}

func TestRegisterPartnerCreatesPartnerRoleAndUser(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	res := fixture.Expect(t, registerPartner(t, s, " Acme MSP ", "owner@acme.example.com", pw, "198.51.100.40"), 201)
	fixture.Budget(t, res, 5) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	u := res.JSON(t)["user"].(map[string]any)
	if u["scope"] != "partner" || u["orgAccess"] != "all" || u["partnerId"] == nil || u["roleId"] == nil {
		t.Fatalf("user = %v", u)
	}
	refreshCookie(t, res)
	ctx := t.Context()
	partnerID, roleID, userID := u["partnerId"].(string), u["roleId"].(string), u["id"].(string)

	var p tenant.Partner
	pk := tenant.PartnerKeys(partnerID)
	if err := s.env.Store.Get(ctx, pk.PK, pk.SK, &p); err != nil || p.Name != "Acme MSP" {
		t.Fatalf("partner = %+v, %v", p, err)
	}
	r, err := s.env.Roles.Get(ctx, role.PartnerOwner(partnerID), roleID)
	if err != nil {
		t.Fatal(err)
	}
	if r.IsSystem || !r.ForceMFA || len(r.Permissions) != 1 || r.Permissions[0] != "*:*" ||
		r.PartnerID == nil || *r.PartnerID != partnerID || r.Scope != authz.ScopePartner || r.Name != signin.PartnerAdminRoleName {
		t.Fatalf("role = %+v", r)
	}
	if byID, err := s.env.Roles.ByID(ctx, roleID); err != nil || byID.Owner != role.PartnerOwner(partnerID) {
		t.Fatalf("role by id (GSI1) = %+v, %v", byID, err)
	}
	ms, err := s.env.Users.Memberships(ctx, userID)
	if err != nil || len(ms) != 1 || ms[0].RoleOwner != role.PartnerOwner(partnerID) || ms[0].OrgAccess != authz.OrgAccessAll {
		t.Fatalf("memberships = %+v, %v", ms, err)
	}
	recs, err := audit.List(ctx, s.env.Store, audit.Tenant("", partnerID), 20)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, rec := range recs {
		seen[rec.Action] = true
	}
	for _, a := range []string{"partner.register", "role.create", "user.register", "user.login"} {
		if !seen[a] {
			t.Fatalf("audit lacks %s: %v", a, seen)
		}
	}
	if dump := fmt.Sprintf("%+v", recs); strings.Contains(dump, pw) || strings.Contains(dump, "argon2") {
		t.Fatalf("audit holds a password: %s", dump)
	}
	var stored user.User
	k := user.ProfileKey(userID)
	if err := s.env.Store.Get(ctx, k.PK, k.SK, &stored); err != nil || !strings.HasPrefix(stored.PasswordHash, "$argon2id$") {
		t.Fatalf("stored user = %+v, %v", stored, err)
	}
	// The role resolves for the authenticator: an enrolment route answers, and
	// Force MFA (inherited from the copy) demands TOTP elsewhere.
	tok := accessToken(t, res)
	me := fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "GET", Path: "/api/v1/auth/me", Token: tok}), 200)
	if me.JSON(t)["user"].(map[string]any)["partnerId"] != partnerID {
		t.Fatalf("me = %s", me.Body)
	}
	fixture.Expect(t, fixture.Do(t, s.h, fixture.Request{Method: "POST", Path: "/api/v1/auth/change-password", Token: tok,
		Body: map[string]string{"currentPassword": pw, "newPassword": "Brand-New-Passphrase-77"}}), 428)
}

func partners(t *testing.T, s setup) int {
	t.Helper()
	var ps []tenant.Partner
	if err := s.env.Store.AllInto(t.Context(), store.Query{Index: store.GSI2, PK: "PARTNERS"}, &ps); err != nil {
		t.Fatal(err)
	}
	return len(ps)
}

func TestRegisterPartnerWithTakenEmailWritesNothing(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	before := partners(t, s)
	res := fixture.Expect(t, registerPartner(t, s, "Shadow MSP", "alice@example.com", "Another-Strong-Pass-42", "198.51.100.41"), 409)
	fixture.Budget(t, res, 3) // +1: each rate-limit row new to its subject costs a count that finds no row and the write that makes it (shared/ratelimit)
	if after := partners(t, s); after != before {
		t.Fatalf("partners %d -> %d: a failed signup left a partner", before, after)
	}
	// Nothing of the attempt in any audit log of a new partner, and alice is unchanged.
	ms, err := s.env.Users.Memberships(t.Context(), s.user.UserID)
	if err != nil || len(ms) != 1 || ms[0].Scope != authz.ScopeOrg {
		t.Fatalf("alice's memberships = %+v, %v", ms, err)
	}
	fixture.Expect(t, login(t, s, "alice@example.com", pw, "198.51.100.42"), 200)
}

func TestRegisterPartnerValidationAndRateLimit(t *testing.T) {
	t.Parallel()
	s := newSetup(t, "ENABLE_REGISTRATION", "true")
	res := fixture.Expect(t, registerPartner(t, s, "", uniqueEmail("p"), pw, "203.0.113.40"), 400)
	if fe := fieldErrors(t, res); fe["partnerName"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	res = fixture.Expect(t, registerPartner(t, s, "P", uniqueEmail("p"), "12345678", "203.0.113.40"), 400)
	if fe := fieldErrors(t, res); fe["password"] == nil {
		t.Fatalf("fieldErrors = %v", fe)
	}
	for i := 0; i < 3; i++ {
		fixture.Expect(t, registerPartner(t, s, fmt.Sprintf("MSP %d", i), uniqueEmail("p"), pw, "203.0.113.40"), 201)
	}
	res = fixture.Expect(t, registerPartner(t, s, "MSP 4", uniqueEmail("p"), pw, "203.0.113.40"), 429)
	if ra, ok := res.JSON(t)["retryAfter"].(float64); !ok || ra < 1 {
		t.Fatalf("retryAfter missing: %s", res.Body)
	}
	// The partner limit is its own: plain registration from that IP still works.
	fixture.Expect(t, register(t, s, uniqueEmail("p"), pw, "203.0.113.40"), 201)
}
