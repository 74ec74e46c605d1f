package user

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// normalize is the canonical form of an address: NFKC (so a full-width or
// other compatibility look-alike is the same address as its plain form), then
// trimmed and lower-cased. The uniqueness guard keys on it.
func normalize(email string) string {
	return strings.ToLower(strings.TrimSpace(norm.NFKC.String(email)))
}

// NormalizeEmail is the canonical form used for uniqueness and sign-in.
func NormalizeEmail(email string) string { return normalize(email) }
