package session

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
)

var t0 = time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)

// vector is one golden key and token of testdata/token-vectors.json, computed
// with OpenSSL and Python (testdata/README.md).
type vector struct {
	Seed      string `json:"seed"`
	X         string `json:"x"`
	Kid       string `json:"kid"`
	PublicHex string `json:"publicHex"`
	Token     string `json:"token"`
}

func vectors(t *testing.T) (old, cur vector) {
	t.Helper()
	raw, err := os.ReadFile("testdata/token-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]vector
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v["old"], v["new"]
}

func ring(t *testing.T, current, previous string) *KeyRing {
	t.Helper()
	r, err := NewKeyRing(1, current, previous)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func signer(r *KeyRing, at time.Time) Signer {
	return Signer{Keys: r, Now: func() time.Time { return at }}
}

func goldenClaims() Claims {
	return Claims{SessionID: "22222222-2222-4222-8222-222222222222", Scope: authz.ScopeOrg,
		OrgID: "33333333-3333-4333-8333-333333333333", MFA: true}
}

const subject = "11111111-1111-4111-8111-111111111111"

func TestKeysMatchVectors(t *testing.T) {
	old, cur := vectors(t)
	for _, v := range []vector{old, cur} {
		k, err := KeyFromSeed(v.Seed)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(k.Public) != v.PublicHex || k.ID != v.Kid || publicJWK(k).X != v.X {
			t.Errorf("key of seed %s: public %x kid %s, want %s %s", v.Seed[:8], k.Public, k.ID, v.PublicHex, v.Kid)
		}
	}
	// RFC 8032 section 7.1, test 1: the seed's public key.
	if old.PublicHex != "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a" {
		t.Errorf("old vector is not RFC 8032 test 1")
	}
	for _, bad := range []string{"", "zz", old.Seed[:62], old.Seed + "00"} {
		if _, err := KeyFromSeed(bad); err == nil {
			t.Errorf("seed %q accepted", bad)
		}
	}
}

func TestIssueMatchesGolden(t *testing.T) {
	old, cur := vectors(t)
	for _, v := range []vector{old, cur} {
		tok, err := signer(ring(t, v.Seed, ""), t0).Issue(subject, goldenClaims())
		if err != nil {
			t.Fatal(err)
		}
		if tok != v.Token {
			t.Fatalf("token changed:\n got %s\nwant %s", tok, v.Token)
		}
		// A verify-only ring that knows the key only as published JWK.
		c, err := signer(published(t, v), t0.Add(14*time.Minute)).Verify(v.Token)
		if err != nil {
			t.Fatal(err)
		}
		if c.Subject != subject || !c.MFA || c.Scope != authz.ScopeOrg || c.SessionID == "" {
			t.Fatalf("claims = %+v", c)
		}
	}
}

// published is a verify-only ring whose published set holds the vectors' keys.
func published(t *testing.T, vs ...vector) *KeyRing {
	t.Helper()
	set := JWKS{Version: 1}
	for _, v := range vs {
		set.Keys = append(set.Keys, JWK{Kty: "OKP", Crv: "Ed25519", X: v.X, Kid: v.Kid, Use: "sig", Alg: "EdDSA"})
	}
	raw, _ := json.Marshal(set)
	r := ring(t, "", "")
	r.Load = func(context.Context) ([]byte, error) { return raw, nil }
	return r
}

func TestVerifyRefuses(t *testing.T) {
	old, cur := vectors(t)
	r := ring(t, cur.Seed, "")
	claims := jwt.MapClaims{"sub": "u", "sid": "s", "aud": Audience, "exp": t0.Add(time.Hour).Unix()}
	sign := func(m jwt.SigningMethod, kid string, key any) string {
		tok := jwt.NewWithClaims(m, claims)
		if kid != "" {
			tok.Header["kid"] = kid
		}
		s, err := tok.SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	curKey, _ := KeyFromSeed(cur.Seed)
	oldKey, _ := KeyFromSeed(old.Seed)
	_, stranger, _ := ed25519.GenerateKey(nil)
	cases := map[string]struct {
		tok string
		at  time.Time
	}{
		"expired": {cur.Token, t0.Add(16 * time.Minute)},
		// The old key is not in this ring (retired, or never known).
		"unknown kid":           {old.Token, t0},
		"kid of another key":    {sign(jwt.SigningMethodEdDSA, cur.Kid, oldKey.private), t0},
		"stranger's key":        {sign(jwt.SigningMethodEdDSA, cur.Kid, stranger), t0},
		"no kid":                {sign(jwt.SigningMethodEdDSA, "", curKey.private), t0},
		"alg none":              {sign(jwt.SigningMethodNone, cur.Kid, jwt.UnsafeAllowNoneSignatureType), t0},
		"HS256 with public key": {sign(jwt.SigningMethodHS256, cur.Kid, []byte(curKey.Public)), t0},
		"HS256 with public x":   {sign(jwt.SigningMethodHS256, cur.Kid, []byte(cur.X)), t0},
		"HS256 with the JWKS":   {sign(jwt.SigningMethodHS256, cur.Kid, mustJSON(t, r.Own())), t0},
		"wrong audience": {func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"sub": "u", "sid": "s", "aud": "other", "exp": t0.Add(time.Hour).Unix()})
			tok.Header["kid"] = cur.Kid
			s, _ := tok.SignedString(curKey.private)
			return s
		}(), t0},
		"no expiry": {func() string {
			tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"sub": "u", "sid": "s", "aud": Audience})
			tok.Header["kid"] = cur.Kid
			s, _ := tok.SignedString(curKey.private)
			return s
		}(), t0},
		"garbage":   {"not.a.token", t0},
		"truncated": {cur.Token[:len(cur.Token)-4], t0},
		"tampered":  {strings.Replace(cur.Token, ".eyJ", ".eyK", 1), t0},
	}
	for name, c := range cases {
		if _, err := signer(r, c.at).Verify(c.tok); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The control: the same ring accepts its own golden token.
	if _, err := signer(r, t0).Verify(cur.Token); err != nil {
		t.Errorf("golden token refused: %v", err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRotation: the new key signs while tokens of the old one still verify;
// once the old key is retired its tokens are refused, in the issuing function
// and in every verifier reading the published keys.
func TestRotation(t *testing.T) {
	old, cur := vectors(t)
	at := t0.Add(time.Minute)

	// Before: old signs.
	before := ring(t, old.Seed, "")
	oldTok, err := signer(before, t0).Issue(subject, goldenClaims())
	if err != nil || oldTok != old.Token {
		t.Fatalf("before: %v", err)
	}

	// Rotate: new is current, old is previous.
	rotated := ring(t, cur.Seed, old.Seed)
	newTok, err := signer(rotated, t0).Issue(subject, goldenClaims())
	if err != nil || newTok != cur.Token {
		t.Fatalf("rotated: signs %v with %v", newTok, err)
	}
	for name, tok := range map[string]string{"old": oldTok, "new": newTok} {
		if _, err := signer(rotated, at).Verify(tok); err != nil {
			t.Errorf("rotated: %s token refused: %v", name, err)
		}
	}
	if got := rotated.Own(); len(got.Keys) != 2 || got.Keys[0].Kid != cur.Kid || got.Keys[1].Kid != old.Kid {
		t.Errorf("rotated JWKS %+v, want current then previous", got)
	}

	// Retire: only new remains.
	retired := ring(t, cur.Seed, "")
	if _, err := signer(retired, at).Verify(oldTok); err == nil {
		t.Error("retired: old token accepted")
	}
	if _, err := signer(retired, at).Verify(newTok); err != nil {
		t.Errorf("retired: new token refused: %v", err)
	}

	// A verifier sees the same through the published set: it re-reads the
	// set when it is older than refreshAfter, so a retired key stops within it.
	now := at
	pub := published(t, cur, old)
	pub.Now = func() time.Time { return now }
	v := Signer{Keys: pub, Now: func() time.Time { return at }}
	for name, tok := range map[string]string{"old": oldTok, "new": newTok} {
		if _, err := v.Verify(tok); err != nil {
			t.Errorf("verifier during rotation: %s token refused: %v", name, err)
		}
	}
	retiredSet := mustJSON(t, retired.Own())
	pub.Load = func(context.Context) ([]byte, error) { return retiredSet, nil }
	now = now.Add(refreshAfter)
	if _, err := v.Verify(oldTok); err == nil {
		t.Error("verifier after retirement: old token accepted")
	}
	if _, err := v.Verify(newTok); err != nil {
		t.Errorf("verifier after retirement: new token refused: %v", err)
	}
}

// A verifier that meets an unknown kid re-reads the published keys, at most
// once per retryAfter, and keeps what it knew when a read fails.
func TestVerifierLearnsNewKeys(t *testing.T) {
	old, cur := vectors(t)
	now := t0
	reads := 0
	sets := map[bool][]byte{false: mustJSON(t, ring(t, old.Seed, "").Own()), true: mustJSON(t, ring(t, cur.Seed, old.Seed).Own())}
	rotated := false
	fail := false
	r := ring(t, "", "")
	r.Now = func() time.Time { return now }
	r.Load = func(context.Context) ([]byte, error) {
		reads++
		if fail {
			return nil, errors.New("unreachable")
		}
		return sets[rotated], nil
	}
	v := Signer{Keys: r, Now: func() time.Time { return t0 }}
	if _, err := v.Verify(old.Token); err != nil || reads != 1 {
		t.Fatalf("first verify: %v after %d reads", err, reads)
	}
	if _, err := v.Verify(cur.Token); err == nil || reads != 1 {
		t.Fatalf("unknown kid within retryAfter: %v after %d reads (want refused, no read)", err, reads)
	}
	rotated = true
	now = now.Add(retryAfter)
	if _, err := v.Verify(cur.Token); err != nil || reads != 2 {
		t.Fatalf("unknown kid after retryAfter: %v after %d reads", err, reads)
	}
	fail = true
	now = now.Add(refreshAfter)
	if _, err := v.Verify(old.Token); err != nil {
		t.Fatalf("a failed re-read forgot the keys: %v", err)
	}
	if got := r.JWKS(context.Background()); len(got.Keys) != 2 {
		t.Errorf("JWKS of a verifier = %+v", got)
	}
}

// A signer publishes its keys before its first token, leaves a higher
// version alone, and replaces the same version's set once a key is retired.
func TestSignerPublishes(t *testing.T) {
	old, cur := vectors(t)
	store := []byte(`{"keys":[]}`)
	puts := 0
	hook := func(r *KeyRing, now *time.Time) {
		r.Now = func() time.Time { return *now }
		r.Load = func(context.Context) ([]byte, error) { return store, nil }
		r.Publish = func(_ context.Context, b []byte) error { puts++; store = b; return nil }
	}
	now := t0
	r, _ := NewKeyRing(2, cur.Seed, old.Seed)
	hook(r, &now)
	if _, err := signer(r, now).Issue(subject, goldenClaims()); err != nil {
		t.Fatal(err)
	}
	var got JWKS
	_ = json.Unmarshal(store, &got)
	if puts != 1 || got.Version != 2 || len(got.Keys) != 2 || got.Keys[0].Kid != cur.Kid {
		t.Fatalf("after first issue: %d puts, %s", puts, store)
	}
	// An old instance (version 1, old key only) never unpublishes the new key.
	stale, _ := NewKeyRing(1, old.Seed, "")
	hook(stale, &now)
	_, _ = signer(stale, now).Issue(subject, goldenClaims())
	if puts != 1 {
		t.Fatalf("a lower version overwrote the set: %s", store)
	}
	// Retirement: version 3 holds only the new key.
	retired, _ := NewKeyRing(3, cur.Seed, "")
	hook(retired, &now)
	_, _ = signer(retired, now).Issue(subject, goldenClaims())
	_ = json.Unmarshal(store, &got)
	if puts != 2 || got.Version != 3 || len(got.Keys) != 1 {
		t.Fatalf("after retirement: %d puts, %s", puts, store)
	}
	// At most one publication check per publishAfter.
	_, _ = signer(retired, now).Issue(subject, goldenClaims())
	if puts != 2 {
		t.Fatalf("published again: %d", puts)
	}
}

func TestVerifyOnlyCannotIssue(t *testing.T) {
	if _, err := signer(ring(t, "", ""), t0).Issue(subject, goldenClaims()); !errors.Is(err, ErrNoSigningKey) {
		t.Fatalf("err = %v", err)
	}
	if _, err := NewKeyRing(1, "", "ab"); err == nil {
		t.Fatal("a previous key without a current one accepted")
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
	_, cur := vectors(t)
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(cur.Token, ".")[1])
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

// The role hint travels as the claim role {owner, id} and comes back from
// Verify (the golden tokens, of no hint, are unchanged: the claim is omitted
// when empty; shared/signin gives a system role none).
func TestRoleHintClaim(t *testing.T) {
	_, cur := vectors(t)
	c := goldenClaims()
	c.Role = &RoleHint{Owner: role.OrgOwner(c.OrgID), ID: "44444444-4444-4444-8444-444444444444"}
	s := signer(ring(t, cur.Seed, ""), t0)
	tok, err := s.Issue(subject, c)
	if err != nil {
		t.Fatal(err)
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(payload, &raw); err != nil {
		t.Fatal(err)
	}
	if h, _ := raw["role"].(map[string]any); h["owner"] != c.Role.Owner || h["id"] != c.Role.ID {
		t.Fatalf("role claim = %#v", raw["role"])
	}
	got, err := s.Verify(tok)
	if err != nil {
		t.Fatal(err)
	}
	if got.Role == nil || *got.Role != *c.Role {
		t.Fatalf("verified role hint = %+v", got.Role)
	}
}
