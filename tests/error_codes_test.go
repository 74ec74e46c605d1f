package tests

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/api"
)

// specCodes are codes the spec documents write in another case; they keep the
// spec's spelling (docs/decisions.md#error-body).
var specCodes = []string{"MFA_REQUIRED"}

var (
	snakeCase = regexp.MustCompile(`^[a-z][a-z0-9]*(_[a-z0-9]+)*$`)
	// The ways a code enters an answer: fault's constants, WithCode and a
	// composite literal's Code field given as a string, and the local
	// gateway's own errors.
	codeSources = []*regexp.Regexp{
		regexp.MustCompile(`(?m)^\s*Code\w*\s*=\s*"([^"]*)"`),
		regexp.MustCompile(`WithCode\("([^"]*)"\)`),
		regexp.MustCompile(`\bCode:\s*"([^"]*)"`),
		regexp.MustCompile(`gatewayError\([^)]*,\s*"([^"]*)"\)`),
	}
)

// Issue 35: one case for error codes. Every code the source can produce is
// lower snake case (or a spec-named exception) and in the OpenAPI document's
// Error.code enum, and every enum value is lower snake case too.
func TestErrorCodesAreLowerSnakeCaseAndDeclared(t *testing.T) {
	raw, err := api.Document()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]struct {
					Enum []string `json:"enum"`
				} `json:"properties"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	enum := doc.Components.Schemas["Error"].Properties["code"].Enum
	if len(enum) < 10 {
		t.Fatalf("Error.code enum %v: the document was not read", enum)
	}
	for _, c := range enum {
		if !snakeCase.MatchString(c) && !slices.Contains(specCodes, c) {
			t.Errorf("Error.code enum value %q is not lower snake case", c)
		}
	}
	produced := producedCodes(t)
	if len(produced) < 10 {
		t.Fatalf("found %d codes in the source: the walk is broken", len(produced))
	}
	for c, where := range produced {
		if !snakeCase.MatchString(c) && !slices.Contains(specCodes, c) {
			t.Errorf("%s: code %q is not lower snake case", where, c)
		}
		if !slices.Contains(enum, c) && !outsideErrorBody(where) {
			t.Errorf("%s: code %q is not in the OpenAPI Error.code enum", where, c)
		}
	}
}

// outsideErrorBody: codes that never reach the HTTP Error body, the agent
// channel's (WebSocket error frames) and SSO's callback codes (sent as
// <APP_URL>/login?error=<code>).
func outsideErrorBody(file string) bool {
	return strings.HasPrefix(file, filepath.Join("shared", "channel")+string(filepath.Separator)) ||
		strings.HasPrefix(file, filepath.Join("shared", "sso")+string(filepath.Separator))
}

// producedCodes maps each code written in the non-test Go source of shared/
// and infra/local to a file that writes it.
func producedCodes(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, root := range []string{filepath.Join("..", "shared"), filepath.Join("..", "infra", "local")} {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel("..", path)
			for _, re := range codeSources {
				for _, m := range re.FindAllStringSubmatch(string(src), -1) {
					out[m[1]] = rel
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}
