package principal_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/gale-rmm/gale/shared/apikey"
	"github.com/gale-rmm/gale/shared/principal"
	"github.com/gale-rmm/gale/shared/store"
	"github.com/gale-rmm/gale/shared/user"
	"github.com/gale-rmm/gale/tests/fixture"
	"github.com/gale-rmm/gale/tests/testenv"
)

func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }

const (
	keysURL = "/api/v1/api-keys"
	spURL   = "/api/v1/service-principals"
)

var (
	errText = fixture.ErrorText
	setAttr = fixture.SetAttr
)

func profileKey(uid string) store.KeyRef { return user.ProfileKey(uid) }

func TestServicePrincipalLifecycle(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "Backup bot", "scopes": []string{"devices:read", "scripts:read"}})
	if sp.Status != "active" || sp.APIKeyID == "" || !strings.HasPrefix(sp.Key, "svc_") || sp.KeyPrefix != sp.Key[:12] || sp.Warning == "" {
		t.Fatalf("created %+v", sp)
	}
	fixture.Expect(t, w.WithKey(t, sp.Key, ""), http.StatusOK)
	// The principal's key does not depend on the user who created it.
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "disabled")
	fixture.Expect(t, w.WithKey(t, sp.Key, ""), http.StatusOK)
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "active")

	// Rotate: a new key, the previous revoked in the same step.
	res := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	next, _ := res["key"].(string)
	if res["apiKeyId"] == sp.APIKeyID || next == "" {
		t.Fatalf("rotate: %v", res)
	}
	if r := w.WithKey(t, sp.Key, ""); r.Status != 401 || errText(t, r) != "API key is revoked" {
		t.Fatalf("previous key after rotation: %d %s", r.Status, r.Body)
	}
	fixture.Expect(t, w.WithKey(t, next, ""), http.StatusOK)

	// Migrate a user's key: its scopes narrow to the intersection, and it no longer depends on the user.
	k := w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "legacy", "scopes": []string{"devices:read", "sites:read"}})
	mig := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.AAdmin, map[string]any{"keyId": k.ID}), http.StatusOK).JSON(t)
	if sc, _ := mig["scopes"].([]any); len(sc) != 1 || sc[0] != "devices:read" || mig["servicePrincipalId"] != sp.ID {
		t.Fatalf("migrated: %v", mig)
	}
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "disabled")
	fixture.Expect(t, w.WithKey(t, k.Key, ""), http.StatusOK)
	setAttr(t, w.Env, profileKey(w.Users[fixture.AAdmin]), "status", "active")

	// Disable: every active key of the principal is revoked; disabled is final.
	dis := fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/disable", fixture.AAdmin, nil), http.StatusOK).JSON(t)
	if dis["status"] != "disabled" {
		t.Fatalf("disable: %v", dis)
	}
	for _, raw := range []string{next, k.Key} {
		if r := w.WithKey(t, raw, ""); r.Status != 401 || errText(t, r) != "API key is revoked" {
			t.Fatalf("key of a disabled principal: %d %s", r.Status, r.Body)
		}
	}
	r := w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.AAdmin, nil)
	if fixture.Expect(t, r, http.StatusConflict); errText(t, r) != "Service principal is disabled" {
		t.Fatalf("rotate on a disabled principal: %s", r.Body)
	}
	// A kill switch never refuses: disabling again answers 200 (and revokes
	// whatever a first disable left).
	fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/disable", fixture.AAdmin, nil), http.StatusOK)
	k2 := w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "other", "scopes": []string{"devices:read"}})
	fixture.Expect(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.AAdmin, map[string]any{"keyId": k2.ID}), http.StatusConflict)
}

func TestServicePrincipalRules(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	// Ceiling: the acting user holds every scope granted.
	r := w.Call(t, http.MethodPost, spURL, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "x", "scopes": []string{"*"}})
	if fixture.Expect(t, r, http.StatusForbidden); errText(t, r) != "Cannot grant scopes you do not hold" {
		t.Fatalf("ceiling: %s", r.Body)
	}
	// Site- and group-restricted users are refused explicitly, on every route.
	for _, caller := range []string{fixture.ARestricted, fixture.AGroupOnly} {
		for _, c := range []struct {
			method, path string
			body         any
		}{{http.MethodGet, spURL, nil}, {http.MethodPost, spURL, map[string]any{"orgId": w.A.ID, "name": "x", "scopes": []string{}}}} {
			r := w.Call(t, c.method, c.path, caller, c.body)
			if fixture.Expect(t, r, http.StatusForbidden); errText(t, r) != "Site-restricted users cannot manage service principals, which are organization-wide" {
				t.Fatalf("%s %s as %s: %s", c.method, c.path, caller, r.Body)
			}
		}
	}
	// Migrate only keys of the principal's organization.
	sp := w.ServicePrincipal(t, fixture.PXAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"*"}})
	kb := w.APIKey(t, fixture.PXAdmin, map[string]any{"orgId": w.B.ID, "name": "b", "scopes": []string{"devices:read"}})
	fixture.Invalid(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.PXAdmin, map[string]any{"keyId": kb.ID}), "keyId")
	// MFA is required for the writes.
	fixture.ExpectError(t, w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.ANoMFA, nil), http.StatusForbidden, "MFA_REQUIRED")
}

