package mfa

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
)

// Recovery codes (POST /auth/mfa/recovery-codes in the OpenAPI document): 10 per set, XXXX-XXXX, each single use, stored
// as keyed hashes. The alphabet drops 0/O and 1/I, so 32 symbols give 40 bits a
// code; the hash is HMAC-SHA256 under a key derived from the encryption key, so
// a leaked table alone cannot be brute-forced offline.
const (
	recoveryCount    = 10
	recoveryAlphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
	// usedCode replaces the hash of a spent code: the list keeps its positions,
	// so two different codes spent at once do not collide.
	usedCode = "-"
)

// newRecoveryCodes draws a set of codes from crypto/rand.
func newRecoveryCodes() ([]string, error) {
	out := make([]string, recoveryCount)
	raw := make([]byte, 8*recoveryCount)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("recovery codes: %w", err)
	}
	for i := range out {
		var b strings.Builder
		for j, r := range raw[i*8 : i*8+8] {
			if j == 4 {
				b.WriteByte('-')
			}
			b.WriteByte(recoveryAlphabet[int(r)%len(recoveryAlphabet)]) // 256 % 32 == 0: uniform
		}
		out[i] = b.String()
	}
	return out, nil
}

// normalizeRecovery reads a typed recovery code (any case, with or without the
// hyphen or spaces); ok is false when it cannot be one.
func normalizeRecovery(code string) (string, bool) {
	c := strings.ToUpper(strings.NewReplacer("-", "", " ", "").Replace(code))
	if len(c) != 8 {
		return "", false
	}
	for _, r := range c {
		if !strings.ContainsRune(recoveryAlphabet, r) {
			return "", false
		}
	}
	return c, true
}

// codeHasher hashes short codes with a server-held key. parts are joined with a
// NUL so "sms" codes, "phone" codes and recovery codes never share a hash.
type codeHasher struct{ key []byte }

func (h codeHasher) hash(parts ...string) string {
	m := hmac.New(sha256.New, h.key)
	m.Write([]byte(strings.Join(parts, "\x00")))
	return hex.EncodeToString(m.Sum(nil))
}

func (h codeHasher) recovery(normalized string) string { return h.hash("recovery", normalized) }

// recoveryHashes hashes a fresh set for storage.
func (h codeHasher) recoveryHashes(codes []string) []string {
	out := make([]string, len(codes))
	for i, c := range codes {
		n, _ := normalizeRecovery(c)
		out[i] = h.recovery(n)
	}
	return out
}

// findRecovery returns the index of hash among stored, or -1. Every entry is
// compared, in constant time.
func findRecovery(stored []string, hash string) int {
	at := -1
	for i, s := range stored {
		if subtle.ConstantTimeCompare([]byte(s), []byte(hash)) == 1 && at < 0 {
			at = i
		}
	}
	return at
}

// liveCodes counts the unspent codes of stored.
func liveCodes(stored []string) int {
	n := 0
	for _, s := range stored {
		if s != usedCode && s != "" {
			n++
		}
	}
	return n
}

// sameCode compares a stored hash with a computed one in constant time.
func sameCode(stored, computed string) bool {
	return stored != "" && subtle.ConstantTimeCompare([]byte(stored), []byte(computed)) == 1
}

// digits draws an n-digit numeric code from crypto/rand.
func digits(n int) (string, error) {
	max := big.NewInt(1)
	for i := 0; i < n; i++ {
		max.Mul(max, big.NewInt(10))
	}
	v, err := rand.Int(rand.Reader, max)
	if err != nil {
		return "", fmt.Errorf("numeric code: %w", err)
	}
	return fmt.Sprintf("%0*d", n, v), nil
}

// isDigits reports whether s is exactly n ASCII digits.
func isDigits(s string, n int) bool {
	if len(s) != n {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// maskPhone keeps the last two digits of a phone number, for responses and audit.
func maskPhone(p string) string {
	if len(p) <= 3 {
		return strings.Repeat("*", len(p))
	}
	return p[:1] + strings.Repeat("*", len(p)-3) + p[len(p)-2:]
}
