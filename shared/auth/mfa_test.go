package auth_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gale-rmm/gale/shared/auth"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// anyKey accepts every API key as an all-powerful key (our own interface, not AWS).
type anyKey struct{}

func (anyKey) AuthenticateKey(context.Context, http.ResponseWriter, *http.Request, string) (*authz.Principal, error) {
	return &authz.Principal{Kind: authz.KindAPIKey, APIKeyID: "k", Scope: authz.ScopeOrg, OrgID: "o",
		KeyScopes: []string{"*"}, Perms: authz.NewSet(authz.AdminAll)}, nil
}

// API keys never satisfy MFA: a "+ MFA" route that accepts keys refuses one with
// 403 `MFA required` (MFA_REQUIRED), unless ENABLE_2FA=false waives MFA.
func TestAPIKeyNeverSatisfiesMFA(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/x", nil)
	r.Header.Set("X-API-Key", "svc_anything")
	a := &auth.Authenticator{Keys: anyKey{}, Enable2FA: true}
	_, err := a.Authenticate(httptest.NewRecorder(), r, httpapi.Route{Access: httpapi.UserOrKey, MFA: true})
	if !errors.Is(err, authz.ErrMFARequired) {
		t.Fatalf("API key on a + MFA route: err = %v, want MFA required", err)
	}
	if _, err := a.Authenticate(httptest.NewRecorder(), r, httpapi.Route{Access: httpapi.UserOrKey}); err != nil {
		t.Fatalf("API key on a route without MFA: %v", err)
	}
	a.Enable2FA = false
	if _, err := a.Authenticate(httptest.NewRecorder(), r, httpapi.Route{Access: httpapi.UserOrKey, MFA: true}); err != nil {
		t.Fatalf("ENABLE_2FA=false waives MFA: %v", err)
	}
}
