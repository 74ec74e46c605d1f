// Package emulator starts and stops moto_server for the local runtime and tests.
// It is never linked into a Lambda function. The process is stopped by its PID,
// never by name, so a developer's other emulators are left alone.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Moto is a running moto_server.
type Moto struct {
	URL string
	cmd *exec.Cmd
}

// Start launches moto_server on a free loopback port and waits until it answers.
func Start(ctx context.Context) (*Moto, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, errors.New(`emulator: moto_server not found on PATH; install it with pip install "moto[server]" or set AWS_ENDPOINT_URL to a running emulator`)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Getenv("GALE_MOTO_LOG") != "" {
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("emulator: start moto_server: %w", err)
	}
	m := &Moto{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	if err := m.wait(ctx, 30*time.Second); err != nil {
		m.Stop()
		return nil, err
	}
	return m, nil
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
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("emulator: moto_server did not answer on %s within %s", m.URL, limit)
}

// PID is the process id of moto_server.
func (m *Moto) PID() int { return m.cmd.Process.Pid }

// Stop ends the process group moto_server leads (it is started with Setpgid).
func (m *Moto) Stop() {
	if m == nil || m.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = m.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("emulator: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
