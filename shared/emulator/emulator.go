// Package emulator starts and stops moto_server for the local runtime and tests,
// provisions the table and queues on it (Provision) and points a configuration at
// them (Configure, Resources.Apply). It is never linked into a Lambda function.
// The process is stopped by its PID, never by name, so a developer's other
// emulators are left alone. Only the local runtime's emulator keeps its state
// in a file across restarts (EnsureSaving); every other one starts empty, and
// tests never read or write a saved state.
package emulator

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// atomicLauncher runs moto_server with DynamoDB requests serialised: plain
// moto_server checks a condition and applies the write without a lock, so
// concurrent conditional writes on one key can both win, which DynamoDB never
// allows and race tests depend on. The Makefile runs the same file.
//
//go:embed moto_atomic.py
var atomicLauncher string

// Moto is a running moto_server.
type Moto struct {
	URL string
	// Atomic reports whether DynamoDB requests are serialised (see atomicLauncher).
	Atomic bool
	// State is the file the emulator loads at start and saves when stopped
	// ("" when it keeps nothing); Log is where its output goes then.
	State, Log string
	cmd        *exec.Cmd
	done       chan struct{}
}

// stateEnv names the launcher's saved state (moto_atomic.py, "Saved state").
// It is set only for the emulator EnsureSaving starts, and removed from every
// other one's environment: a developer's shell cannot make a test emulator
// load or overwrite the local runtime's data.
const stateEnv = "GALE_MOTO_STATE"

// Start launches moto_server on a free loopback port and waits until it answers.
// It prefers the atomic launcher and falls back to plain moto_server when the
// launcher's Python cannot import moto.
func Start(ctx context.Context) (*Moto, error) { return start(ctx, "") }

// start is Start, saving to state when it is not "". Plain moto_server
// cannot save: with a state, only the atomic launcher will do, and its
// failure (a state it cannot load) is reported rather than replaced by an
// emulator that would come up empty.
func start(ctx context.Context, state string) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New(`emulator: moto_server not found on PATH; install it with pip install "moto[server]" or set AWS_ENDPOINT_URL to a running emulator`)
	}
	py := python(bin)
	if state != "" {
		if py == "" {
			return nil, errors.New("emulator: no python3 to run the launcher that saves the emulator's state")
		}
		return launch(ctx, launchSpec{atomic: true, state: state, name: py, args: []string{"-c", atomicLauncher}})
	}
	if py != "" {
		if m, err := launch(ctx, launchSpec{atomic: true, name: py, args: []string{"-c", atomicLauncher}}); err == nil {
			return m, nil
		}
	}
	return launch(ctx, launchSpec{name: bin})
}

// Ensure starts moto_server unless AWS_ENDPOINT_URL names a running emulator,
// and sets AWS_ENDPOINT_URL to the one it starts. The Moto is nil when it started
// none; Stop on it then does nothing.
func Ensure(ctx context.Context) (*Moto, error) { return ensure(ctx, "") }

// EnsureSaving is Ensure for the local runtime: the emulator it starts loads
// the tables and queues saved in the file state (when it exists) and saves
// them there when stopped (Shutdown) and every few seconds while written to.
// An emulator named by AWS_ENDPOINT_URL keeps what it keeps.
func EnsureSaving(ctx context.Context, state string) (*Moto, error) {
	if state == "" {
		return nil, errors.New("emulator: EnsureSaving needs a state file")
	}
	return ensure(ctx, state)
}

func ensure(ctx context.Context, state string) (*Moto, error) {
	if os.Getenv("AWS_ENDPOINT_URL") != "" {
		return nil, nil
	}
	if pool := strings.Fields(os.Getenv(PoolEnv)); len(pool) > 0 && state == "" {
		os.Setenv("AWS_ENDPOINT_URL", take(pool))
		return nil, nil
	}
	var m *Moto
	var err error
	if state == "" {
		m, err = Start(ctx)
	} else {
		m, err = start(ctx, state)
	}
	if err != nil {
		return nil, err
	}
	os.Setenv("AWS_ENDPOINT_URL", m.URL)
	return m, nil
}

// PoolEnv names the emulators a test run shares (space-separated URLs; make
// test-go starts them). Each DynamoDB request is serialised inside one
// emulator (atomicLauncher), so one emulator keeps one core busy at most:
// with a pool, each test process takes an emulator no other process holds
// (take), and packages run side by side (go test -p) on emulators of their
// own. Rows never collide: every test provisions its own table and queues.
const PoolEnv = "GALE_EMULATOR_POOL"

