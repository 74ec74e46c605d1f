package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/gale-rmm/gale/shared/routes"
)

// Secrets by purpose. Each lives in its own Secrets Manager secret, named by its
// own ARN variable, so a function is granted exactly the ones it uses (the CDK
// app reads the needs table in shared/routes):
//
//	TOKEN_SIGNING_SECRET_ARN      {"version": n, "current": hex seed, "previous": hex seed}  token issuers only
//	TOKEN_PUBLIC_KEYS_SECRET_ARN  JWKS {"version": n, "keys": [...]}: written by the issuers, read by the rest
//	ENCRYPTION_SECRET_ARN         {"current": key, "previous": key}  seals TOTP seeds, webhook and SSO secrets
//	ENROLLMENT_PEPPER_SECRET_ARN  {"pepper": value}                  enrollment-key hashes
//	ADMIN_PASSWORD_SECRET_ARN     {"password": value}                the sweeper's bootstrap job only
//
// A value set directly in the environment (TOKEN_SIGNING_KEY, APP_ENCRYPTION_KEY,
// ENROLLMENT_KEY_PEPPER, SYSTEM_ADMIN_PASSWORD, ...) wins over the secret's.
// Secrets are read at cold start, concurrently; the public keys are not (the
// key ring reads them when a token first needs them).
const (
	envTokenSigningSecret = "TOKEN_SIGNING_SECRET_ARN"
	envTokenPublicKeys    = "TOKEN_PUBLIC_KEYS_SECRET_ARN"
	envEncryptionSecret   = "ENCRYPTION_SECRET_ARN"
	envPepperSecret       = "ENROLLMENT_PEPPER_SECRET_ARN"
	envAdminSecret        = "ADMIN_PASSWORD_SECRET_ARN"
)

// secretValues are the secret settings after the environment and the secrets
// are merged.
type secretValues struct {
	tokenVersion                string
	tokenCurrent, tokenPrevious string
	encCurrent, encPrevious     string
	encLegacy                   string // SECRET_ENCRYPTION_KEY
	jwtSecret                   string // JWT_SECRET: only a fallback of the pepper now (spec 1)
	pepper                      string
	adminPassword               string
}

