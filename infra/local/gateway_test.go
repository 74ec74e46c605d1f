package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/gale-rmm/gale/shared/app/groups"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestToEvent(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api/v1/users/invite?x=1&x=2&y=%2Fz", strings.NewReader(`{"email":"a@example.com"}`))
	r.RemoteAddr = "192.0.2.10:54321"
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Api-Key", "svc_abc")
	r.Header.Add("Accept", "application/json")
	r.Header.Add("Accept", "text/plain")
	r.Header.Add("Cookie", "session=s1; theme=dark")
	r.Header.Add("Cookie", "csrf=c1")
	r.Header.Set("User-Agent", "curl/8.0")

	ev, err := toEvent(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if ev.Version != "2.0" || ev.RouteKey == "" || ev.RequestContext.RequestID == "" || ev.RequestContext.TimeEpoch == 0 {
		t.Errorf("not a payload 2.0 event: %+v", ev)
	}
	if ev.RawPath != "/api/v1/users/invite" || ev.RequestContext.HTTP.Path != "/api/v1/users/invite" || ev.RequestContext.HTTP.Method != "POST" {
		t.Errorf("path/method = %q %q %q", ev.RawPath, ev.RequestContext.HTTP.Path, ev.RequestContext.HTTP.Method)
	}
	if ev.RawQueryString != "x=1&x=2&y=%2Fz" {
		t.Errorf("rawQueryString = %q", ev.RawQueryString)
	}
	if ev.QueryStringParameters["x"] != "1,2" || ev.QueryStringParameters["y"] != "/z" {
		t.Errorf("queryStringParameters = %v, want x=1,2 and y=/z", ev.QueryStringParameters)
	}
	for k := range ev.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header %q is not lowercase", k)
		}
	}
	for k, v := range map[string]string{
		"content-type": "application/json", "x-api-key": "svc_abc", "accept": "application/json,text/plain",
		"user-agent": "curl/8.0", "host": "127.0.0.1:8080",
	} {
		if ev.Headers[k] != v {
			t.Errorf("headers[%q] = %q, want %q", k, ev.Headers[k], v)
		}
	}
	if _, ok := ev.Headers["cookie"]; ok {
		t.Error("cookie stayed in headers; payload 2.0 moves it to cookies")
	}
	if !slices.Equal(ev.Cookies, []string{"session=s1", "theme=dark", "csrf=c1"}) {
		t.Errorf("cookies = %q", ev.Cookies)
	}
	if ev.RequestContext.HTTP.SourceIP != "192.0.2.10" || ev.RequestContext.HTTP.UserAgent != "curl/8.0" {
		t.Errorf("sourceIp %q userAgent %q", ev.RequestContext.HTTP.SourceIP, ev.RequestContext.HTTP.UserAgent)
	}
	if ev.Body != `{"email":"a@example.com"}` || ev.IsBase64Encoded {
		t.Errorf("body = %q base64 %v", ev.Body, ev.IsBase64Encoded)
	}
}