func TestConcurrentPrincipalRotationsLeaveOneActiveKey(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	const n = 8
	var wg sync.WaitGroup
	codes := make([]int, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/rotate", fixture.AAdmin, nil).Status
		}()
	}
	wg.Wait()
	won := 0
	for _, c := range codes {
		if c == http.StatusOK {
			won++
		} else if c != http.StatusConflict {
			t.Fatalf("codes %v", codes)
		}
	}
	// A rotation that reads after another's commit rotates again
	// (legitimately); whatever the interleaving, someone won and exactly one
	// of the principal's keys is active.
	if won < 1 {
		t.Fatalf("no winner: %v", codes)
	}
	res := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"?status=active", fixture.AAdmin, nil), http.StatusOK)
	if got := len(fixture.IDs(t, res)); got != 1 {
		t.Fatalf("%d active keys, want 1", got)
	}
}

// principalKeys answers the status of every key row principal spID owns.
func principalKeyStatuses(t *testing.T, w *fixture.World, spID string) map[string]int {
	t.Helper()
	keys, err := apikey.Store{St: w.Env.Store}.OrgKeys(context.Background(), w.A.ID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, k := range keys {
		if k.PrincipalID == spID {
			out[k.Status]++
		}
	}
	return out
}

// Disabling a principal is a kill switch
// (docs/decisions.md#kill-switches-always-win): raced by 20 migrations into it
// and 20 rotations of it, it answers 200, and afterwards no key of the
// principal, the first, a rotated one or a migrated one, authenticates, and
// every key row it owns is revoked.
func TestDisableWinsAgainstRotationsAndMigrations(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	var users []fixture.IssuedKey
	for range 20 {
		users = append(users, w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "u", "scopes": []string{"devices:read"}}))
	}
	raws := []string{sp.Key}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var disabled fixture.Response
	start := make(chan struct{})
	call := func(path string, body any, keep func(fixture.Response)) {
		defer wg.Done()
		<-start
		res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: spURL + "/" + sp.ID + path,
			Token: w.Tokens[fixture.AAdmin], Body: body})
		if res.Status >= 500 {
			t.Errorf("%s: %d %s", path, res.Status, res.Body)
		}
		mu.Lock()
		defer mu.Unlock()
		keep(res)
	}
	wg.Add(41)
	go call("/disable", nil, func(r fixture.Response) { disabled = r })
	for i := range 20 {
		go call("/rotate", nil, func(r fixture.Response) {
			if r.Status == http.StatusOK {
				raws = append(raws, r.JSON(t)["key"].(string))
			}
		})
		go call("/migrate-key", map[string]any{"keyId": users[i].ID}, func(fixture.Response) {})
		raws = append(raws, users[i].Key) // a migrated key is the principal's; one that stayed its creator's is checked too
	}
	close(start)
	wg.Wait()
	if disabled.Status != http.StatusOK {
		t.Fatalf("disable raced by rotations and migrations: %d %s", disabled.Status, disabled.Body)
	}
	migrated := principalKeyStatuses(t, w, sp.ID)
	if migrated[apikey.StatusActive] != 0 {
		t.Fatalf("after disable the principal's key rows are %v", migrated)
	}
	for i, raw := range raws {
		res := w.WithKey(t, raw, "")
		owned := i == 0 || res.Status != http.StatusOK
		if !owned {
			// A user key whose migration lost to the disable stays its creator's and works.
			k, err := apikey.Store{St: w.Env.Store}.Key(context.Background(), w.A.ID, keyIDOf(users, raw))
			if err != nil || k.PrincipalID == sp.ID {
				t.Errorf("key %d of the disabled principal authenticates: %d", i, res.Status)
			}
			continue
		}
		if res.Status != http.StatusUnauthorized {
			t.Errorf("key %d after the disable: %d %s", i, res.Status, res.Body)
		}
	}
	t.Logf("after the race the principal owns %v key rows", migrated)
}

