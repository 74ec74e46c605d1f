// Package client is Gale's typed Go client. client.gen.go is generated from
// the assembled OpenAPI document (make client) and holds a type per schema and
// a method per operation (ClientWithResponses: XxxWithResponse answers a
// result with the decoded body per status). The hand-written layer, this file
// and its siblings, covers what generation does not: signing in with a
// password and a TOTP code, refreshing the access token once on a 401,
// authenticating with an API key (X-API-Key), walking lists page by page
// (All) and turning an error answer into *APIError (OK).
//
// The refresh token travels only in the service_refresh_token cookie (the
// API never puts it in a body); Gale keeps it in memory and sends it back
// with the CSRF header the refresh route requires.
package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
)

// RefreshCookie is the cookie the API sets the refresh token in.
const RefreshCookie = "service_refresh_token"

// Gale is a client with credentials: the generated operations plus sign-in.
// Safe for concurrent use.
type Gale struct {
	*ClientWithResponses
	base string
	doer HttpRequestDoer

	// refreshing serialises refreshes: requests refused together refresh once
	// (a second refresh with the spent token would be refused as a race).
	refreshing sync.Mutex

	mu      sync.Mutex
	apiKey  string
	access  string
	refresh string
}

// Option configures New.
type Option func(*Gale)

// WithAPIKey authenticates every request with the API key (X-API-Key), the
// credential of automation; a key never refreshes and never satisfies MFA.
func WithAPIKey(key string) Option { return func(g *Gale) { g.apiKey = key } }

// WithTokens starts from a saved access and refresh token (the CLI's login).
func WithTokens(access, refresh string) Option {
	return func(g *Gale) { g.access, g.refresh = access, refresh }
}

// WithDoer sends requests through d instead of http.DefaultClient.
func WithDoer(d HttpRequestDoer) Option { return func(g *Gale) { g.doer = d } }

// New returns a client of the API at baseURL (scheme and host, e.g.
// http://localhost:3000; the operations' paths carry /api/v1).
func New(baseURL string, opts ...Option) (*Gale, error) {
	g := &Gale{base: strings.TrimRight(baseURL, "/"), doer: http.DefaultClient}
	for _, o := range opts {
		o(g)
	}
	c, err := NewClientWithResponses(g.base, WithHTTPClient(authDoer{g}))
	if err != nil {
		return nil, err
	}
	g.ClientWithResponses = c
	return g, nil
}

// Tokens returns the current access and refresh token (after a refresh, the
// rotated ones: a caller that saves them must save them again).
func (g *Gale) Tokens() (access, refresh string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.access, g.refresh
}

func (g *Gale) setTokens(access, refresh string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.access = access
	if refresh != "" {
		g.refresh = refresh
	}
}

// authDoer adds the credential to each request and, for a signed-in user
// whose access token was refused (401), refreshes once and sends it again.
type authDoer struct{ g *Gale }

func (d authDoer) Do(req *http.Request) (*http.Response, error) {
	g := d.g
	g.mu.Lock()
	key, access, refresh := g.apiKey, g.access, g.refresh
	g.mu.Unlock()
	switch {
	case key != "":
		req.Header.Set("X-API-Key", key)
	case access != "" && req.Header.Get("Authorization") == "":
		req.Header.Set("Authorization", "Bearer "+access)
	}
	res, err := g.doer.Do(req)
	if err != nil || res.StatusCode != http.StatusUnauthorized || key != "" || refresh == "" ||
		access == "" || isAuthRoute(req) || req.GetBody == nil && req.Body != nil && req.Body != http.NoBody {
		return res, err
	}
	// The request is sent again: the generated code builds bodies from a
	// bytes.Reader, so GetBody replays them.
	drain(res)
	if err := g.refreshAfter(req.Context(), access); err != nil {
		return nil, err
	}
	again := req.Clone(req.Context())
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	access, _ = g.Tokens()
	again.Header.Set("Authorization", "Bearer "+access)
	return g.doer.Do(again)
}

// isAuthRoute: sign-in, second factor and refresh answer 401 for wrong
// credentials, which a refresh would not mend.
func isAuthRoute(req *http.Request) bool {
	p := req.URL.Path
	return strings.HasSuffix(p, "/auth/login") || strings.HasSuffix(p, "/auth/refresh") || strings.HasSuffix(p, "/auth/mfa/verify")
}

func drain(res *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<16))
	_ = res.Body.Close()
}

// ErrCodeRequired is returned by SignIn when the account needs a second
// factor and no code function was given.
var ErrCodeRequired = errors.New("client: a TOTP code is required")

