// Command commongen writes common-passwords.txt: the 10,000 most frequent
// passwords of the frequency list that github.com/trustelem/zxcvbn v1.0.1 ships
// (data/passwords.txt, MIT licence, ranked by frequency in leaked password
// sets), lower-cased, deduplicated and sorted bytewise so that signin can
// binary-search the embedded file without building anything at init.
//
// Run from shared/signin: go generate.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

const (
	module = "github.com/trustelem/zxcvbn@v1.0.1"
	top    = 10_000
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "commongen:", err)
		os.Exit(1)
	}
}

func run() error {
	out, err := exec.Command("go", "mod", "download", "-json", module).Output()
	if err != nil {
		return fmt.Errorf("download %s: %w", module, err)
	}
	var mod struct{ Dir string }
	if err := json.Unmarshal(out, &mod); err != nil || mod.Dir == "" {
		return fmt.Errorf("download %s: no directory in %q", module, out)
	}
	f, err := os.Open(filepath.Join(mod.Dir, "data", "passwords.txt"))
	if err != nil {
		return err
	}
	defer f.Close()
	seen := map[string]bool{}
	var list []string
	sc := bufio.NewScanner(f)
	for sc.Scan() && len(list) < top {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if pw := strings.ToLower(fields[0]); !seen[pw] {
			seen[pw] = true
			list = append(list, pw)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if len(list) < top {
		return fmt.Errorf("only %d passwords in the list", len(list))
	}
	slices.Sort(list)
	return os.WriteFile("common-passwords.txt", []byte(strings.Join(list, "\n")+"\n"), 0o644)
}
