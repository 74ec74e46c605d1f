package signin

import (
	_ "embed"
	"strings"
	"unicode/utf8"

	passwordvalidator "github.com/wagslane/go-password-validator"

	"github.com/gale-rmm/gale/shared/fault"
)

//go:embed common-passwords.txt
var commonList string

var common = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(commonList, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			m[strings.ToLower(l)] = true
		}
	}
	return m
}()

// minEntropy rejects passwords that are long but trivially guessable ("aaaaaaaa").
const minEntropy = 40

// CheckPassword applies the password rule: 8-128 characters, common passwords refused,
// and a strength check. field names the JSON path in the error.
func CheckPassword(field, pw string) error {
	f := fault.Fields{}
	checkPassword(f, field, pw)
	return f.Err()
}

// checkPassword records CheckPassword's failure for field in f.
func checkPassword(f fault.Fields, field, pw string) {
	n := utf8.RuneCountInString(pw)
	switch {
	case n == 0:
		f.Add(field, "is required")
	case n < 8:
		f.Add(field, "must be at least 8 characters")
	case n > 128:
		f.Add(field, "must be at most 128 characters")
	case common[strings.ToLower(pw)]:
		f.Add(field, "is too common; choose a less guessable password")
	case passwordvalidator.GetEntropy(pw) < minEntropy:
		f.Add(field, "is too weak; use a longer password or mix letters, digits and symbols")
	}
}
