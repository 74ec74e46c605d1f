package config

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
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

// With GALE_XRAY=true each AWS call is sent to the X-Ray daemon as a
// subsegment of the invocation's trace; unsampled invocations send nothing.
func TestXRaySubsegments(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	f := &fakeSecrets{values: map[string]string{"arn:x": `{}`}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	t.Setenv("AWS_ACCESS_KEY_ID", "testing")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "testing")
	t.Setenv("GALE_XRAY", "true")
	t.Setenv("AWS_XRAY_DAEMON_ADDRESS", udp.LocalAddr().String())
	c, err := load(t, map[string]string{"AWS_ENDPOINT_URL": srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	unsampled := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0")
	sampled := context.WithValue(context.Background(), "x-amzn-trace-id", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	if _, err := c.ReadSecret(unsampled, "arn:x"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ReadSecret(sampled, "arn:x"); err != nil {
		t.Fatal(err)
	}
	_ = udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65536)
	n, _, err := udp.ReadFrom(buf)
	if err != nil {
		t.Fatal(err)
	}
	header, body, ok := strings.Cut(string(buf[:n]), "\n")
	if !ok || header != `{"format": "json", "version": 1}` {
		t.Fatalf("datagram %q", buf[:n])
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	aws, _ := doc["aws"].(map[string]any)
	if doc["type"] != "subsegment" || doc["name"] != "Secrets Manager" || doc["trace_id"] != "1-5759e988-bd862e3fe1be46a994272793" ||
		doc["parent_id"] != "53995c3f42cd8ad8" || aws["operation"] != "GetSecretValue" || doc["namespace"] != "aws" ||
		len(doc["id"].(string)) != 16 || doc["end_time"].(float64) < doc["start_time"].(float64) {
		t.Fatalf("subsegment %s", body)
	}
	// Only one datagram: the unsampled call sent none.
	_ = udp.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, _, err := udp.ReadFrom(buf); err == nil {
		t.Fatalf("second datagram %q", buf[:n])
	}
	if got := daemonUDP("tcp:127.0.0.1:2000 udp:127.0.0.2:2001"); got != "127.0.0.2:2001" {
		t.Errorf("daemonUDP = %q", got)
	}
}
