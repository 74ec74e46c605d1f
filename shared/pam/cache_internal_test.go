package pam

import (
	"fmt"
	"testing"

	"github.com/gale-rmm/gale/shared/pam/policy"
)

// TestChainCache: a chain is served only for the version it was compiled
// from, an older version never replaces a newer one, and the cache stays
// within maxChains organizations.
func TestChainCache(t *testing.T) {
	c := &chainCache{m: map[string]cachedChain{}}
	a, b := policy.Compile(policy.ChainInput{}), policy.Compile(policy.ChainInput{DefaultVerdict: policy.VerdictAutoDeny})
	if c.get("t|o", 1) != nil {
		t.Fatal("empty cache answered")
	}
	c.put("t|o", 2, a)
	if c.get("t|o", 2) != a || c.get("t|o", 1) != nil || c.get("t|o", 3) != nil || c.get("u|o", 2) != nil {
		t.Fatal("served another version or table")
	}
	c.put("t|o", 1, b)
	if c.get("t|o", 2) != a {
		t.Fatal("an older version replaced a newer one")
	}
	c.put("t|o", 3, b)
	if c.get("t|o", 3) != b || c.get("t|o", 2) != nil {
		t.Fatal("a newer version did not replace")
	}
	for i := range 3 * maxChains {
		c.put(fmt.Sprint("t|", i), 1, a)
	}
	if len(c.m) > maxChains {
		t.Fatalf("%d chains cached, bound %d", len(c.m), maxChains)
	}
}
