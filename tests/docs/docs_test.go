// Package docs opens the API reference page the way a person does: it starts
// the local server as make run does (infra/local), loads GET /api/v1/docs in
// headless Chromium with no other host reachable, and checks what renders.
package docs

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/gale-rmm/gale/shared/config"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

// chromium returns the Debian chromium binary, installing the package (as
// root) when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("chromium"); err == nil {
		return p
	}
	if os.Geteuid() != 0 {
		t.Fatal("chromium is not installed and this user cannot install it: apt-get install -y chromium")
	}
	install := exec.Command("sh", "-c", "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium")
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("apt-get install chromium: %v\n%s", err, out)
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
}

// serve builds and starts infra/local on a free loopback port with its own
// table and queues on the test emulator, and returns its base URL. The server
// and what it provisioned go when the test ends.
func serve(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "gale-local")
	build := exec.Command("go", "build", "-o", bin, "./infra/local")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build infra/local: %v\n%s", err, out)
	}
	port := freePort(t)
	prefix := fmt.Sprintf("docs-%d", time.Now().UnixNano())
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "PORT="+port, "TABLE_NAME="+prefix, "AWS_REGION=us-east-1", "GALE_LOCAL_DIR="+t.TempDir(),
		"AWS_ACCESS_KEY_ID=testing", "AWS_SECRET_ACCESS_KEY=testing")
	logs, err := os.Create(filepath.Join(t.TempDir(), "server.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		removeProvisioned(t, prefix)
		if t.Failed() {
			out, _ := os.ReadFile(logs.Name())
			t.Logf("server log:\n%s", out)
		}
	})
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(90 * time.Second)
	for {
		res, err := http.Get(base + "/api/v1/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return base
			}
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logs.Name())
			t.Fatalf("local server did not answer /api/v1/health within 90 s (%v)\n%s", err, out)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// removeProvisioned deletes the table and queues infra/local made under prefix.
func removeProvisioned(t *testing.T, prefix string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cfg, err := config.Config{Region: "us-east-1", Endpoint: os.Getenv("AWS_ENDPOINT_URL")}.AWS(ctx)
	if err != nil {
		t.Logf("cleanup: %v", err)
		return
	}
	_, _ = dynamodb.NewFromConfig(cfg).DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(prefix)})
	q := sqs.NewFromConfig(cfg)
	list, err := q.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)})
	if err != nil {
		return
	}
	for _, u := range list.QueueUrls {
		_, _ = q.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(u)})
	}
}

// tags are the served document's tags list, in its order (the order the
// page's sidebar shows); shared/api holds every operation's tag to it.
func tags(t *testing.T, base string) []string {
	t.Helper()
	res, err := http.Get(base + "/api/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var doc struct {
		Tags []struct {
			Name string `json:"name"`
		} `json:"tags"`
	}
	if err := json.NewDecoder(res.Body).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tg := range doc.Tags {
		out = append(out, tg.Name)
	}
	if len(out) < 5 {
		t.Fatalf("the document lists %d tags: %v", len(out), out)
	}
	return out
}

