package policy

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// SubjectIsUser reports whether an elevation request's subject
// (subjectUsername) is the platform user with e-mail email
// (docs/decisions.md#separation-of-duties). It is the one matcher behind both
// the refusal of a human self-approval and separation of duties in the chain.
//
// Both sides are read in Unicode NFKC (a full-width `ａｌｉｃｅ` or `ＣＯＲＰ＼alice`
// is its plain form), trimmed and folded (case-insensitive). The subject is
// the user when it equals the e-mail, or when, once a `DOMAIN\`, `DOMAIN/` or
// `.\` prefix (up to the last `\` or `/`) and an `@domain` suffix (from the
// last `@`) are removed, it equals the e-mail's local part. Removing both a
// prefix and a suffix (`CORP\alice@corp.local`) errs on the side of "is the
// user": a false match only sends a request to a human, while a missed one
// lets a user approve their own elevation. An empty subject, an empty
// e-mail or one without a local part is never a match.
func SubjectIsUser(subject, email string) bool {
	subject, email = canonical(subject), canonical(email)
	if subject == "" || email == "" {
		return false
	}
	if subject == email {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return false
	}
	bare := bareAccount(subject)
	return bare != "" && bare == email[:at]
}

// canonical is NFKC, trimmed, folded: the form SubjectIsUser compares.
func canonical(s string) string {
	return fold(strings.TrimSpace(norm.NFKC.String(s)))
}

// bareAccount removes a `DOMAIN\`, `DOMAIN/` or `.\` prefix and an `@domain`
// suffix from a canonical subject.
func bareAccount(subject string) string {
	if i := strings.LastIndexAny(subject, `\/`); i >= 0 {
		subject = subject[i+1:]
	}
	if i := strings.LastIndexByte(subject, '@'); i >= 0 {
		subject = subject[:i]
	}
	return strings.TrimSpace(subject)
}

// fold is the package's case folding: ASCII lower-casing, and for other
// text upper- then lower-casing, so that every Unicode case variant of a
// letter folds to one form. The result is valid UTF-8.
func fold(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return strings.ToLower(strings.ToUpper(s))
		}
	}
	return strings.ToLower(s)
}

// normPath reads `\` as `/` and folds.
func normPath(s string) string {
	if strings.IndexByte(s, '\\') >= 0 {
		s = strings.ReplaceAll(s, `\`, "/")
	}
	return fold(s)
}
