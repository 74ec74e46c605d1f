package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/client"
)

// exampleTB lets an example build its site with the test fixtures: a failure
// panics (the example fails), and cleanups run when the example ends.
type exampleTB struct {
	testing.TB
	cleanups []func()
}

func (e *exampleTB) Helper()                   {}
func (e *exampleTB) Cleanup(f func())          { e.cleanups = append(e.cleanups, f) }
func (e *exampleTB) Logf(string, ...any)       {}
func (e *exampleTB) Fatal(args ...any)         { panic(fmt.Sprint(args...)) }
func (e *exampleTB) Fatalf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }
func (e *exampleTB) Errorf(f string, a ...any) { panic(fmt.Sprintf(f, a...)) }

func (e *exampleTB) done() {
	for _, f := range slices.Backward(e.cleanups) {
		f()
	}
}

// Sign in with a password and the TOTP code an authenticator shows, then
// call an operation; an expired access token is refreshed on the way.
func ExampleGale_SignIn() {
	tb := &exampleTB{}
	defer tb.done()
	s := newSite(tb)
	ctx := context.Background()

	g, err := client.New(s.url)
	if err != nil {
		panic(err)
	}
	totp := s.authenticator(tb) // in a program: ask the user for the code
	if err := g.SignIn(ctx, s.email, password, totp); err != nil {
		panic(err)
	}
	me, err := client.OK(g.AuthMeWithResponse(ctx))
	if err != nil {
		panic(err)
	}
	fmt.Println(me.JSON200.User.Email == s.email, me.JSON200.User.MfaEnabled)
	// Output: true true
}

// OK turns an error answer into *APIError with its status, code and the
// messages per field.
func ExampleOK() {
	tb := &exampleTB{}
	defer tb.done()
	s := newSite(tb)
	g := s.signIn(tb)

	_, err := client.OK(g.CreateApiKeyWithResponse(context.Background(), client.ApiKeyCreateRequest{
		OrgId: uuid.MustParse(s.orgID),
		Name:  "",
	}))
	var apiErr *client.APIError
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.Status, apiErr.Code, apiErr.Message)
		fmt.Println("name:", apiErr.FieldErrors["name"] != nil)
	}
	// Output:
	// 400 validation_failed Validation failed
	// name: true
}

// All walks a list page by page; an API key authenticates with X-API-Key.
func ExampleAll() {
	tb := &exampleTB{}
	defer tb.done()
	s := newSite(tb)
	ctx := context.Background()
	s.device(tb, "ws-01")
	s.device(tb, "ws-02")
	s.device(tb, "ws-03")
	g := s.signIn(tb)
	issued, err := client.OK(g.CreateApiKeyWithResponse(ctx, client.ApiKeyCreateRequest{
		OrgId:  uuid.MustParse(s.orgID),
		Name:   "inventory sync",
		Scopes: &[]string{"devices:read"},
	}))
	if err != nil {
		panic(err)
	}

	k, err := client.New(s.url, client.WithAPIKey(issued.JSON201.Key))
	if err != nil {
		panic(err)
	}
	limit := 2
	var hosts []string
	for d, err := range client.All(func(page int, cursor *string) ([]client.Device, client.Pagination, error) {
		r, err := client.OK(k.ListDevicesWithResponse(ctx, &client.ListDevicesParams{Page: &page, Limit: &limit, Cursor: cursor}))
		if err != nil {
			return nil, client.Pagination{}, err
		}
		return r.JSON200.Data, r.JSON200.Pagination, nil
	}) {
		if err != nil {
			panic(err)
		}
		hosts = append(hosts, d.Hostname)
	}
	slices.Sort(hosts)
	fmt.Println(hosts)
	// Output: [ws-01 ws-02 ws-03]
}
