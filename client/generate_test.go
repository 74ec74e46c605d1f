package client_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
)

// The generator as generate.go pins it (one place names the version).
var generatorRe = regexp.MustCompile(`github\.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v[0-9][0-9.]*`)

// TestGeneratedClientIsCurrent regenerates the client from the document the
// API serves into a temporary directory and compares: a route or schema
// changed without `make client` fails here.
func TestGeneratedClientIsCurrent(t *testing.T) {
	src, err := os.ReadFile("generate.go")
	if err != nil {
		t.Fatal(err)
	}
	gen := generatorRe.Find(src)
	if gen == nil {
		t.Fatal("generate.go names no pinned oapi-codegen")
	}
	doc, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "openapi.json"), filepath.Join(dir, "client.gen.go")
	if err := os.WriteFile(in, doc, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "run", string(gen), "-config", "oapi-codegen.yaml", "-o", out, in)
	if msg, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", gen, err, msg)
	}
	want, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("client/client.gen.go is stale: run `make client`")
	}
}