// SignIn signs in with e-mail and password; when the account has TOTP, code
// is asked for the current code (a prompt, or an authenticator in tests).
// code is asked again, up to codeTries times in all, only after the API
// refused the previous code as already used (CodeUsed): a prompt then says to
// wait for the next code. On success the client holds the access and the
// refresh token.
func (g *Gale) SignIn(ctx context.Context, email, password string, code func(ctx context.Context) (string, error)) error {
	r, err := OK(g.AuthLoginWithResponse(ctx, AuthCredentials{Email: email, Password: password}))
	if err != nil {
		return err
	}
	ans := r.JSON200
	if ans == nil {
		return fmt.Errorf("client: sign-in answered %d without a body", r.StatusCode())
	}
	res := r.HTTPResponse
	if ans.MfaRequired {
		if ans.MfaMethod == nil || *ans.MfaMethod != AuthLoginResponseMfaMethodTotp || ans.TempToken == nil {
			return fmt.Errorf("client: the account's second factor is %v; only TOTP is supported here", ptrValue(ans.MfaMethod))
		}
		if code == nil {
			return ErrCodeRequired
		}
		v, err := g.verifyCode(ctx, *ans.TempToken, code)
		if err != nil {
			return err
		}
		if v.JSON200 == nil {
			return fmt.Errorf("client: second factor answered %d without a body", v.StatusCode())
		}
		final, err := v.JSON200.AsAuthLoginResponse()
		if err != nil {
			return err
		}
		ans, res = &final, v.HTTPResponse
	}
	if ans.Tokens == nil {
		return errors.New("client: sign-in answered no tokens")
	}
	g.setTokens(ans.Tokens.AccessToken, refreshFrom(res))
	return nil
}

// codeTries is how often SignIn asks for a code when the API refused the
// previous one as already used; every try counts on the API's limit of 5
// verifications in 5 minutes.
const codeTries = 3

// verifyCode sends the code for the temp token and, when the API refused it
// as already used (CodeUsed), asks code for the next one: the temp token
// outlives a refused code.
func (g *Gale) verifyCode(ctx context.Context, tempToken string, code func(ctx context.Context) (string, error)) (*AuthMfaVerifyResult, error) {
	for try := 1; ; try++ {
		c, err := code(ctx)
		if err != nil {
			return nil, err
		}
		v, err := OK(g.AuthMfaVerifyWithResponse(ctx, AuthMfaVerifyJSONRequestBody{Code: strings.TrimSpace(c), TempToken: &tempToken}))
		if CodeUsed(err) && try < codeTries {
			continue
		}
		return v, err
	}
}

// CodeUsed reports whether err refused a TOTP code as already used (each code
// is accepted once: right after enrolling, the app still shows the code the
// enrolment spent). The API answers `Invalid MFA code` for a wrong code too,
// but only a used one carries a hint; the next code will do.
func CodeUsed(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Message == "Invalid MFA code" && e.Hint != ""
}

// refreshAfter refreshes unless another request already replaced the refused
// access token while this one waited.
func (g *Gale) refreshAfter(ctx context.Context, refused string) error {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	if access, _ := g.Tokens(); access != refused {
		return nil
	}
	return g.rotate(ctx)
}

// Refresh trades the refresh token for a new access token (the refresh token
// rotates: the new one replaces it).
func (g *Gale) Refresh(ctx context.Context) error {
	g.refreshing.Lock()
	defer g.refreshing.Unlock()
	return g.rotate(ctx)
}

func (g *Gale) rotate(ctx context.Context) error {
	_, refresh := g.Tokens()
	if refresh == "" {
		return errors.New("client: no refresh token (sign in first)")
	}
	r, err := OK(g.AuthRefreshWithResponse(ctx, &AuthRefreshParams{XServiceCsrf: "gale-client", ServiceRefreshToken: refresh}))
	if err != nil {
		return err
	}
	if r.JSON200 == nil || r.JSON200.Tokens == nil {
		return errors.New("client: refresh answered no tokens")
	}
	g.setTokens(r.JSON200.Tokens.AccessToken, refreshFrom(r.HTTPResponse))
	return nil
}

func refreshFrom(res *http.Response) string {
	if res == nil {
		return ""
	}
	for _, c := range res.Cookies() {
		if c.Name == RefreshCookie && c.Value != "" {
			return c.Value
		}
	}
	return ""
}

func ptrValue[T any](p *T) any {
	if p == nil {
		return "unknown"
	}
	return *p
}

// raw sends a request the generated client has no operation for (a route
// being built beside this client) with the client's credentials.
func (g *Gale) raw(ctx context.Context, method, path string, body []byte) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, g.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return authDoer{g}.Do(req)
}
