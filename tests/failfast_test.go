package tests

import (
	"context"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/gale-rmm/gale/shared/app"
	"github.com/gale-rmm/gale/shared/app/authgroup"
	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/role"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

// proxy is a TCP forwarder in front of the emulator that this test owns: it can
// stall (keep connections open but stop copying bytes, as in a network
// partition), resume, close (connection refused) and reopen on the same address.
// The shared emulator itself is never frozen.
type proxy struct {
	t        *testing.T
	upstream string
	addr     string

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]bool
	stalled bool
	resume  chan struct{} // closed when a stall ends
}

func startProxy(t *testing.T, upstream string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{t: t, upstream: upstream, addr: ln.Addr().String(), conns: map[net.Conn]bool{}, resume: make(chan struct{})}
	p.serve(ln)
	t.Cleanup(func() { p.close(); p.unstall() })
	return p
}

func (p *proxy) serve(ln net.Listener) {
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.forward(c)
		}
	}()
}

func (p *proxy) forward(c net.Conn) {
	up, err := net.Dial("tcp", p.upstream)
	if err != nil {
		c.Close()
		return
	}
	if !p.track(c, up) {
		return
	}
	done := make(chan struct{}, 2)
	go func() { p.copy(up, c); done <- struct{}{} }()
	go func() { p.copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	p.mu.Lock()
	delete(p.conns, c)
	delete(p.conns, up)
	p.mu.Unlock()
}

// track registers a connection pair, or closes it when the proxy is closed.
func (p *proxy) track(c, up net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		up.Close()
		return false
	}
	p.conns[c], p.conns[up] = true, true
	return true
}

// copy forwards bytes, holding each chunk while the proxy is stalled.
func (p *proxy) copy(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			stalled, resume := p.stalled, p.resume
			p.mu.Unlock()
			if stalled {
				<-resume
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return // io.EOF or a closed connection
		}
	}
}

func (p *proxy) stall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.stalled {
		p.stalled, p.resume = true, make(chan struct{})
	}
}

func (p *proxy) unstall() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stalled {
		p.stalled = false
		close(p.resume)
	}
}

// close stops listening (new connections are refused) and drops open ones.
func (p *proxy) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) reopen() {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("proxy: reopen %s: %v", p.addr, err)
	}
	p.serve(ln)
}

// TestStalledOrDownStoreAnswers503 puts a proxy between the auth function and
// the emulator and checks that a stalled store and an unreachable one answer
// 503 `Service unavailable` with Retry-After within the request budget, and
// that the first request after recovery succeeds.
func TestStalledOrDownStoreAnswers503(t *testing.T) {
	env := testenv.New(t)
	p := fixture.Partner(t, env, "P")
	o := fixture.Org(t, env, p.ID, "O")
	const pw = "Correct-Horse-Battery-9"
	c := fixture.User(t, env, fixture.Member{Password: pw, Scope: authz.ScopeOrg, OrgID: o.ID, RoleID: role.OrgAdminID})

	u, err := url.Parse(env.Cfg.Endpoint)
	if err != nil {
		t.Fatal(err)
	}
	px := startProxy(t, u.Host)
	cfg := env.Cfg
	cfg.Endpoint = "http://" + px.addr
	// Small budgets keep the test short; the bounds asserted below are generous.
	// The response timeout leaves a loaded emulator room to answer the requests
	// that must succeed; a stall spends the budget and answers 503.
	const budget = 6 * time.Second
	cfg.RequestTimeout = budget
	cfg.AWSConnectTimeout = time.Second
	cfg.AWSResponseTimeout = 2 * time.Second
	cfg.AWSMaxAttempts = 3
	d, err := app.NewDeps(context.Background(), cfg, env.Clock)
	if err != nil {
		t.Fatal(err)
	}
	h, err := authgroup.Auth(d)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	login := func() (fixture.Response, time.Duration) {
		n++
		start := time.Now()
		res := fixture.Do(t, h, fixture.Request{Method: "POST", Path: "/api/v1/auth/login",
			Body: map[string]string{"email": c.Email, "password": pw}, RemoteAddr: ipFor(n)})
		return res, time.Since(start)
	}
	// Generous: the budget plus room for a loaded machine, far below a hang.
	const bound = budget + 10*time.Second
	unavailable := func(state string) {
		t.Helper()
		res, took := login()
		if res.Status != http.StatusServiceUnavailable {
			t.Fatalf("%s: status %d, want 503: %s", state, res.Status, res.Body)
		}
		if took > bound {
			t.Fatalf("%s: answered after %v, want within %v", state, took, bound)
		}
		body := res.JSON(t)
		if body["error"] != "Service unavailable" || body["code"] != "unavailable" || body["requestId"] == "" {
			t.Fatalf("%s: body %s, want the error envelope of `Service unavailable`", state, res.Body)
		}
		if res.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: no Retry-After header", state)
		}
	}
	ok := func(state string) {
		t.Helper()
		if res, _ := login(); res.Status != http.StatusOK {
			t.Fatalf("%s: status %d, want 200: %s", state, res.Status, res.Body)
		}
	}

	ok("through the proxy")
	px.stall()
	unavailable("stalled")
	px.unstall()
	ok("resumed")
	px.close()
	unavailable("closed")
	px.reopen()
	ok("reopened")
}
