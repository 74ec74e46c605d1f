package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gale-rmm/gale/shared/fault"
	"github.com/gale-rmm/gale/shared/httpapi"
)

// fakeAuth is a test Authenticator and AuthzTracker (both are Gale's own
// interfaces): "Bearer ok" authenticates, anything else is 401. The request
// carries a flag the handler sets when it "authorizes".
type fakeAuth struct{ nilOnError bool }

type checkedKey struct{}

func (a fakeAuth) Authenticate(w http.ResponseWriter, r *http.Request, rt httpapi.Route) (*http.Request, error) {
	if r.Header.Get("Authorization") != "Bearer ok" {
		if a.nilOnError {
			return nil, fault.Unauthorized("Unauthorized")
		}
		return r, fault.Unauthorized("Unauthorized")
	}
	return r.WithContext(context.WithValue(r.Context(), checkedKey{}, new(atomic.Bool))), nil
}

func (fakeAuth) Checked(ctx context.Context) bool {
	b, _ := ctx.Value(checkedKey{}).(*atomic.Bool)
	return b != nil && b.Load()
}

func authorize(r *http.Request) { r.Context().Value(checkedKey{}).(*atomic.Bool).Store(true) }

func ok(w http.ResponseWriter, r *http.Request) error {
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{"ok": "yes"})
	return nil
}

func newRouter(strict bool, a fakeAuth) http.Handler {
	rt := httpapi.NewRouter(a, a)
	rt.Strict = strict
	rt.Add(
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/things", Access: httpapi.Public, Handle: ok},
		httpapi.Route{Method: http.MethodPost, Path: "/api/v1/things", Access: httpapi.User, Handle: func(w http.ResponseWriter, r *http.Request) error {
			authorize(r)
			return ok(w, r)
		}},
		// A route that forgets its authorization check.
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/things/{id}", Access: httpapi.User, Handle: ok},
		// Own-profile route: no check by design.
		httpapi.Route{Method: http.MethodGet, Path: "/api/v1/me", Access: httpapi.User, NoAuthz: true, Handle: ok},
		// Refuses before any check: an error answer needs none.
		httpapi.Route{Method: http.MethodDelete, Path: "/api/v1/things/{id}", Access: httpapi.User, Handle: func(w http.ResponseWriter, r *http.Request) error {
			return fault.NotFound("Thing not found")
		}},
		httpapi.Route{Method: http.MethodPut, Path: "/api/v1/things/{id}", Access: httpapi.UserOrKey, Handle: func(w http.ResponseWriter, r *http.Request) error {
			authorize(r)
			w.Header().Set("X-Thing", r.PathValue("id"))
			w.WriteHeader(http.StatusNoContent)
			return nil
		}},
	)
	return httpapi.Edge(rt, quietLog())
}

func do(h http.Handler, method, path, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, nil)
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func TestRouterUnknownPath(t *testing.T) {
	rec := do(newRouter(true, fakeAuth{}), http.MethodGet, "/api/v1/nothing", "")
	if rec.Code != http.StatusNotFound {
		t.Fatalf("status %d, want 404", rec.Code)
	}
	body := decodeBody(t, rec)
	if body["error"] != "Not Found" || body["code"] != "not_found" || body["requestId"] == "" {
		t.Fatalf("404 body %s", rec.Body.String())
	}
}

func TestRouterWrongMethod(t *testing.T) {
	h := newRouter(true, fakeAuth{})
	rec := do(h, http.MethodPatch, "/api/v1/things", "")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("status %d, want 405", rec.Code)
	}
	if got := rec.Header().Get("Allow"); got != "GET, HEAD, POST" {
		t.Fatalf("Allow = %q, want GET, HEAD, POST", got)
	}
	if body := decodeBody(t, rec); body["code"] != "method_not_allowed" || body["error"] != "Method Not Allowed" {
		t.Fatalf("405 body %s", rec.Body.String())
	}
	rec = do(h, http.MethodPost, "/api/v1/me", "Bearer ok")
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("POST /me = %d Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

func TestRouterAuthentication(t *testing.T) {
	for _, a := range []fakeAuth{{}, {nilOnError: true}} {
		h := newRouter(true, a)
		if rec := do(h, http.MethodGet, "/api/v1/things", ""); rec.Code != http.StatusOK {
			t.Fatalf("public route without credentials = %d, want 200", rec.Code)
		}
		rec := do(h, http.MethodPost, "/api/v1/things", "")
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("user route without credentials (nil request %v) = %d, want 401", a.nilOnError, rec.Code)
		}
		if body := decodeBody(t, rec); body["code"] != "unauthorized" || body["requestId"] == "" {
			t.Fatalf("401 body %s", rec.Body.String())
		}
	}
	// A non-public route with no authenticator is a wiring bug: 500, never a pass.
	rt := httpapi.NewRouter(nil, nil)
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/x", Access: httpapi.User, Handle: ok})
	if rec := do(httpapi.Edge(rt, quietLog()), http.MethodGet, "/x", "Bearer ok"); rec.Code != http.StatusInternalServerError {
		t.Fatalf("route without authenticator = %d, want 500", rec.Code)
	}
}