func (c *Config) loadSecrets(ctx context.Context, get Getenv) error {
	v := secretValues{
		tokenVersion:  get("TOKEN_KEYS_VERSION"),
		tokenCurrent:  get("TOKEN_SIGNING_KEY"),
		tokenPrevious: get("TOKEN_SIGNING_KEY_PREVIOUS"),
		encCurrent:    get("APP_ENCRYPTION_KEY"),
		encPrevious:   get("APP_ENCRYPTION_KEY_PREVIOUS"),
		encLegacy:     get("SECRET_ENCRYPTION_KEY"),
		jwtSecret:     get("JWT_SECRET"),
		pepper:        get("ENROLLMENT_KEY_PEPPER"),
		adminPassword: get("SYSTEM_ADMIN_PASSWORD"),
	}
	c.TokenPublicKeysARN = get(envTokenPublicKeys)

	type read struct {
		env  string
		into func(m map[string]json.RawMessage)
	}
	str := func(m map[string]json.RawMessage, k string) string {
		var s string
		if raw, ok := m[k]; ok {
			if json.Unmarshal(raw, &s) != nil { // a number (the version)
				s = string(raw)
			}
		}
		return s
	}
	reads := []read{
		{envTokenSigningSecret, func(m map[string]json.RawMessage) {
			v.tokenVersion = first(v.tokenVersion, str(m, "version"))
			if v.tokenCurrent == "" {
				v.tokenCurrent, v.tokenPrevious = str(m, "current"), first(v.tokenPrevious, str(m, "previous"))
			}
		}},
		{envEncryptionSecret, func(m map[string]json.RawMessage) {
			if v.encCurrent == "" {
				v.encCurrent, v.encPrevious = str(m, "current"), first(v.encPrevious, str(m, "previous"))
			}
		}},
		{envPepperSecret, func(m map[string]json.RawMessage) { v.pepper = first(v.pepper, str(m, "pepper")) }},
		{envAdminSecret, func(m map[string]json.RawMessage) { v.adminPassword = first(v.adminPassword, str(m, "password")) }},
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, r := range reads {
		arn := get(r.env)
		if arn == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			raw, err := c.ReadSecret(ctx, arn)
			var m map[string]json.RawMessage
			if err == nil {
				if err = json.Unmarshal([]byte(raw), &m); err != nil {
					err = fmt.Errorf("config: secret %s (%s) is not the expected JSON object", arn, r.env)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			r.into(m)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return c.applySecrets(v)
}

// Development defaults so `make run` and tests need no secrets; refused in production.
const devSecret = "gale-development-only-secret-do-not-deploy"

// DevelopmentTokenKey is the token-signing key (hex Ed25519 seed) of local runs
// and tests: derived from a fixed label, so every process of a local run
// agrees without configuration and nothing is generated at start. Refused in
// production.
func DevelopmentTokenKey() string {
	sum := sha256.Sum256([]byte("gale development token-signing key; never deploy"))
	return hex.EncodeToString(sum[:])
}

func (c *Config) applySecrets(v secretValues) error {
	// Spec 1: the pepper is the first configured of these four settings, and a
	// production process without any fails with exactly this message.
	// A deployed function (GALE_FUNCTION, set by the CDK app) is refused only
	// the secrets its needs (shared/routes) list; without the name, all are.
	needs := func(s routes.Secret) bool { return c.Function == "" || routes.NeedsOf(c.Function).Holds(s) }
	pepper := first(v.pepper, v.encCurrent, v.encLegacy, v.jwtSecret)
	switch {
	case pepper != "":
		c.EnrollPepper = []byte(pepper)
	case !c.Production():
		c.EnrollPepper = []byte(devSecret)
	case needs(routes.SecretEnrollmentPepper):
		return errors.New("No enrollment key pepper configured")
	}

	// Token keys. A function with neither a signing key nor the public-keys
	// secret refuses every token (the workers); outside production every
	// process signs with the development key.
	c.TokenSigningKey, c.TokenSigningKeyPrevious = v.tokenCurrent, v.tokenPrevious
	if c.TokenSigningKey == "" && c.TokenPublicKeysARN == "" && !c.Production() {
		c.TokenSigningKey = DevelopmentTokenKey()
	}
	if c.Production() && (c.TokenSigningKey == DevelopmentTokenKey() || c.TokenSigningKeyPrevious == DevelopmentTokenKey()) {
		return errors.New("config: the development token-signing key is refused in production")
	}
	for name, k := range map[string]string{"TOKEN_SIGNING_KEY": c.TokenSigningKey, "TOKEN_SIGNING_KEY_PREVIOUS": c.TokenSigningKeyPrevious} {
		if b, err := hex.DecodeString(k); k != "" && (err != nil || len(b) != 32) {
			return fmt.Errorf("config: %s must be 64 hex digits (a 32-byte Ed25519 seed)", name)
		}
	}
	if v.tokenVersion != "" {
		n, err := strconv.Atoi(v.tokenVersion)
		if err != nil || n < 0 {
			return fmt.Errorf("config: the token keys' version must be a whole number, got %q", v.tokenVersion)
		}
		c.TokenKeysVersion = n
	}

	enc := first(v.encCurrent, v.encLegacy)
	switch {
	case enc == "" && !c.Production():
		enc = devSecret
	case enc == "" && needs(routes.SecretEncryption):
		return errors.New("config: APP_ENCRYPTION_KEY (or ENCRYPTION_SECRET_ARN) is required in production")
	case enc != "" && c.Production() && len(enc) < 32:
		return errors.New("config: the encryption key must be at least 32 characters in production")
	}
	if enc != "" {
		c.EncryptionKey = []byte(enc)
	}
	if v.encPrevious != "" && v.encPrevious != enc {
		c.PreviousEncryptionKeys = [][]byte{[]byte(v.encPrevious)}
	}
	c.SystemAdminPassword = v.adminPassword
	return nil
}

// ReadSecret returns the string value of the Secrets Manager secret arn.
func (c Config) ReadSecret(ctx context.Context, arn string) (string, error) {
	sm, err := c.secrets(ctx)
	if err != nil {
		return "", err
	}
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return "", fmt.Errorf("config: read secret %s: %w", arn, err)
	}
	return aws.ToString(out.SecretString), nil
}

// PutSecret stores value as the current version of the secret arn (the token
// issuers publish their public keys this way).
func (c Config) PutSecret(ctx context.Context, arn, value string) error {
	sm, err := c.secrets(ctx)
	if err != nil {
		return err
	}
	if _, err := sm.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(arn), SecretString: aws.String(value)}); err != nil {
		return fmt.Errorf("config: write secret %s: %w", arn, err)
	}
	return nil
}

func (c Config) secrets(ctx context.Context) (*secretsmanager.Client, error) {
	cfg, err := c.AWS(ctx)
	if err != nil {
		return nil, err
	}
	return secretsmanager.NewFromConfig(cfg), nil
}
