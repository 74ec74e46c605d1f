package user_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/shared/passhash"

	"github.com/google/uuid"

	"github.com/gale-rmm/gale/shared/authz"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

func TestEmailUniqueCaseInsensitiveUnderConcurrency(t *testing.T) {
	env := testenv.New(t)
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			email := "Dana@Example.com"
			if i%2 == 1 {
				email = strings.ToUpper(email)
			}
			u := &user.User{ID: uuid.NewString(), Email: email, Name: "Dana", Status: user.StatusActive}
			errs[i] = env.Store.Commit(t.Context(), (&store.Tx{}).Add(user.CreateWrites(u)...))
		}()
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, store.ErrConditionFailed):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d users created with one e-mail", wins)
	}
	u, err := env.Users.ByEmail(t.Context(), "dana@EXAMPLE.com")
	if err != nil || u.Name != "Dana" {
		t.Fatalf("lookup: %v %+v", err, u)
	}
}

func TestPasswordHashIsArgon2idAndVerifies(t *testing.T) {
	h, err := passhash.Hash("Correct-Horse-Battery-9")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$argon2id$v=19$m=19456,t=2,p=1$") {
		t.Fatalf("hash %q does not use the OWASP parameters", h)
	}
	if !passhash.Verify(h, "Correct-Horse-Battery-9") || passhash.Verify(h, "correct-horse-battery-9") {
		t.Fatal("verification wrong")
	}
	if passhash.Verify("", "anything") || passhash.Verify("$argon2id$garbage", "x") {
		t.Fatal("empty or malformed hash must not verify")
	}
}

func TestPasswordGoldenVector(t *testing.T) {
	// Recorded from golang.org/x/crypto/argon2 (IDKey "password", salt "saltsaltsaltsalt",
	// t=2, m=19456, p=1): guards the PHC encoding and its parsing across changes.
	const golden = "$argon2id$v=19$m=19456,t=2,p=1$c2FsdHNhbHRzYWx0c2FsdA$T95q7S205tf9WI4HhYOZDIQmMMAbntacGXTIku0gXT8"
	if !passhash.Verify(golden, "password") {
		t.Fatal("golden Argon2id vector does not verify")
	}
	if passhash.Verify(golden, "Password") {
		t.Fatal("golden vector verified a different password")
	}
}

func TestMembershipsAreScopedByTenant(t *testing.T) {
	env := testenv.New(t)
	orgA, orgB := uuid.NewString(), uuid.NewString()
	mk := func(org string) string {
		u := &user.User{ID: uuid.NewString(), Email: fmt.Sprintf("%s@example.com", uuid.NewString()[:8]), Status: user.StatusActive}
		m := &user.Membership{ID: uuid.NewString(), UserID: u.ID, Scope: authz.ScopeOrg, OrgID: org, RoleID: "r", RoleOwner: "SYSTEM"}
		if err := env.Store.Commit(t.Context(), (&store.Tx{}).Add(user.CreateWrites(u)...).Add(user.AddMembershipWrite(m))); err != nil {
			t.Fatal(err)
		}
		return u.ID
	}
	a1, a2, b1 := mk(orgA), mk(orgA), mk(orgB)
	got, err := env.Users.Members(t.Context(), authz.ScopeOrg, "", orgA)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, m := range got {
		ids[m.UserID] = true
	}
	if len(got) != 2 || !ids[a1] || !ids[a2] || ids[b1] {
		t.Fatalf("members of A = %v", ids)
	}
	// A second membership in the same tenant is refused by the store.
	dup := &user.Membership{ID: uuid.NewString(), UserID: a1, Scope: authz.ScopeOrg, OrgID: orgA, RoleID: "r2", RoleOwner: "SYSTEM"}
	if err := env.Store.Do(t.Context(), user.AddMembershipWrite(dup)); !errors.Is(err, store.ErrConditionFailed) {
		t.Fatalf("duplicate membership: %v", err)
	}
}

func TestLookAlikeAddressesAreOneAddress(t *testing.T) {
	if got := user.NormalizeEmail("ａｌｉｃｅ＠ｅｘａｍｐｌｅ．ｃｏｍ"); got != "alice@example.com" {
		t.Fatalf("full-width address normalised to %q", got)
	}
	if got := user.NormalizeEmail(" Alice@Example.COM "); got != "alice@example.com" {
		t.Fatalf("got %q", got)
	}
}
