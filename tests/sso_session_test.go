package tests

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/tests/fixture"
)

// accountWide is every operation that changes the account as a whole
// (docs/decisions.md#sso-sessions: password, TOTP, SMS, passkeys, recovery
// codes, name, account deletion), with a body the route decodes.
var accountWide = map[operation]any{
	{http.MethodPost, "/api/v1/auth/change-password"}:                map[string]any{"currentPassword": "Whatever-1", "newPassword": "Brand-New-Pass-42"},
	{http.MethodPost, "/api/v1/auth/mfa/setup"}:                      nil,
	{http.MethodPost, "/api/v1/auth/mfa/verify"}:                     map[string]any{"code": "123456"},
	{http.MethodPost, "/api/v1/auth/mfa/enable"}:                     map[string]any{"code": "123456"},
	{http.MethodPost, "/api/v1/auth/mfa/disable"}:                    map[string]any{"code": "123456"},
	{http.MethodPost, "/api/v1/auth/mfa/recovery-codes"}:             map[string]any{"code": "123456"},
	{http.MethodPost, "/api/v1/auth/phone/verify"}:                   map[string]any{"phoneNumber": "+14155550100"},
	{http.MethodPost, "/api/v1/auth/phone/confirm"}:                  map[string]any{"code": "123456"},
	{http.MethodPost, "/api/v1/auth/mfa/sms/enable"}:                 nil,
	{http.MethodPost, "/api/v1/auth/mfa/sms/send"}:                   nil,
	{http.MethodPost, "/api/v1/auth/passkeys/register/options"}:      map[string]any{"currentPassword": "Whatever-1"},
	{http.MethodPost, "/api/v1/auth/passkeys/register/verify"}:       map[string]any{"id": "AAAA"},
	{http.MethodPatch, "/api/v1/auth/passkeys/{id}"}:                 map[string]any{"name": "renamed"},
	{http.MethodDelete, "/api/v1/auth/passkeys/{id}"}:                map[string]any{"currentPassword": "Whatever-1"},
	{http.MethodPatch, "/api/v1/users/me"}:                           map[string]any{"name": "Renamed by the IdP"},
	{http.MethodPost, "/api/v1/auth/sessions/revoke-others"}:         nil,
	{http.MethodPost, "/api/v1/auth/account-deletion-request"}:       map[string]any{},
	{http.MethodPatch, "/api/v1/auth/account-deletion-request/{id}"}: map[string]any{},
}

// documentedAccountWide lists the operations whose 403 is the document's
// ForbiddenAccountChange answer.
func documentedAccountWide(t *testing.T) []operation {
	t.Helper()
	var out []operation
	for o, raw := range documentOps(t) {
		var op struct {
			Responses map[string]struct {
				Ref string `json:"$ref"`
			} `json:"responses"`
		}
		if json.Unmarshal(raw, &op) == nil && strings.HasSuffix(op.Responses["403"].Ref, "/ForbiddenAccountChange") {
			out = append(out, o)
		}
	}
	return out
}

