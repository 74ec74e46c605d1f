package routes

import (
	"slices"
	"testing"
)

func TestNeedsTable(t *testing.T) {
	fns := Functions()
	for name, n := range FunctionNeeds {
		if !slices.Contains(fns, name) {
			t.Errorf("needs of %q, which is not a function", name)
		}
		if len(n.WriteKeys) > 0 && n.Table != TableReadWrite {
			t.Errorf("%s: write keys without write access", name)
		}
	}
	// Only the token issuers hold the signing key, and each of them also
	// publishes to (so reads) the public keys.
	for _, name := range fns {
		n := NeedsOf(name)
		if got := n.Holds(SecretTokenSigning); got != slices.Contains(TokenIssuers, name) {
			t.Errorf("%s holds the signing key: %v", name, got)
		}
		if n.Holds(SecretTokenSigning) && !n.Holds(SecretTokenPublicKeys) {
			t.Errorf("%s signs but cannot publish its keys", name)
		}
	}
	// The bootstrap administrator's password: the sweeper only.
	for _, name := range fns {
		if NeedsOf(name).Holds(SecretAdminPassword) != (name == "sweeper") {
			t.Errorf("%s and the administrator's password", name)
		}
	}
	// A new route group gets the default; an unknown name nothing.
	if n := NeedsOf("a-new-group"); n.Table != TableNone || len(n.Secrets) != 0 {
		t.Errorf("unknown function: %+v", n)
	}
	for _, g := range Groups {
		if _, ok := FunctionNeeds[g.Function]; !ok && !slices.Equal(NeedsOf(g.Function).Secrets, DefaultNeeds.Secrets) {
			t.Errorf("%s: not the default", g.Function)
		}
	}
}