func TestReferencePageRendersOffline(t *testing.T) {
	// Without the bundle the page answers 503 and never renders: say so at
	// once instead of waiting out the browser's timeout.
	if _, err := os.Stat("../../shared/api/docs/scalar.js.gz"); err != nil {
		t.Fatalf("the reference page's bundle is not built (%v): run make docs (make test builds it first)", err)
	}
	exe := chromium(t)
	base := serve(t)
	want := tags(t, base)
	host := strings.TrimPrefix(base, "http://")

	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()

	var mu sync.Mutex
	var problems, offHost []string
	statuses := map[string]int64{} // request URL -> status of the page's calls to the API
	chromedp.ListenTarget(ctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.APITypeError || e.Type == runtime.APITypeAssert {
				var args []string
				for _, a := range e.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, "console."+string(e.Type)+": "+strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			problems = append(problems, "exception: "+e.ExceptionDetails.Text+" "+exceptionText(e.ExceptionDetails))
		case *log.EventEntryAdded:
			if e.Entry.Level == log.LevelError {
				problems = append(problems, "log: "+e.Entry.Text+" "+e.Entry.URL)
			}
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(e.Request.URL)
			if err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != host {
				offHost = append(offHost, e.Request.URL)
			}
		case *network.EventResponseReceived:
			statuses[e.Response.URL] = e.Response.Status
		}
	})

	if err := chromedp.Run(ctx, network.Enable(), log.Enable(), runtime.Enable(),
		chromedp.Navigate(base+"/api/v1/docs#tag/health/GET/api/v1/health"),
	); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	// The document is rendered once the sidebar lists its tags.
	if err := waitFor(ctx, `[...document.querySelectorAll('button')].some(b => (b.innerText||'').includes('Group - Health'))`); err != nil {
		// The page is read before taking mu: the listener that chromedp.Run
		// waits on takes mu too.
		var text string
		_ = chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate(`document.body.innerHTML.slice(0, 2000)`, &text))
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the page did not render the document: %v\nconsole: %s\nbody: %s", err, strings.Join(problems, "\n"), text)
	}
	// Every tag of the document is rendered: the sidebar has a group for each.
	var groups []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('button')].map(b => (b.innerText||'').trim()).filter(s => /^(Open|Close) Group - /.test(s)).map(s => s.replace(/^(Open|Close) Group - /, ''))`, &groups)); err != nil {
		t.Fatal(err)
	}
	// Every tag of the document is rendered, in the document's order.
	var shown []string
	for _, g := range groups {
		if slices.Contains(want, g) {
			shown = append(shown, g)
		}
	}
	if !slices.Equal(shown, want) {
		t.Errorf("sidebar groups %v, want the document's tags in order %v", groups, want)
	}

	shot := filepath.Join(t.TempDir(), "api-reference.png")
	var png []byte
	if err := chromedp.Run(ctx, chromedp.FullScreenshot(&png, 80)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", shot)
	if dir := os.Getenv("GALE_DOCS_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "api-reference.png"), png, 0o644)
	}

	// Try it: GET /api/v1/health from the page's API client, against this server.
	if err := tryIt(ctx); err != nil {
		t.Errorf("try-it: %v", err)
	}
	health := base + "/api/v1/health"
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		mu.Lock()
		_, seen := statuses[health]
		mu.Unlock()
		if seen {
			break
		}
	}
	if err := chromedp.Run(ctx, chromedp.CaptureScreenshot(&png)); err == nil {
		_ = os.WriteFile(filepath.Join(filepath.Dir(shot), "try-it.png"), png, 0o644)
		if dir := os.Getenv("GALE_DOCS_SCREENSHOT_DIR"); dir != "" {
			_ = os.WriteFile(filepath.Join(dir, "try-it.png"), png, 0o644)
		}
	}

	// The /admin root aliases are hidden: the Admin section shows each
	// operation once, under /api/v1. (Last: it moves the page off health.)
	if err := aliasesHidden(ctx); err != nil {
		t.Error(err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(problems) > 0 {
		t.Errorf("console errors:\n%s", strings.Join(problems, "\n"))
	}
	if len(offHost) > 0 {
		t.Errorf("the page requested other hosts: %v", offHost)
	}
	if got := statuses[base+"/api/v1/health"]; got != http.StatusOK {
		t.Errorf("try-it call of GET /api/v1/health answered %d (calls seen: %v)", got, keys(statuses))
	}
}

// waitFor evaluates the JavaScript condition until it holds, for at most 90 s (the machine may be loaded).
func waitFor(ctx context.Context, cond string) error {
	deadline := time.Now().Add(90 * time.Second)
	for {
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate(cond, &ok)); err != nil {
			return fmt.Errorf("wait for %s: %w", cond, err)
		}
		if ok {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("wait for %s: still false after 90 s", cond)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// aliasesHidden opens the Admin section and finds its operations under
// /api/v1 and none at a root /admin path.
func aliasesHidden(ctx context.Context) error {
	if err := chromedp.Run(ctx, chromedp.Evaluate(`location.hash = "#tag/admin"`, nil)); err != nil {
		return err
	}
	const shown = `document.body.innerText.includes('/api/v1/admin/webhook-dlq/redrive')`
	if err := waitFor(ctx, shown); err != nil {
		var text string
		_ = chromedp.Run(ctx, chromedp.Evaluate(`document.body.innerText.slice(0, 3000)`, &text))
		return fmt.Errorf("the Admin section is not rendered: %v\n%s", err, text)
	}
	var roots []string
	if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.body.innerText.matchAll(/(?<!\/api\/v1)\/admin\/[a-z-]+(\/[a-z{}-]+)*/g)].map(m => m[0])`, &roots)); err != nil {
		return err
	}
	// The description of GET /api/v1/admin/webhook-dlq names its alias once.
	if len(roots) > 1 {
		return fmt.Errorf("the page shows root /admin paths: %v", roots)
	}
	return nil
}

func exceptionText(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

func keys(m map[string]int64) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// tryIt opens GET /api/v1/health in the page's API client ("Test Request")
// and sends it.
func tryIt(ctx context.Context) error {
	const testRequest = `[...document.querySelectorAll('button')].find(b => (b.innerText||'').includes('Test Request') && (b.innerText||'').includes('(get /api/v1/health)'))`
	const send = `[...document.querySelectorAll('button')].find(b => /^Send\b/.test((b.innerText||'').trim()) && b.offsetParent !== null)`
	for _, step := range []string{testRequest, send} {
		if err := waitFor(ctx, "!!"+step); err != nil {
			return err
		}
		var ok bool
		if err := chromedp.Run(ctx, chromedp.Evaluate("(() => { const b = "+step+"; if (!b) return false; b.click(); return true })()", &ok)); err != nil || !ok {
			return fmt.Errorf("click %s: %v", step, err)
		}
	}
	return nil
}