// An SSO session (one /sso/exchange issued: its idp claim names the
// provider) is refused on every account-wide route with 403
// credential_sign_in_required and changes nothing of the account, while a
// session of the account's own password is not refused so; the SSO session
// still reads its own account and acts in its membership. The document marks
// exactly these operations.
func TestSSOSessionRefusedOnEveryAccountWideRoute(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "auth", "auth-passkeys", "users")
	docd := documentedAccountWide(t)
	for op := range accountWide {
		if !slices.Contains(docd, op) {
			t.Errorf("%s %s: the document does not state its credential_sign_in_required 403", op.method, op.path)
		}
	}
	for _, op := range docd {
		if _, ok := accountWide[op]; !ok {
			t.Errorf("%s %s documents credential_sign_in_required but is not walked here", op.method, op.path)
		}
	}

	own := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID,
		Password: "Whatever-1", MFA: true})
	// The session /sso/exchange issues for A's provider (shared/sso's linking
	// test checks the claim on tokens the exchange answers).
	pair, sw, err := w.Env.Sessions.Start(own.UserID, session.Claims{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, MFA: true,
		IdP: "00000000-0000-4000-8000-0000000000aa"}, "127.0.0.1", "test")
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Env.Store.Do(context.Background(), sw); err != nil {
		t.Fatal(err)
	}
	path := func(p string) string {
		p = strings.Replace(p, "/passkeys/{id}", "/passkeys/AAAA", 1)
		return strings.Replace(p, "/account-deletion-request/{id}", "/account-deletion-request/00000000-0000-4000-8000-000000000001", 1)
	}
	ownRows := func() string {
		var keep []string
		for _, l := range strings.Split(fixture.Scan(t, w.Env), "\n") {
			if strings.Contains(l, strings.ToLower(own.UserID)) && !strings.Contains(l, "pk:audit") && !strings.Contains(l, "pk:rl#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	before := ownRows()
	for op, body := range accountWide {
		res := fixture.Do(t, w.API, fixture.Request{Method: op.method, Path: path(op.path), Token: pair.AccessToken, Body: body})
		fixture.ExpectError(t, res, http.StatusForbidden, "credential_sign_in_required")
		if got := res.JSON(t)["error"]; got != "Account changes need a password or passkey sign-in" {
			t.Errorf("%s %s: error %q", op.method, op.path, got)
		}
	}
	if after := ownRows(); after != before {
		t.Errorf("the SSO session changed the account's rows:\nbefore %s\nafter  %s", before, after)
	}
	// It reads its own account and acts in its membership.
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/auth/me", Token: pair.AccessToken}), http.StatusOK)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/users?orgId=" + w.A.ID,
		Token: pair.AccessToken}), http.StatusOK)
	// The account's own password session is never refused so (each route then
	// answers by its own rules).
	for op, body := range accountWide {
		res := fixture.Do(t, w.API, fixture.Request{Method: op.method, Path: path(op.path), Token: own.Token, Body: body})
		if strings.Contains(string(res.Body), "credential_sign_in_required") {
			t.Errorf("%s %s refused a password session: %d %s", op.method, op.path, res.Status, res.Body)
		}
	}
}

// An SSO session's logout ends that session only: the spec's "revoke all
// tokens of the user" would let a tenant's provider end the account's own
// sessions everywhere. A password session's logout still ends them all.
func TestSSOLogoutEndsOnlyItsOwnSession(t *testing.T) {
	t.Parallel()
	w := fixture.NewWorld(t, "auth", "users")
	own := fixture.User(t, w.Env, fixture.Member{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID, RoleID: role.OrgAdminID,
		Password: "Whatever-1", MFA: true})
	start := func(idp string) string {
		pair, sw, err := w.Env.Sessions.Start(own.UserID, session.Claims{Scope: authz.ScopeOrg, PartnerID: w.PX.ID, OrgID: w.A.ID,
			MFA: true, IdP: idp}, "127.0.0.1", "test")
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Env.Store.Do(context.Background(), sw); err != nil {
			t.Fatal(err)
		}
		return pair.AccessToken
	}
	me := func(tok string) int {
		return fixture.Do(t, w.API, fixture.Request{Method: http.MethodGet, Path: "/api/v1/auth/me", Token: tok}).Status
	}
	sso, other := start("00000000-0000-4000-8000-0000000000aa"), start("")
	w.Env.Clock.Advance(time.Second) // a logout's cut-off is later than the tokens it must keep
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/logout", Token: sso}), http.StatusOK)
	if got := me(sso); got != http.StatusUnauthorized {
		t.Errorf("the SSO session after its logout: %d, want 401", got)
	}
	if got := me(own.Token); got != http.StatusOK {
		t.Errorf("the account's password session after an SSO logout: %d, want 200", got)
	}
	if got := me(other); got != http.StatusOK {
		t.Errorf("another session after an SSO logout: %d, want 200", got)
	}
	w.Env.Clock.Advance(time.Second)
	fixture.Expect(t, fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: "/api/v1/auth/logout", Token: own.Token}), http.StatusOK)
	if got := me(other); got != http.StatusUnauthorized {
		t.Errorf("another session after a password session's logout: %d, want 401", got)
	}
}