func TestToEventBinaryAndLimits(t *testing.T) {
	bin := []byte{0xff, 0xfe, 0x00, 0x81}
	r := httptest.NewRequest(http.MethodPut, "/api/v1/agents/a/software", strings.NewReader(string(bin)))
	ev, err := toEvent(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if !ev.IsBase64Encoded || ev.Body != base64.StdEncoding.EncodeToString(bin) {
		t.Errorf("non-UTF-8 body = %q base64 %v, want base64", ev.Body, ev.IsBase64Encoded)
	}

	r = httptest.NewRequest(http.MethodGet, "/api/v1/health", nil)
	if ev, err = toEvent(r, 1<<20); err != nil || ev.Body != "" || ev.QueryStringParameters != nil || ev.Cookies != nil {
		t.Errorf("bare GET = %+v, %v", ev, err)
	}

	r = httptest.NewRequest(http.MethodPost, "/api/v1/users", strings.NewReader(strings.Repeat("x", 11)))
	if _, err := toEvent(r, 10); err == nil {
		t.Error("body over the limit accepted")
	}
}

// What the handler sees through the adapter is what the client sent.
func TestToEventRoundTrip(t *testing.T) {
	var seen *http.Request
	var seenBody string
	proxy := httpadapter.NewV2(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = r
		b, _ := io.ReadAll(r.Body)
		seenBody = string(b)
		w.WriteHeader(http.StatusNoContent)
	})).ProxyWithContext
	r := httptest.NewRequest(http.MethodPatch, "/api/v1/users/u1?expand=roles", strings.NewReader("\x00\xffbinary"))
	r.RemoteAddr = "198.51.100.7:1234"
	r.Header.Set("Authorization", "Bearer t")
	r.Header.Set("Cookie", "refresh=r1; other=o")
	ev, err := toEvent(r, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proxy(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	if seen.Method != http.MethodPatch || seen.URL.Path != "/api/v1/users/u1" || seen.URL.Query().Get("expand") != "roles" {
		t.Errorf("request %s %s", seen.Method, seen.URL)
	}
	if seen.Header.Get("Authorization") != "Bearer t" || seen.RemoteAddr != "198.51.100.7" {
		t.Errorf("authorization %q remote %q", seen.Header.Get("Authorization"), seen.RemoteAddr)
	}
	if c, err := seen.Cookie("refresh"); err != nil || c.Value != "r1" {
		t.Errorf("cookie refresh = %v, %v", c, err)
	}
	if seenBody != "\x00\xffbinary" {
		t.Errorf("body = %q", seenBody)
	}
}

func TestWriteResponse(t *testing.T) {
	rec := httptest.NewRecorder()
	writeResponse(rec, events.APIGatewayV2HTTPResponse{
		StatusCode: http.StatusCreated,
		Headers:    map[string]string{"Content-Type": "application/json", "X-Request-Id": "r1"},
		Cookies:    []string{"refresh=r1; Path=/api/v1/auth; HttpOnly; Secure", "theme=dark"},
		Body:       `{"ok":true}`,
	})
	if rec.Code != http.StatusCreated || rec.Body.String() != `{"ok":true}` {
		t.Errorf("answer %d %q", rec.Code, rec.Body.String())
	}
	if got := rec.Header().Values("Set-Cookie"); !slices.Equal(got, []string{"refresh=r1; Path=/api/v1/auth; HttpOnly; Secure", "theme=dark"}) {
		t.Errorf("Set-Cookie = %q", got)
	}
	if rec.Header().Get("X-Request-Id") != "r1" || rec.Header().Get("Content-Length") != "11" {
		t.Errorf("headers %v", rec.Header())
	}

	rec = httptest.NewRecorder()
	writeResponse(rec, events.APIGatewayV2HTTPResponse{Body: base64.StdEncoding.EncodeToString([]byte{0xff, 0x00}), IsBase64Encoded: true})
	if rec.Code != http.StatusOK || rec.Body.String() != "\xff\x00" {
		t.Errorf("base64 answer %d %q, want 200 and the decoded bytes", rec.Code, rec.Body.String())
	}
}

// The whole local path: HTTP -> API Gateway v2 event -> the function's real
// handler -> HTTP, on an emulator environment.
func TestGatewayEndToEnd(t *testing.T) {
	env := testenv.New(t)
	handlers := map[string]http.Handler{}
	for name, build := range groups.Builders() {
		h, err := build(env.Deps)
		if err != nil {
			t.Fatalf("build %s: %v", name, err)
		}
		handlers[name] = h
	}
	srv := httptest.NewServer(newGateway(handlers))
	t.Cleanup(srv.Close)

	get := func(path string) (int, http.Header, map[string]any) {
		t.Helper()
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
			t.Fatalf("GET %s: body is not JSON: %v", path, err)
		}
		return res.StatusCode, res.Header, body
	}

	code, hdr, body := get("/api/v1/health")
	if code != http.StatusOK || body["status"] != "ok" {
		t.Fatalf("health = %d %v, want 200 ok", code, body)
	}
	checks, _ := body["checks"].(map[string]any)
	if checks["table"] != "ok" || checks["queues"] != "ok" {
		t.Fatalf("health checks = %v, want table and queues ok", checks)
	}
	if _, ok := body["version"]; !ok {
		t.Error("health has no version")
	}
	if hdr.Get("X-Request-Id") == "" || !strings.HasPrefix(hdr.Get("Content-Type"), "application/json") {
		t.Errorf("health headers %v", hdr)
	}

	// The OpenAPI document is public, served by the health function.
	code, _, body = get("/api/v1/openapi.json")
	if paths, _ := body["paths"].(map[string]any); code != http.StatusOK || body["openapi"] != "3.1.0" || paths["/api/v1/health"] == nil {
		t.Errorf("openapi.json = %d, want the document", code)
	}

	for _, path := range []string{"/nope", "/api/v1/nope", "/api/v2/health"} {
		code, hdr, body = get(path)
		id, _ := body["requestId"].(string)
		if code != http.StatusNotFound || body["error"] != "Not Found" || body["code"] != "not_found" || id == "" ||
			hdr.Get("X-Request-Id") != id {
			t.Errorf("GET %s = %d %v (X-Request-Id %q), want the 404 envelope with its requestId", path, code, body, hdr.Get("X-Request-Id"))
		}
	}
	code, _, body = get("/api/v1/health/x")
	if code != http.StatusNotFound || body["code"] != "not_found" || body["requestId"] == "" {
		t.Errorf("unknown path in a group = %d %v, want the function's 404 envelope", code, body)
	}

	res, err := http.Post(srv.URL+"/api/v1/health", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST health = %d Allow %q, want 405 GET, HEAD", res.StatusCode, res.Header.Get("Allow"))
	}
}
