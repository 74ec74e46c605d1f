package session

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gale-rmm/gale/shared/authz"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

func signer(at time.Time) Signer {
	return Signer{Secret: []byte("test-secret-test-secret-test-secret"), Now: func() time.Time { return at }}
}

// golden is an HS256 token computed outside Go (testdata/README.md). A change in
// claim names, audience or signing breaks it, as it would break every client.
func golden(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("testdata/access-token.golden")
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func goldenClaims() Claims {
	return Claims{SessionID: "22222222-2222-4222-8222-222222222222", Scope: authz.ScopeOrg,
		OrgID: "33333333-3333-4333-8333-333333333333", MFA: true}
}

func TestIssueMatchesGolden(t *testing.T) {
	tok, err := signer(t0).Issue("11111111-1111-4111-8111-111111111111", goldenClaims())
	if err != nil {
		t.Fatal(err)
	}
	if want := golden(t); tok != want {
		t.Fatalf("token changed:\n got %s\nwant %s", tok, want)
	}
	c, err := signer(t0.Add(14 * time.Minute)).Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if c.Subject != "11111111-1111-4111-8111-111111111111" || !c.MFA || c.Scope != authz.ScopeOrg || c.SessionID == "" {
		t.Fatalf("claims = %+v", c)
	}
}

func TestVerifyRefuses(t *testing.T) {
	s := signer(t0)
	golden := golden(t)
	other := Signer{Secret: []byte("another-secret-another-secret-xx"), Now: s.Now}
	forged, _ := other.Issue("u", goldenClaims())
	noneTok, _ := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": "u", "sid": "s", "aud": Audience,
		"exp": t0.Add(time.Hour).Unix()}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	wrongAud, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u", "sid": "s", "aud": "other",
		"exp": t0.Add(time.Hour).Unix()}).SignedString(s.Secret)
	noExp, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u", "sid": "s", "aud": Audience}).SignedString(s.Secret)
	hs512, _ := jwt.NewWithClaims(jwt.SigningMethodHS512, jwt.MapClaims{"sub": "u", "sid": "s", "aud": Audience,
		"exp": t0.Add(time.Hour).Unix()}).SignedString(s.Secret)
	cases := map[string]struct {
		tok string
		at  time.Time
	}{
		"expired":        {golden, t0.Add(16 * time.Minute)},
		"other secret":   {forged, t0},
		"alg none":       {noneTok, t0},
		"wrong audience": {wrongAud, t0},
		"no expiry":      {noExp, t0},
		"other alg":      {hs512, t0},
		"garbage":        {"not.a.token", t0},
		"truncated":      {golden[:len(golden)-4], t0},
		"tampered":       {strings.Replace(golden, ".eyJ", ".eyK", 1), t0},
	}
	for name, c := range cases {
		if _, err := signer(c.at).Verify(c.tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRefreshTokenFormat(t *testing.T) {
	tok, hash, err := newRefresh("11111111-1111-4111-8111-111111111111", "22222222-2222-4222-8222-222222222222")
	if err != nil {
		t.Fatal(err)
	}
	uid, sid, ok := ParseRefresh(tok)
	if !ok || uid != "11111111-1111-4111-8111-111111111111" || sid != "22222222-2222-4222-8222-222222222222" {
		t.Fatalf("parse %q: %v %s %s", tok, ok, uid, sid)
	}
	if hash != hashToken(tok) || len(hash) != 64 {
		t.Fatalf("hash %q", hash)
	}
	for _, bad := range []string{"", "a.b.c", "x", tok + ".extra"} {
		if _, _, ok := ParseRefresh(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The audience is the string "gale-api", not a one-element array.
func TestAudienceIsAString(t *testing.T) {
	tok, err := signer(t0).Issue("11111111-1111-4111-8111-111111111111", goldenClaims())
	if err != nil {
		t.Fatal(err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		t.Fatal(err)
	}
	if aud, ok := claims["aud"].(string); !ok || aud != "gale-api" {
		t.Fatalf("aud = %#v, want the string gale-api", claims["aud"])
	}
}