// held keeps the pool locks of this process (released when it exits).
var held []*os.File

// take answers the first emulator of pool no other process holds, holding
// its advisory lock for the life of this process; when every one is held, one
// by this process's id (shared, still correct, only slower).
func take(pool []string) string {
	for _, u := range pool {
		name := strings.Map(func(r rune) rune {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				return r
			}
			return '-'
		}, u)
		f, err := os.OpenFile(filepath.Join(os.TempDir(), "gale-emulator-"+name+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			continue
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			held = append(held, f)
			return u
		}
		f.Close()
	}
	return pool[os.Getpid()%len(pool)]
}

// python returns the interpreter that runs moto_server: its shebang's, or
// python3 on PATH when moto_server is a wrapper (pyenv shims are shell scripts).
func python(motoServer string) string {
	if f, err := os.Open(motoServer); err == nil {
		line, _ := bufio.NewReader(f).ReadString('\n')
		f.Close()
		if fields := strings.Fields(strings.TrimPrefix(line, "#!")); strings.HasPrefix(line, "#!") && len(fields) > 0 {
			if py := fields[len(fields)-1]; strings.Contains(py, "python") {
				if p, err := exec.LookPath(py); err == nil {
					return p
				}
			}
		}
	}
	p, _ := exec.LookPath("python3")
	return p
}

// launchSpec is one way of running moto_server.
type launchSpec struct {
	atomic bool
	state  string // the saved state's file, or ""
	name   string
	args   []string
}

func launch(ctx context.Context, spec launchSpec) (*Moto, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(spec.name, append(spec.args, "-H", "127.0.0.1", "-p", strconv.Itoa(port))...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = withoutEnv(os.Environ(), stateEnv)
	m := &Moto{URL: fmt.Sprintf("http://127.0.0.1:%d", port), Atomic: spec.atomic, State: spec.state, cmd: cmd, done: make(chan struct{})}
	switch {
	case os.Getenv("GALE_MOTO_LOG") != "":
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	case spec.state != "":
		// The saving emulator's own words (loaded, saved, why it refused a
		// state) are kept beside the state.
		m.Log = spec.state + ".log"
		f, err := os.OpenFile(m.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
		if err != nil {
			return nil, fmt.Errorf("emulator: %w", err)
		}
		defer f.Close() // the child holds its own descriptor
		cmd.Stdout, cmd.Stderr = f, f
	}
	if spec.state != "" {
		cmd.Env = append(cmd.Env, stateEnv+"="+spec.state)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("emulator: start moto_server: %w", err)
	}
	go func() { _ = cmd.Wait(); close(m.done) }()
	if err := m.wait(ctx, 30*time.Second); err != nil {
		m.Stop()
		if spec.state != "" {
			err = fmt.Errorf("%w (its log: %s)", err, def(m.Log, "stderr"))
		}
		return nil, err
	}
	return m, nil
}

func def(v, fallback string) string {
	if v == "" {
		return fallback
	}
	return v
}

func withoutEnv(env []string, name string) []string {
	out := env[:0:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, name+"=") {
			out = append(out, kv)
		}
	}
	return out
}

func (m *Moto) wait(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/moto-api/", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			return nil
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		select {
		case <-m.done:
			return fmt.Errorf("emulator: moto_server exited before answering on %s", m.URL)
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("emulator: moto_server did not answer on %s within %s", m.URL, limit)
}

// PID is the process id of moto_server.
func (m *Moto) PID() int { return m.cmd.Process.Pid }

// Stop ends the process group moto_server leads (it is started with Setpgid).
func (m *Moto) Stop() { _ = m.Shutdown() }

// Shutdown is Stop, and for a saving emulator reports whether it saved its
// state: it exits 0 only once the state is written. A saving emulator gets
// longer to answer SIGTERM than one with nothing to write.
func (m *Moto) Shutdown() error {
	if m == nil || m.cmd.Process == nil {
		return nil
	}
	select {
	case <-m.done:
		return nil // already gone: never signal a process group id that may be reused
	default:
	}
	grace := 5 * time.Second
	if m.State != "" {
		grace = 60 * time.Second
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(grace):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-m.done
	}
	if m.State != "" && !m.cmd.ProcessState.Success() {
		return fmt.Errorf("emulator: it did not save its state to %s (%s; its log: %s)", m.State, m.cmd.ProcessState, def(m.Log, "stderr"))
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("emulator: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
