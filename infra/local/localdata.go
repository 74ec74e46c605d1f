package main

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// The local runtime's data lives in one directory, .local/ under the
// directory `make run` runs in (GALE_LOCAL_DIR elsewhere; gitignored):
//
//   - emulator.state: the emulator's tables and queues, loaded at start and
//     saved on Ctrl-C (shared/emulator, EnsureSaving), so users, keys and TOTP
//     secrets survive a restart; `make reset` deletes it;
//   - emulator.state.log: what the emulator said (loaded, saved, refused);
//   - gale.env: settings, read once at start. A setting such as
//     WEBHOOK_ALLOW_CIDRS is changed by editing the file and restarting
//     `make run`, which keeps the data; the environment wins over the file.
const (
	localDirEnv  = "GALE_LOCAL_DIR"
	stateFile    = "emulator.state"
	settingsFile = "gale.env"
)

// settingsTemplate is written when gale.env does not exist yet, so the
// settings a first local webhook needs are found where they are read.
const settingsTemplate = `# Gale's local settings, read by ` + "`make run`" + ` at start (KEY=VALUE, one a line;
# the environment wins over this file). Edit, then stop (Ctrl-C) and start
# ` + "`make run`" + ` again: the data is kept (` + "`make reset`" + ` starts clean).
#
# Outbound allow-list: address ranges webhooks (and other outbound calls) may
# reach although they are private, e.g. a receiver on this machine:
# WEBHOOK_ALLOW_CIDRS=127.0.0.1/32
# A PEM bundle of an extra CA to trust (a local receiver's own certificate):
# WEBHOOK_CA_FILE=/path/to/ca.pem
# Any other setting of the README's configuration table, e.g.:
# ENABLE_REGISTRATION=true
`

// localDir is where the local runtime keeps its data, created when missing
// and held by this process (holdDir).
func localDir() (string, error) {
	dir := os.Getenv(localDirEnv)
	if dir == "" {
		dir = ".local"
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("local data directory: %w", err)
	}
	f, err := holdDir(dir)
	if err != nil {
		return "", err
	}
	held = f
	return dir, nil
}

// held keeps the data directory's lock file open (and so locked) while the
// process runs.
var held *os.File

// holdDir takes the directory's lock for the life of the process (the file
// stays open). Two runtimes on one directory would each save the state they
// loaded over the other's: the second is refused instead.
func holdDir(dir string) (*os.File, error) {
	f, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("local data directory: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("another local runtime uses %s (stop it, or set %s to another directory)", dir, localDirEnv)
	}
	return f, nil
}

// loadSettings sets each KEY=VALUE of the file at path that the environment
// does not set already, and answers the keys it set. A missing file is
// written from settingsTemplate.
func loadSettings(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, os.WriteFile(path, []byte(settingsTemplate), 0o600)
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var set []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, value, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			return nil, fmt.Errorf("%s:%d: not KEY=VALUE: %q", filepath.Base(path), n, line)
		}
		value = unquote(strings.TrimSpace(value))
		if _, inEnv := os.LookupEnv(key); inEnv {
			continue
		}
		if err := os.Setenv(key, value); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", filepath.Base(path), n, err)
		}
		set = append(set, key)
	}
	return set, sc.Err()
}

// unquote strips one pair of matching quotes, as a shell would.
func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1]
	}
	return v
}
