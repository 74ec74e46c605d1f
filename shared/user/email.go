package user

import "strings"

func normalize(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// NormalizeEmail is the canonical (lower-case, trimmed) form used for uniqueness.
func NormalizeEmail(email string) string { return normalize(email) }