func TestStrictRouterRefusesRouteWithoutAuthzCheck(t *testing.T) {
	h := newRouter(true, fakeAuth{})
	rec := do(h, http.MethodGet, "/api/v1/things/1", "Bearer ok")
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("route without authz check = %d %s, want 500", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "yes") {
		t.Fatalf("the unchecked route's success body was sent: %s", rec.Body.String())
	}
	if body := decodeBody(t, rec); body["code"] != "internal" {
		t.Fatalf("body %s", rec.Body.String())
	}

	cases := []struct {
		method, path string
		want         int
	}{
		{http.MethodPost, "/api/v1/things", 200},     // checked
		{http.MethodGet, "/api/v1/me", 200},          // NoAuthz
		{http.MethodDelete, "/api/v1/things/1", 404}, // error answers need no check
		{http.MethodPut, "/api/v1/things/7", 204},    // checked, headers kept
	}
	for _, c := range cases {
		rec := do(h, c.method, c.path, "Bearer ok")
		if rec.Code != c.want {
			t.Errorf("%s %s = %d %s, want %d", c.method, c.path, rec.Code, rec.Body.String(), c.want)
		}
	}
	if rec := do(h, http.MethodPut, "/api/v1/things/7", "Bearer ok"); rec.Header().Get("X-Thing") != "7" {
		t.Errorf("held response lost its headers: %v", rec.Header())
	}
	if rec := do(h, http.MethodPost, "/api/v1/things", "Bearer ok"); decodeBody(t, rec)["ok"] != "yes" {
		t.Errorf("held response lost its body: %s", rec.Body.String())
	}
}

// Issue 19 finding 6: in production (not strict) a route that answered without an
// authorization decision used to send its success and only log. The router now
// holds the answer and replaces it with 500.
func TestProductionRouterReplacesUndecidedAnswer(t *testing.T) {
	h := newRouter(false, fakeAuth{})
	rec := do(h, http.MethodGet, "/api/v1/things/1", "Bearer ok")
	if rec.Code != http.StatusInternalServerError {
		t.Fatalf("production router = %d %s, want 500", rec.Code, rec.Body.String())
	}
	if strings.Contains(rec.Body.String(), "yes") {
		t.Fatalf("the undecided route's body was sent: %s", rec.Body.String())
	}
	if body := decodeBody(t, rec); body["code"] != "internal" || body["error"] != "Internal Server Error" {
		t.Fatalf("body %s", rec.Body.String())
	}
	// Decided routes answer as written, headers and body held and sent.
	if rec := do(h, http.MethodPut, "/api/v1/things/7", "Bearer ok"); rec.Code != 204 || rec.Header().Get("X-Thing") != "7" {
		t.Errorf("held response: %d %v", rec.Code, rec.Header())
	}
	if rec := do(h, http.MethodPost, "/api/v1/things", "Bearer ok"); decodeBody(t, rec)["ok"] != "yes" {
		t.Errorf("held response lost its body: %s", rec.Body.String())
	}
}

func TestRoutesLists(t *testing.T) {
	rt := httpapi.NewRouter(fakeAuth{}, fakeAuth{})
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/a", Handle: ok}, httpapi.Route{Method: http.MethodPost, Path: "/a", Handle: ok})
	if got := rt.Routes(); len(got) != 2 || got[1].Method != http.MethodPost {
		t.Fatalf("Routes() = %v", got)
	}
}

func TestPatternsLookThroughEdge(t *testing.T) {
	rt := httpapi.NewRouter(nil, nil)
	rt.Add(httpapi.Route{Method: http.MethodGet, Path: "/api/v1/things/{id}", Access: httpapi.Public,
		Handle: func(w http.ResponseWriter, r *http.Request) error { return nil }})
	rt.Pending("POST /api/v1/things")
	pats, ok := httpapi.Patterns(httpapi.Edge(rt, slog.New(slog.DiscardHandler)))
	if !ok || !slices.Equal(pats, []string{"GET /api/v1/things/{id}", "POST /api/v1/things"}) {
		t.Fatalf("Patterns = %v, %v", pats, ok)
	}
	if _, ok := httpapi.Patterns(http.NewServeMux()); ok {
		t.Error("a handler that is no router has no patterns")
	}
}
