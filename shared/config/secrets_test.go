package config

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeSecrets answers GetSecretValue and PutSecretValue (the Secrets Manager
// JSON protocol) from a map, and records which secrets were read.
type fakeSecrets struct {
	mu     sync.Mutex
	values map[string]string
	reads  []string
}

func (f *fakeSecrets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct{ SecretId, SecretString string }
	_ = json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	switch r.Header.Get("X-Amz-Target") {
	case "secretsmanager.GetSecretValue":
		f.reads = append(f.reads, in.SecretId)
		v, ok := f.values[in.SecretId]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"ResourceNotFoundException","message":"no such secret"}`))
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"ARN": in.SecretId, "SecretString": v})
	case "secretsmanager.PutSecretValue":
		f.values[in.SecretId] = in.SecretString
		_ = json.NewEncoder(w).Encode(map[string]string{"ARN": in.SecretId})
	default:
		w.WriteHeader(http.StatusBadRequest)
	}
}

func TestSecretsByPurpose(t *testing.T) {
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	seed := strings.Repeat("ab", 32)
	prev := strings.Repeat("cd", 32)
	f := &fakeSecrets{values: map[string]string{
		"arn:signing":    `{"version": 3, "current": "` + seed + `", "previous": "` + prev + `"}`,
		"arn:encryption": `{"current": "` + strings.Repeat("e", 64) + `", "previous": "` + strings.Repeat("f", 64) + `"}`,
		"arn:pepper":     `{"pepper": "` + strings.Repeat("p", 64) + `"}`,
		"arn:admin":      `{"password": "Generated-Admin-Password-1!"}`,
	}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	base := map[string]string{"APP_ENV": "production", "AWS_ENDPOINT_URL": srv.URL}
	with := func(kv ...string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}

	// A sign-in function: signing key, encryption key; the public keys are
	// not read at start.
	c, err := load(t, with("TOKEN_SIGNING_SECRET_ARN", "arn:signing", "ENCRYPTION_SECRET_ARN", "arn:encryption",
		"TOKEN_PUBLIC_KEYS_SECRET_ARN", "arn:public"))
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenSigningKey != seed || c.TokenSigningKeyPrevious != prev || c.TokenKeysVersion != 3 || c.TokenPublicKeysARN != "arn:public" {
		t.Errorf("token keys: %q %q v%d %q", c.TokenSigningKey, c.TokenSigningKeyPrevious, c.TokenKeysVersion, c.TokenPublicKeysARN)
	}
	if string(c.EncryptionKey) != strings.Repeat("e", 64) || len(c.PreviousEncryptionKeys) != 1 ||
		string(c.PreviousEncryptionKeys[0]) != strings.Repeat("f", 64) {
		t.Errorf("encryption keys: %q %q", c.EncryptionKey, c.PreviousEncryptionKeys)
	}
	if strings.Contains(strings.Join(f.reads, ","), "arn:public") {
		t.Errorf("public keys read at start: %v", f.reads)
	}
	// The pepper falls back to the encryption key (spec 1's order) without its secret.
	if string(c.EnrollPepper) != strings.Repeat("e", 64) || c.SystemAdminPassword != "" {
		t.Errorf("pepper %q, admin password %q", c.EnrollPepper, c.SystemAdminPassword)
	}

	// A verify-only function: no signing key, no development key either.
	c, err = load(t, with("ENCRYPTION_SECRET_ARN", "arn:encryption", "TOKEN_PUBLIC_KEYS_SECRET_ARN", "arn:public"))
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenSigningKey != "" {
		t.Errorf("verify-only function holds a signing key")
	}

	// The sweeper: pepper and the administrator's password.
	c, err = load(t, with("ENCRYPTION_SECRET_ARN", "arn:encryption", "ENROLLMENT_PEPPER_SECRET_ARN", "arn:pepper",
		"ADMIN_PASSWORD_SECRET_ARN", "arn:admin"))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.EnrollPepper) != strings.Repeat("p", 64) || c.SystemAdminPassword != "Generated-Admin-Password-1!" {
		t.Errorf("pepper %q, admin password %q", c.EnrollPepper, c.SystemAdminPassword)
	}

	// The environment wins over the secret.
	c, err = load(t, with("ENCRYPTION_SECRET_ARN", "arn:encryption", "APP_ENCRYPTION_KEY", strings.Repeat("x", 40)))
	if err != nil {
		t.Fatal(err)
	}
	if string(c.EncryptionKey) != strings.Repeat("x", 40) {
		t.Errorf("encryption key %q", c.EncryptionKey)
	}

	// A missing or malformed secret stops the start, naming it.
	f.values["arn:bad"] = "not json"
	for _, arn := range []string{"arn:missing", "arn:bad"} {
		if _, err := load(t, with("ENCRYPTION_SECRET_ARN", arn)); err == nil || !strings.Contains(err.Error(), arn) {
			t.Errorf("%s: err = %v", arn, err)
		}
	}

	// Publishing writes the public-keys secret.
	if err := c.PutSecret(context.Background(), "arn:public", `{"keys":[]}`); err != nil {
		t.Fatal(err)
	}
	if got, err := c.ReadSecret(context.Background(), "arn:public"); err != nil || got != `{"keys":[]}` {
		t.Fatalf("read back %q, %v", got, err)
	}
}

func TestDevelopmentSignsWithTheDevelopmentKey(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenSigningKey != DevelopmentTokenKey() || len(DevelopmentTokenKey()) != 64 {
		t.Fatalf("development token key %q", c.TokenSigningKey)
	}
	c, err = load(t, map[string]string{"APP_ENV": "production", "APP_ENCRYPTION_KEY": strings.Repeat("k", 40)})
	if err != nil {
		t.Fatal(err)
	}
	if c.TokenSigningKey != "" {
		t.Fatal("production without keys got the development key")
	}
}

// A deployed function is refused only the secrets it needs (shared/routes).
func TestProductionChecksOnlyNeededSecrets(t *testing.T) {
	for fn, ok := range map[string]bool{"health": true, "webhook-worker": false, "enrollment-keys": false, "users": true} {
		_, err := load(t, map[string]string{"APP_ENV": "production", "GALE_FUNCTION": fn})
		if (err == nil) != ok {
			t.Errorf("%s without secrets: err = %v", fn, err)
		}
	}
	_, err := load(t, map[string]string{"APP_ENV": "production", "GALE_FUNCTION": "enrollment-keys"})
	if err == nil || err.Error() != "No enrollment key pepper configured" {
		t.Errorf("enrollment-keys: %v", err)
	}
}
