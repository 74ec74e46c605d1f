// Package valid checks request values against the spec's bounds, recording each
// failure under its JSON path in a fault.Fields, and decodes PATCH fields that
// tell absent from null (Opt).
package valid

import (
	"net/mail"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/fault"
)

// Len checks that s has between min and max characters (runes).
func Len(f fault.Fields, path, s string, min, max int) {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min && min == 1:
		f.Add(path, "is required")
	case n < min || n > max:
		f.Addf(path, "must be %d-%d characters", min, max)
	}
}

// Name checks a trimmed display name of 1..max characters without control
// characters (NUL, escapes, line breaks): names end up in e-mails, logs and
// other people's screens.
func Name(f fault.Fields, path, s string, max int) {
	if strings.TrimSpace(s) == "" {
		f.Add(path, "is required")
		return
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		f.Add(path, "must not contain control characters")
		return
	}
	Len(f, path, s, 1, max)
}

// Range checks min <= n <= max.
func Range(f fault.Fields, path string, n, min, max int) {
	if n < min || n > max {
		f.Addf(path, "must be between %d and %d", min, max)
	}
}

// UUID checks that s is a UUID.
func UUID(f fault.Fields, path, s string) {
	if !IsUUID(s) {
		f.Add(path, "must be a UUID")
	}
}

// IsUUID reports whether s is a canonical UUID.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	_, err := uuid.Parse(s)
	return err == nil
}

// PathID returns a 400 naming the path parameter when id is not a UUID.
func PathID(name, id string) error {
	if IsUUID(id) {
		return nil
	}
	return fault.Invalid(name, "must be a UUID")
}

// Email checks an address of at most 255 characters.
func Email(f fault.Fields, path, s string) {
	if s == "" {
		f.Add(path, "is required")
		return
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || len(s) > 255 || !strings.Contains(s[strings.LastIndex(s, "@")+1:], ".") && !strings.HasSuffix(s, "@localhost") {
		f.Add(path, "must be a valid e-mail address")
	}
}

// OneOf checks that s is one of the allowed values. The message lists them so
// that a client learns the choices from the answer, not from the source.
func OneOf(f fault.Fields, path, s string, allowed ...string) {
	for _, a := range allowed {
		if s == a {
			return
		}
	}
	f.Add(path, OneOfMessage(allowed))
}

// OneOfMessage is the message of a value outside allowed: "must be one of:
// a, b, c". Validators that check an enum their own way use it too, so every
// enum error reads the same.
func OneOfMessage(allowed []string) string { return "must be one of: " + strings.Join(allowed, ", ") }

var e164 = regexp.MustCompile(`^\+[1-9][0-9]{6,14}$`)

// Phone checks an E.164 number.
func Phone(f fault.Fields, path, s string) {
	if !e164.MatchString(s) {
		f.Add(path, "must be an E.164 phone number such as +14155550123")
	}
}

// Time parses an RFC 3339 time, recording a failure.
func Time(f fault.Fields, path, s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		f.Add(path, "must be an RFC 3339 date-time")
	}
	return t.UTC()
}
