package policy

import "testing"

// TestSubjectIsUser is the table of subject forms
// (docs/decisions.md#separation-of-duties), for the platform user
// alice@example.com unless the row names another e-mail. The rows marked
// "was missed" answered false before the matcher read `/`, `.\`, `@domain`
// and NFKC: such a subject approved its own request by hand.
func TestSubjectIsUser(t *testing.T) {
	const alice = "alice@example.com"
	cases := []struct {
		subject, email string
		want           bool
	}{
		{"alice", alice, true},
		{"ALICE", alice, true},
		{" alice ", alice, true},
		{`CORP\alice`, alice, true},
		{`corp\ALICE`, alice, true},
		{`CORP/alice`, alice, true},        // was missed
		{`.\alice`, alice, true},           // (`.\` was read as a domain already)
		{"alice@corp.local", alice, true},  // was missed
		{"alice@example.com", alice, true}, // the e-mail itself
		{"ALICE@Example.COM", alice, true},
		{`CORP\alice@corp.local`, alice, true},      // prefix and suffix: was missed
		{`A\B\alice`, alice, true},                  // up to the last separator
		{"ａｌｉｃｅ", alice, true},                      // full-width: was missed
		{`ＣＯＲＰ＼ａｌｉｃｅ`, alice, true},                 // full-width domain and backslash: was missed
		{"alice＠corp.local", alice, true},           // full-width at sign: was missed
		{"\u212Aalice", "kalice@example.com", true}, // Kelvin sign is k
		{"alice", "Alice@Example.com", true},        // the e-mail's case does not matter
		{"alice", "ａｌｉｃｅ@example.com", true},        // nor its compatibility forms
		{"bob", alice, false},
		{"alice2", alice, false},
		{"alic", alice, false},
		{`CORP\bob`, alice, false},
		{`CORP/bob`, alice, false},
		{"bob@example.com", alice, false},
		{"alice.smith", alice, false},
		{"example.com", alice, false},
		{"", alice, false},
		{"   ", alice, false},
		{`CORP\`, alice, false},
		{"CORP/", alice, false},
		{"@example.com", alice, false},
		{`CORP\@x`, alice, false},
		{"alice", "", false},
		{"", "", false},
		{`CORP\`, "@corp.example", false}, // an e-mail without a local part is nobody
		{"alice", "alice", true},          // equal strings, however odd the e-mail
	}
	for _, c := range cases {
		if got := SubjectIsUser(c.subject, c.email); got != c.want {
			t.Errorf("SubjectIsUser(%q, %q) = %v, want %v", c.subject, c.email, got, c.want)
		}
	}
}
