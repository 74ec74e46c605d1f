package tests

import (
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/session"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// GET /api/v1/.well-known/jwks.json needs no credentials, answers the key set
// the OpenAPI document describes (fixture.Do checks it), and its key verifies
// a token the auth function issued, by the token's kid, with a generic JWT
// library and nothing of Gale's.
func TestJWKSPublishesTheTokenKey(t *testing.T) {
	t.Parallel()
	env := testenv.New(t)
	api := fixture.API(t, env, "auth", "health")
	caller := fixture.User(t, env, fixture.Member{Scope: authz.ScopeNone})

	res := fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: http.MethodGet, Path: session.JWKSPath}), http.StatusOK)
	if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=") {
		t.Errorf("Cache-Control %q", cc)
	}
	fixture.Budget(t, res, 0)
	var set session.JWKS
	res.Decode(t, &set)
	if len(set.Keys) != 1 {
		t.Fatalf("keys %+v", set.Keys)
	}
	keys := map[string]ed25519.PublicKey{}
	for _, k := range set.Keys {
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || k.Alg != "EdDSA" || k.Kty != "OKP" || k.Crv != "Ed25519" || k.Use != "sig" {
			t.Fatalf("key %+v", k)
		}
		keys[k.Kid] = x
	}
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(caller.Token, claims, func(t *jwt.Token) (any, error) {
		kid, _ := t.Header["kid"].(string)
		return keys[kid], nil
	}, jwt.WithValidMethods([]string{"EdDSA"}), jwt.WithAudience(session.Audience), jwt.WithTimeFunc(env.Clock.Now))
	if err != nil || !tok.Valid || claims["sub"] != caller.UserID {
		t.Fatalf("token does not verify with the published key: %v %v", err, claims)
	}

	// Other methods are not routes of the document.
	fixture.Expect(t, fixture.Do(t, api, fixture.Request{Method: http.MethodPost, Path: session.JWKSPath}), http.StatusMethodNotAllowed)
}
