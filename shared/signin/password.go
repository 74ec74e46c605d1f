package signin

import (
	_ "embed"
	"strings"
	"unicode/utf8"

	passwordvalidator "github.com/wagslane/go-password-validator"

	"github.com/gale-rmm/gale/shared/fault"
)

//go:generate go run ./internal/commongen

// commonList holds the 10,000 most common passwords (see internal/commongen),
// lower-cased, one per line, sorted bytewise: isCommon binary-searches it in
// place, so nothing is built at init (cold start) or kept beside it.
//
//go:embed common-passwords.txt
var commonList string

// isCommon reports whether pw, lower-cased, is on the common-password list.
func isCommon(pw string) bool {
	pw = strings.ToLower(pw)
	lo, hi := 0, len(commonList) // invariant: lo and hi sit at line starts
	for lo < hi {
		mid := lo + (hi-lo)/2
		start := strings.LastIndexByte(commonList[lo:mid], '\n') + 1 + lo
		end := strings.IndexByte(commonList[start:], '\n') + start
		switch line := commonList[start:end]; {
		case line == pw:
			return true
		case line < pw:
			lo = end + 1
		default:
			hi = start
		}
	}
	return false
}

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
	case isCommon(pw):
		f.Add(field, "is too common; choose a less guessable password")
	case passwordvalidator.GetEntropy(pw) < minEntropy:
		f.Add(field, "is too weak; use a longer password or mix letters, digits and symbols")
	}
}
