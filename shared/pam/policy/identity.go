package policy

import "strings"

// SubjectIsUser reports whether an elevation request's subject
// (subjectUsername) is the platform user with email (DECISIONS.md, "PAM"):
// the subject equals the e-mail, or, once a `DOMAIN\` prefix is removed (if
// any), the e-mail's local part; case-insensitive, surrounding spaces
// ignored. An empty subject or an e-mail without a local part is never a
// match.
func SubjectIsUser(subject, email string) bool {
	subject, email = strings.TrimSpace(subject), strings.TrimSpace(email)
	if subject == "" || email == "" {
		return false
	}
	if foldEqual(subject, email) {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	if at <= 0 {
		return false
	}
	return foldEqual(stripDomain(subject), email[:at])
}

// IsSelfApproval reports whether an approver is the request's subject: the
// approver's e-mail is the subject (SubjectIsUser), or the approver's
// username (when they have one) equals the subject with or without its
// `DOMAIN\` prefix. The respond route answers 403 `Requester cannot approve
// their own elevation request` when it holds.
func IsSelfApproval(subject, approverEmail, approverUsername string) bool {
	if SubjectIsUser(subject, approverEmail) {
		return true
	}
	subject, approverUsername = strings.TrimSpace(subject), strings.TrimSpace(approverUsername)
	if subject == "" || approverUsername == "" {
		return false
	}
	return foldEqual(subject, approverUsername) || foldEqual(stripDomain(subject), approverUsername)
}

// stripDomain removes a `DOMAIN\` prefix (up to the last backslash).
func stripDomain(subject string) string {
	if i := strings.LastIndexByte(subject, '\\'); i >= 0 {
		return subject[i+1:]
	}
	return subject
}

// foldEqual is case-insensitive equality as the package defines it.
func foldEqual(a, b string) bool { return fold(a) == fold(b) }

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