func keyIDOf(users []fixture.IssuedKey, raw string) string {
	for _, u := range users {
		if u.Key == raw {
			return u.ID
		}
	}
	return ""
}

// A principal owning 200 active keys (more than one transaction holds) is
// disabled by one call: 200, every key refused at once, every row revoked.
func TestDisableAPrincipalOf200Keys(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	raws, err := principal.MintKeys(context.Background(), w.Env.Store, w.A.ID, sp.ID, 199, "2026-11-01T09:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	raws = append(raws, sp.Key)
	fixture.Expect(t, w.WithKey(t, raws[7], ""), http.StatusOK)
	res := fixture.Do(t, w.API, fixture.Request{Method: http.MethodPost, Path: spURL + "/" + sp.ID + "/disable", Token: w.Tokens[fixture.AAdmin]})
	fixture.Expect(t, res, http.StatusOK)
	if got := principalKeyStatuses(t, w, sp.ID); got[apikey.StatusRevoked] != 200 || len(got) != 1 {
		t.Fatalf("key rows after disabling a principal of 200 keys: %v", got)
	}
	for _, i := range []int{0, 7, 99, 199} {
		if r := w.WithKey(t, raws[i], ""); r.Status != http.StatusUnauthorized {
			t.Errorf("key %d after disable: %d %s", i, r.Status, r.Body)
		}
	}
}

// Authentication reads the principal's state: a principal disabled while its
// key rows are still active (the revocation had not reached them) refuses
// them at once.
func TestDisabledPrincipalsKeysAreRefusedBeforeTheirRowsAreRevoked(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	fixture.Expect(t, w.WithKey(t, sp.Key, ""), http.StatusOK)
	k, err := principal.Store{St: w.Env.Store}.Principal(context.Background(), w.A.ID, sp.ID)
	if err != nil {
		t.Fatal(err)
	}
	setAttr(t, w.Env, store.KeyRef{PK: k.PK, SK: k.SK}, "status", "disabled")
	if r := w.WithKey(t, sp.Key, ""); r.Status != http.StatusUnauthorized || errText(t, r) != "API key is revoked" {
		t.Fatalf("key of a principal disabled, row still active: %d %s", r.Status, r.Body)
	}
}

// Finding 3 of issue 18: migrate-key checked the principal's version but did
// not bump it, so keys migrated beside a disable stayed active under the
// disabled principal.
func TestDisableSerialisesWithMigrations(t *testing.T) {
	t.Parallel()
	w := fixture.NewKeyWorld(t)
	sp := w.ServicePrincipal(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "bot", "scopes": []string{"devices:read"}})
	const n = 12
	keys := make([]fixture.IssuedKey, n)
	for i := range keys {
		keys[i] = w.APIKey(t, fixture.AAdmin, map[string]any{"orgId": w.A.ID, "name": "k", "scopes": []string{"devices:read"}})
	}
	var wg sync.WaitGroup
	disabled := 0
	wg.Add(n + 1)
	for i := range keys {
		go func(id string) {
			defer wg.Done()
			res := w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/migrate-key", fixture.AAdmin, map[string]any{"keyId": id})
			if res.Status != http.StatusOK && res.Status != http.StatusConflict {
				t.Errorf("migrate: %d %s", res.Status, res.Body)
			}
		}(keys[i].ID)
	}
	go func() {
		defer wg.Done()
		for range 20 {
			res := w.Call(t, http.MethodPost, spURL+"/"+sp.ID+"/disable", fixture.AAdmin, nil)
			if res.Status == http.StatusOK {
				disabled++
				return
			}
			if res.Status != http.StatusConflict {
				t.Errorf("disable: %d %s", res.Status, res.Body)
				return
			}
		}
	}()
	wg.Wait()
	if disabled != 1 {
		t.Fatalf("disable never answered 200")
	}
	for _, k := range keys {
		got := fixture.Expect(t, w.Call(t, http.MethodGet, keysURL+"/"+k.ID, fixture.AAdmin, nil), http.StatusOK).JSON(t)
		if got["servicePrincipalId"] == sp.ID && got["status"] == "active" {
			t.Errorf("key %s of the disabled principal is active", k.ID)
		}
		if got["servicePrincipalId"] == sp.ID && w.WithKey(t, k.Key, "").Status != http.StatusUnauthorized {
			t.Errorf("key %s of the disabled principal authenticates", k.ID)
		}
	}
}
