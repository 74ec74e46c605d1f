// Package secret seals small secrets kept at rest (TOTP seeds, pending recovery
// codes) with AES-256-GCM. The key is SHA-256 of the configured encryption key
// (config.EncryptionKey); every Seal draws a fresh 96-bit nonce from crypto/rand.
//
// A sealed value is "v1." followed by base64url (no padding) of nonce ‖
// ciphertext ‖ tag. The caller names a context (e.g. "totp:<userId>") that is
// bound as additional data, so a value copied to another record or user does not
// open. Derive turns the one configured key into independent sub-keys (e.g. the
// HMAC key of stored code hashes).
package secret

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// version prefixes every sealed value, so the format can change later.
const version = "v1."

// ErrOpen is any failure to open a sealed value: malformed, tampered with, sealed
// under another key or for another context. It says nothing more on purpose.
var ErrOpen = errors.New("secret: cannot open sealed value")

// Box seals under one key and opens under that key or, during a rotation,
// the previous ones.
type Box struct {
	aead     cipher.AEAD
	previous []cipher.AEAD
}

// New returns a box keyed with SHA-256 of key. Values sealed under a previous
// key still open (a rotation: the new key seals, the old one still decrypts
// until every value is sealed again and it is retired; README, "Secrets").
func New(key []byte, previous ...[]byte) (*Box, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	b := &Box{aead: aead}
	for _, p := range previous {
		a, err := newAEAD(p)
		if err != nil {
			return nil, err
		}
		b.previous = append(b.previous, a)
	}
	return b, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	if len(key) == 0 {
		return nil, errors.New("secret: empty key")
	}
	k := sha256.Sum256(key)
	block, err := aes.NewCipher(k[:])
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("secret: %w", err)
	}
	return aead, nil
}

// Seal encrypts plaintext for context with a random nonce.
func (b *Box) Seal(plaintext []byte, context string) (string, error) {
	nonce := make([]byte, b.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("secret: nonce: %w", err)
	}
	return b.seal(nonce, plaintext, context), nil
}

func (b *Box) seal(nonce, plaintext []byte, context string) string {
	out := b.aead.Seal(append([]byte(nil), nonce...), nonce, plaintext, []byte(context))
	return version + base64.RawURLEncoding.EncodeToString(out)
}

// Open decrypts a value sealed for context; ErrOpen on any failure.
func (b *Box) Open(sealed, context string) ([]byte, error) {
	rest, ok := strings.CutPrefix(sealed, version)
	if !ok {
		return nil, ErrOpen
	}
	raw, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil || len(raw) < b.aead.NonceSize()+b.aead.Overhead() {
		return nil, ErrOpen
	}
	n := b.aead.NonceSize()
	pt, err := b.aead.Open(nil, raw[:n], raw[n:], []byte(context))
	for _, prev := range b.previous {
		if err == nil {
			break
		}
		pt, err = prev.Open(nil, raw[:n], raw[n:], []byte(context))
	}
	if err != nil {
		return nil, ErrOpen
	}
	if pt == nil {
		pt = []byte{}
	}
	return pt, nil
}

// Derive returns HMAC-SHA256(master, label): a 32-byte sub-key of master for one
// purpose, so no key serves two.
func Derive(master []byte, label string) []byte {
	m := hmac.New(sha256.New, master)
	m.Write([]byte(label))
	return m.Sum(nil)
}
