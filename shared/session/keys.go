package session

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// TokenKey is one Ed25519 token key. Its ID (the `kid` header) is the RFC 7638
// thumbprint of its public JWK, so a key names itself and no registry of ids
// is needed.
type TokenKey struct {
	ID      string
	Public  ed25519.PublicKey
	private ed25519.PrivateKey
}

// KeyFromSeed builds a signing key from a hex-encoded 32-byte Ed25519 seed
// (what the token-signing secret holds: 64 hex digits).
func KeyFromSeed(hexSeed string) (TokenKey, error) {
	seed, err := hex.DecodeString(hexSeed)
	if err != nil || len(seed) != ed25519.SeedSize {
		return TokenKey{}, errors.New("session: a token-signing key is 64 hex digits (a 32-byte Ed25519 seed)")
	}
	priv := ed25519.NewKeyFromSeed(seed)
	pub := priv.Public().(ed25519.PublicKey)
	return TokenKey{ID: Thumbprint(pub), Public: pub, private: priv}, nil
}

// Thumbprint is the RFC 7638 JWK thumbprint of an Ed25519 public key:
// base64url(SHA-256({"crv":"Ed25519","kty":"OKP","x":"<x>"})).
func Thumbprint(pub ed25519.PublicKey) string {
	canon := `{"crv":"Ed25519","kty":"OKP","x":"` + base64.RawURLEncoding.EncodeToString(pub) + `"}`
	sum := sha256.Sum256([]byte(canon))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// JWK is one public key as JSON Web Key (RFC 8037: kty OKP, crv Ed25519).
type JWK struct {
	Kty string `json:"kty"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
}

// JWKS is the published key set: the current key first, then the previous one
// during a rotation. Version orders publications: a signer never overwrites a
// set of a higher version (an old function instance still warm after a
// rotation cannot unpublish the new key).
type JWKS struct {
	Version int   `json:"version,omitempty"`
	Keys    []JWK `json:"keys"`
}

// publicJWK is the JWK of k.
func publicJWK(k TokenKey) JWK {
	return JWK{Kty: "OKP", Crv: "Ed25519", X: base64.RawURLEncoding.EncodeToString(k.Public), Kid: k.ID, Use: "sig", Alg: "EdDSA"}
}

// keys returns the usable Ed25519 keys of the set by kid; malformed entries
// are skipped (and so refuse their tokens).
func (s JWKS) keys() map[string]ed25519.PublicKey {
	out := map[string]ed25519.PublicKey{}
	for _, k := range s.Keys {
		if k.Kty != "OKP" || k.Crv != "Ed25519" {
			continue
		}
		x, err := base64.RawURLEncoding.DecodeString(k.X)
		if err != nil || len(x) != ed25519.PublicKeySize {
			continue
		}
		pub := ed25519.PublicKey(x)
		if Thumbprint(pub) != k.Kid { // a kid names its key; anything else is refused
			continue
		}
		out[k.Kid] = pub
	}
	return out
}

// How often the published keys are re-read: a verifier drops a retired key
// within refreshAfter of its retirement, and an unknown kid (a rotation this
// instance has not seen) triggers at most one read per retryAfter.
const (
	refreshAfter = 5 * time.Minute
	retryAfter   = 30 * time.Second
	publishAfter = 5 * time.Minute
	hookTimeout  = 3 * time.Second
)

// KeyRing holds a function's token keys: the signing keys (current, then
// previous) in the functions that issue tokens, and the published public keys
// in the others, read lazily through Load (never at init).
type KeyRing struct {
	version int
	signing []TokenKey // current first; empty in a verify-only function

	// Load reads the published key set (a JWKS document); nil when every key
	// is local (development, tests).
	Load func(ctx context.Context) ([]byte, error)
	// Publish writes the key set; set only in functions holding signing keys.
	// A signer publishes before its first token and every publishAfter, so a
	// token is verifiable elsewhere by the time its client holds it.
	Publish func(ctx context.Context, jwks []byte) error
	// Now is the ring's clock (time.Now when nil).
	Now func() time.Time

	mu          sync.Mutex
	published   map[string]ed25519.PublicKey
	pubSet      JWKS
	loadedAt    time.Time
	triedAt     time.Time
	publishedAt time.Time
}

// NewKeyRing returns a ring that signs with current and verifies current and
// previous (either may be empty: a verify-only ring has neither). version is
// the token-signing secret's rotation counter.
func NewKeyRing(version int, current, previous string) (*KeyRing, error) {
	r := &KeyRing{version: version}
	if current == "" && previous != "" {
		return nil, errors.New("session: a previous token-signing key without a current one")
	}
	for _, seed := range []string{current, previous} {
		if seed == "" {
			continue
		}
		k, err := KeyFromSeed(seed)
		if err != nil {
			return nil, err
		}
		if len(r.signing) > 0 && r.signing[0].ID == k.ID {
			continue
		}
		r.signing = append(r.signing, k)
	}
	return r, nil
}

// CanSign reports whether the ring holds a private key.
func (r *KeyRing) CanSign() bool { return len(r.signing) > 0 }

func (r *KeyRing) current() *TokenKey {
	if len(r.signing) == 0 {
		return nil
	}
	return &r.signing[0]
}

func (r *KeyRing) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// Own is the key set this ring signs and verifies with (its own keys).
func (r *KeyRing) Own() JWKS {
	s := JWKS{Version: r.version, Keys: []JWK{}}
	for _, k := range r.signing {
		s.Keys = append(s.Keys, publicJWK(k))
	}
	return s
}

// JWKS is the key set to publish at /.well-known/jwks.json: a signer's own
// keys, else the published set as last read.
func (r *KeyRing) JWKS(ctx context.Context) JWKS {
	if r.CanSign() {
		return r.Own()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh(ctx, false)
	if r.pubSet.Keys == nil {
		return JWKS{Keys: []JWK{}}
	}
	return r.pubSet
}

// Lookup returns the public key named kid: one of the ring's own keys, or a
// published one (re-read when older than refreshAfter, and for an unknown kid
// at most once per retryAfter).
func (r *KeyRing) Lookup(ctx context.Context, kid string) (ed25519.PublicKey, bool) {
	for _, k := range r.signing {
		if k.ID == kid {
			return k.Public, true
		}
	}
	if r.Load == nil {
		return nil, false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.refresh(ctx, false)
	if pub, ok := r.published[kid]; ok {
		return pub, true
	}
	r.refresh(ctx, true)
	pub, ok := r.published[kid]
	return pub, ok
}

// refresh re-reads the published set when it is stale or, with unknown, when
// an unknown kid was seen and the last attempt is older than retryAfter.
// Callers hold r.mu. A failed read keeps what was known.
func (r *KeyRing) refresh(ctx context.Context, unknown bool) {
	if r.Load == nil {
		return
	}
	now := r.now()
	stale := r.loadedAt.IsZero() || now.Sub(r.loadedAt) >= refreshAfter
	if !stale && !unknown {
		return
	}
	if !r.triedAt.IsZero() && now.Sub(r.triedAt) < retryAfter {
		return
	}
	r.triedAt = now
	set, err := r.load(ctx)
	if err != nil {
		return
	}
	r.pubSet, r.published, r.loadedAt = set, set.keys(), now
}

func (r *KeyRing) load(ctx context.Context) (JWKS, error) {
	ctx, cancel := context.WithTimeout(ctx, hookTimeout)
	defer cancel()
	raw, err := r.Load(ctx)
	if err != nil {
		return JWKS{}, fmt.Errorf("read published token keys: %w", err)
	}
	var set JWKS
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &set); err != nil {
			return JWKS{}, fmt.Errorf("published token keys are not a JWKS document: %w", err)
		}
	}
	return set, nil
}

// beforeIssue makes sure the published set holds this ring's keys before a
// token of them leaves (at most once per publishAfter). A published set of a
// higher version is left alone; the same version with other keys (a retired
// key still listed, or a new one missing) is replaced with this ring's own.
func (r *KeyRing) beforeIssue() {
	if r.Publish == nil || r.Load == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	if !r.publishedAt.IsZero() && now.Sub(r.publishedAt) < publishAfter {
		return
	}
	r.publishedAt = now
	ctx, cancel := context.WithTimeout(context.Background(), 2*hookTimeout)
	defer cancel()
	got, err := r.load(ctx)
	if err != nil {
		r.publishedAt = time.Time{} // try again at the next token
		return
	}
	own := r.Own()
	if got.Version > own.Version || (got.Version == own.Version && sameKids(got, own)) {
		return
	}
	raw, _ := json.Marshal(own)
	if err := r.Publish(ctx, raw); err != nil {
		r.publishedAt = time.Time{}
	}
}

func sameKids(a, b JWKS) bool {
	kids := func(s JWKS) []string {
		var out []string
		for _, k := range s.Keys {
			out = append(out, k.Kid)
		}
		slices.Sort(out)
		return out
	}
	return slices.Equal(kids(a), kids(b))
}
