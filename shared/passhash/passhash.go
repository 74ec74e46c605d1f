// Package passhash hashes passwords with Argon2id (m=19 MiB, t=2, p=1; the PHC
// string format) and verifies them in constant time. It is its own package so
// that only the functions that check or set passwords link Argon2id.
package passhash

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters (OWASP: m=19 MiB, t=2, p=1).
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
	saltLen      = 16
)

// Hash returns the PHC string of an Argon2id hash of pw.
func Hash(pw string) (string, error) {
	salt := make([]byte, saltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: %w", err)
	}
	return encodeHash(pw, salt, argonMemory, argonTime, argonThreads), nil
}

func encodeHash(pw string, salt []byte, m uint32, t uint32, p uint8) string {
	key := argon2.IDKey([]byte(pw), salt, t, m, p, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, m, t, p, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// dummy is verified against when a user does not exist, so that login takes
// the same time whether or not the e-mail is known. It is computed on first use,
// never at init (a cold start must not spend an Argon2id run), and held in a
// function rather than a package variable so that a binary which imports this
// package without verifying (the mailer) does not link Argon2id.
var dummy struct {
	once sync.Once
	hash string
}

func dummyHash() string {
	dummy.once.Do(func() {
		dummy.hash = encodeHash("gale-dummy-password", []byte("gale-dummy-salt!"), argonMemory, argonTime, argonThreads)
	})
	return dummy.hash
}

// Verify reports whether pw matches hash in constant time. An empty hash
// (SSO-only users, unknown users) is checked against a dummy hash and fails.
func Verify(hash, pw string) bool {
	if hash == "" {
		_, _ = verify(dummyHash(), pw)
		return false
	}
	ok, err := verify(hash, pw)
	return ok && err == nil
}

var errBadHash = errors.New("passhash: malformed password hash")

// verifications counts Argon2id verifications, so tests can hold login to the
// same hashing work for known and unknown addresses without timing it.
var verifications atomic.Int64

// Verifications is the number of password verifications this process has run.
func Verifications() int64 { return verifications.Load() }

func verify(hash, pw string) (bool, error) {
	verifications.Add(1)
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, errBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err := b64.DecodeString(parts[4])
	if err != nil {
		return false, errBadHash
	}
	want, err := b64.DecodeString(parts[5])
	if err != nil {
		return false, errBadHash
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}
