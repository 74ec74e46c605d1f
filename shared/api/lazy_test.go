package api

import (
	"os"
	"testing"
)

// TestMain checks, before any test asks for it, that importing the package
// merged nothing: the document is built on first use, never at init.
func TestMain(m *testing.M) {
	if merged != nil || errDoc != nil {
		println("api: the document was merged at init")
		os.Exit(1)
	}
	os.Exit(m.Run())
}
