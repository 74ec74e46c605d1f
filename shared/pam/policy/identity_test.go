package policy

import "testing"

func TestSubjectIsUser(t *testing.T) {
	cases := []struct {
		subject, email string
		want           bool
	}{
		{"alice@corp.example", "alice@corp.example", true},
		{"ALICE@Corp.Example", "alice@corp.example", true},
		{`CORP\alice`, "alice@corp.example", true},
		{`corp\ALICE`, "Alice@corp.example", true},
		{"alice", "alice@corp.example", true},
		{" alice ", "alice@corp.example", true},
		{`CORP\alice`, "alice@other.example", true}, // the local part decides, whatever the domain
		{`CORP\alicia`, "alice@corp.example", false},
		{"alice@other.example", "alice@corp.example", false},
		{`CORP\bob`, "alice@corp.example", false},
		{"", "alice@corp.example", false},
		{`CORP\`, "@corp.example", false},
		{"alice", "", false},
		{"alice", "alice", true}, // equal strings, however odd the e-mail
		{`A\B\alice`, "alice@corp.example", true},
	}
	for _, c := range cases {
		if got := SubjectIsUser(c.subject, c.email); got != c.want {
			t.Errorf("SubjectIsUser(%q, %q) = %v, want %v", c.subject, c.email, got, c.want)
		}
	}
}

func TestIsSelfApproval(t *testing.T) {
	cases := []struct {
		subject, email, username string
		want                     bool
	}{
		{`CORP\alice`, "alice@corp.example", "", true},
		{`CORP\alice`, "a.smith@corp.example", "alice", true},
		{`CORP\alice`, "a.smith@corp.example", `corp\Alice`, true},
		{"asmith", "a.smith@corp.example", "ASMITH", true},
		{`CORP\alice`, "bob@corp.example", "bob", false},
		{`CORP\alice`, "bob@corp.example", "", false},
		{"", "bob@corp.example", "bob", false},
	}
	for _, c := range cases {
		if got := IsSelfApproval(c.subject, c.email, c.username); got != c.want {
			t.Errorf("IsSelfApproval(%q, %q, %q) = %v, want %v", c.subject, c.email, c.username, got, c.want)
		}
	}
}
