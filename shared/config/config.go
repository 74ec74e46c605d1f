// Package config reads Gale's settings from the environment once, at cold start.
// Every setting is listed in the README's configuration table; keep the two in step.
package config

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Config is every setting of a Gale process.
type Config struct {
	Env string // development, test or production
	// Function is the deployed function's name in shared/routes (GALE_FUNCTION,
	// set by the CDK app); empty in local runs and tests.
	Function string
	Version  string
	AppURL   string
	Region   string
	// Endpoint overrides every AWS endpoint (moto_server or LocalStack).
	Endpoint string

	Table            string
	EventsQueueURL   string
	DeliveryQueueURL string
	DeliveryDLQURL   string
	EventsDLQURL     string
	MailQueueURL     string
	MailDLQURL       string
	EmailFrom        string
	// PushAPNSAppARN and PushFCMAppARN are the SNS platform applications
	// the mailer sends mobile push through (PUSH_APNS_APP_ARN,
	// PUSH_FCM_APP_ARN); unset, push messages of that platform are dropped
	// (logged).
	PushAPNSAppARN string
	PushFCMAppARN  string

	// Token keys (secrets.go): hex Ed25519 seeds, set only in the functions
	// that issue access tokens; TokenKeysVersion is the signing secret's
	// rotation counter. TokenPublicKeysARN is the secret where those functions
	// publish the public keys and every other function reads them.
	TokenKeysVersion        int
	TokenSigningKey         string
	TokenSigningKeyPrevious string
	TokenPublicKeysARN      string

	// EncryptionKey seals TOTP seeds, webhook secrets and SSO client secrets;
	// PreviousEncryptionKeys still open what was sealed before a rotation.
	EncryptionKey          []byte
	PreviousEncryptionKeys [][]byte
	EnrollPepper           []byte
	EnrollPepperOK         bool

	EnableRegistration bool
	Enable2FA          bool

	SystemAdminEmail    string
	SystemAdminPassword string

	EnrollmentKeyTTL   time.Duration
	PAMActuatorEnabled bool
	PAMPendingTTL      time.Duration
	// Retention: how long rows of history stay before DynamoDB's TTL removes
	// them (README, "Retention").
	AuditRetention           time.Duration // AUDIT_RETENTION_DAYS, default 400
	WebhookDeliveryRetention time.Duration // WEBHOOK_DELIVERY_RETENTION_DAYS, default 30
	// A webhook becomes failed (and stops receiving) after at least
	// WebhookFailureThreshold consecutive failed deliveries, the first of them
	// at least WebhookFailureWindow ago (shared/webhook, FailurePolicy).
	WebhookFailureThreshold int           // WEBHOOK_FAILURE_THRESHOLD, default 50
	WebhookFailureWindow    time.Duration // WEBHOOK_FAILURE_WINDOW_HOURS, default 24
	// PAMRequestRetention is PAM_REQUEST_RETENTION_DAYS (default 400): how
	// long an elevation request is kept once final (its ttl).
	PAMRequestRetention time.Duration

	WebAuthnRPID    string
	WebAuthnRPName  string
	WebAuthnOrigins []string

	// APIURL is where the API is reached from outside (API_URL, default
	// APP_URL): the SSO redirect URI is APIURL + /api/v1/sso/callback.
	APIURL string
	// OutboundAllowCIDRs and OutboundCAFile exempt address ranges from the
	// outbound guard and trust an extra CA (OUTBOUND_ALLOW_CIDRS and
	// OUTBOUND_CA_FILE, aliases WEBHOOK_ALLOW_CIDRS and WEBHOOK_CA_FILE; tests
	// and local runs only).
	OutboundAllowCIDRs []string
	OutboundCAFile     string

	// ChannelURL is the agent channel's WebSocket URL told to agents
	// (CHANNEL_URL; in AWS wss://{apiId}.execute-api.{region}.amazonaws.com/{stage});
	// ChannelEndpoint is its Management API endpoint, which the functions that
	// push to agents post through (CHANNEL_ENDPOINT; in AWS
	// https://{apiId}.execute-api.{region}.amazonaws.com/{stage}). Either unset:
	// no channel (agents poll; nothing is pushed).
	ChannelURL      string
	ChannelEndpoint string

	// CORSOrigins are the browser origins allowed to call the API (none by default).
	CORSOrigins []string
	LogLevel    string

	// RequestTimeout bounds every HTTP request (REQUEST_TIMEOUT_MS); in Lambda
	// the invocation's deadline less a margin bounds it too, whichever is sooner.
	RequestTimeout time.Duration
	// AWSConnectTimeout, AWSResponseTimeout and AWSMaxAttempts bound each AWS
	// call: dial and TLS handshake, wait for response headers, and attempts
	// (first try included) of a failed call. AWSMaxBackoff caps the jittered
	// wait before a retry (AWS_MAX_BACKOFF_MS, 200 ms): the fault-mode test run
	// shortens it, because its emulator throttles at random rather than by load,
	// so waiting longer there tests nothing and only adds wall time.
	AWSConnectTimeout  time.Duration
	AWSResponseTimeout time.Duration
	AWSMaxAttempts     int
	AWSMaxBackoff      time.Duration
}

// Production reports whether this is a deployed production process.
func (c Config) Production() bool { return c.Env == "production" }

// Getenv is the lookup Load reads from; tests pass a map's lookup.
type Getenv func(string) string

// FromEnv loads the configuration from the process environment.
func FromEnv(ctx context.Context) (Config, error) { return Load(ctx, os.Getenv) }

// Load builds a Config from get. Secrets come from the environment or, where
// their *_SECRET_ARN is set, from one Secrets Manager secret per purpose (secrets.go).
func Load(ctx context.Context, get Getenv) (Config, error) {
	c := settings(get)
	if err := c.loadSwitches(get); err != nil {
		return c, err
	}
	if err := c.loadDurations(get); err != nil {
		return c, err
	}
	if err := c.loadSecrets(ctx, get); err != nil {
		return c, err
	}
	return c, nil
}

// settings reads the settings taken as written (names, addresses, lists),
// with their defaults.
func settings(get Getenv) Config {
	c := Config{
		Env:                 def(get("APP_ENV"), "development"),
		Function:            get("GALE_FUNCTION"),
		Version:             def(get("BUILD_VERSION"), Version),
		AppURL:              strings.TrimRight(def(get("APP_URL"), "http://localhost:8080"), "/"),
		Region:              def(get("AWS_REGION"), "us-east-1"),
		Endpoint:            get("AWS_ENDPOINT_URL"),
		Table:               def(get("TABLE_NAME"), "gale"),
		EventsQueueURL:      get("EVENTS_QUEUE_URL"),
		DeliveryQueueURL:    get("DELIVERY_QUEUE_URL"),
		DeliveryDLQURL:      get("DELIVERY_DLQ_URL"),
		EventsDLQURL:        get("EVENTS_DLQ_URL"),
		MailQueueURL:        get("MAIL_QUEUE_URL"),
		MailDLQURL:          get("MAIL_DLQ_URL"),
		EmailFrom:           def(get("EMAIL_FROM"), "no-reply@gale.example.com"),
		PushAPNSAppARN:      get("PUSH_APNS_APP_ARN"),
		PushFCMAppARN:       get("PUSH_FCM_APP_ARN"),
		SystemAdminEmail:    get("SYSTEM_ADMIN_EMAIL"),
		SystemAdminPassword: get("SYSTEM_ADMIN_PASSWORD"),
		WebAuthnRPID:        def(get("WEBAUTHN_RP_ID"), "localhost"),
		WebAuthnRPName:      def(get("WEBAUTHN_RP_NAME"), "Gale"),
		OutboundCAFile:      first(get("OUTBOUND_CA_FILE"), get("WEBHOOK_CA_FILE")),
		LogLevel:            def(get("LOG_LEVEL"), "info"),
		ChannelURL:          get("CHANNEL_URL"),
		ChannelEndpoint:     strings.TrimRight(get("CHANNEL_ENDPOINT"), "/"),
	}
	c.WebAuthnOrigins = list(def(get("WEBAUTHN_ORIGINS"), c.AppURL))
	c.APIURL = strings.TrimRight(def(get("API_URL"), c.AppURL), "/")
	c.OutboundAllowCIDRs = list(first(get("OUTBOUND_ALLOW_CIDRS"), get("WEBHOOK_ALLOW_CIDRS")))
	c.CORSOrigins = list(get("CORS_ALLOWED_ORIGINS"))
	for i, o := range c.CORSOrigins {
		c.CORSOrigins[i] = strings.TrimRight(o, "/")
	}
	return c
}

// loadSwitches reads the on/off settings.
func (c *Config) loadSwitches(get Getenv) error {
	var err error
	for _, b := range []struct {
		key string
		def bool
		out *bool
	}{
		{"ENABLE_REGISTRATION", false, &c.EnableRegistration},
		{"ENABLE_2FA", true, &c.Enable2FA},
		{"PAM_ACTUATOR_ENABLED", false, &c.PAMActuatorEnabled},
	} {
		if *b.out, err = boolean(get, b.key, b.def); err != nil {
			return err
		}
	}
	return nil
}

// loadDurations reads the lifetimes, retentions, timeouts and retry count.
func (c *Config) loadDurations(get Getenv) error {
	var err error
	if c.EnrollmentKeyTTL, err = minutes(get, "ENROLLMENT_KEY_DEFAULT_TTL_MINUTES", 60); err != nil {
		return err
	}
	if c.PAMPendingTTL, err = minutes(get, "PAM_PENDING_TTL_MINUTES", 30); err != nil {
		return err
	}
	if c.AuditRetention, err = days(get, "AUDIT_RETENTION_DAYS", 400); err != nil {
		return err
	}
	if c.WebhookDeliveryRetention, err = days(get, "WEBHOOK_DELIVERY_RETENTION_DAYS", 30); err != nil {
		return err
	}
	if c.PAMRequestRetention, err = days(get, "PAM_REQUEST_RETENTION_DAYS", 400); err != nil {
		return err
	}
	if c.WebhookFailureThreshold, err = count(get, "WEBHOOK_FAILURE_THRESHOLD", 50); err != nil {
		return err
	}
	if c.WebhookFailureWindow, err = hours(get, "WEBHOOK_FAILURE_WINDOW_HOURS", 24); err != nil {
		return err
	}

	if c.RequestTimeout, err = millis(get, "REQUEST_TIMEOUT_MS", 10_000); err != nil {
		return err
	}
	if c.AWSConnectTimeout, err = millis(get, "AWS_CONNECT_TIMEOUT_MS", 1_000); err != nil {
		return err
	}
	// An emulator (one process serving every test) answers slower than AWS.
	respDefault := 2_000
	if c.Endpoint != "" {
		respDefault = 30_000
	}
	if c.AWSResponseTimeout, err = millis(get, "AWS_RESPONSE_TIMEOUT_MS", respDefault); err != nil {
		return err
	}
	if c.AWSMaxAttempts, err = count(get, "AWS_MAX_ATTEMPTS", 3); err != nil {
		return err
	}
	if c.AWSMaxBackoff, err = millis(get, "AWS_MAX_BACKOFF_MS", 200); err != nil {
		return err
	}
	return nil
}

// Version is set at build time with -ldflags "-X .../config.Version=...".
var Version = "dev"

// boolean parses a setting with strconv.ParseBool; a value that does not parse
// stops the process naming the setting rather than silently meaning false.
func boolean(get Getenv, key string, d bool) (bool, error) {
	v := get(key)
	if v == "" {
		return d, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("config: %s must be true or false, got %q", key, v)
	}
	return b, nil
}

func minutes(get Getenv, key string, d int) (time.Duration, error) {
	v := get(key)
	if v == "" {
		return time.Duration(d) * time.Minute, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("config: %s must be a positive whole number of minutes, got %q", key, v)
	}
	return time.Duration(n) * time.Minute, nil
}

func days(get Getenv, key string, d int) (time.Duration, error) {
	n, err := count(get, key, d)
	if err != nil {
		return 0, fmt.Errorf("config: %s must be a positive whole number of days, got %q", key, get(key))
	}
	return time.Duration(n) * 24 * time.Hour, nil
}

func hours(get Getenv, key string, d int) (time.Duration, error) {
	n, err := count(get, key, d)
	if err != nil {
		return 0, fmt.Errorf("config: %s must be a positive whole number of hours, got %q", key, get(key))
	}
	return time.Duration(n) * time.Hour, nil
}

func millis(get Getenv, key string, d int) (time.Duration, error) {
	n, err := count(get, key, d)
	if err != nil {
		return 0, fmt.Errorf("config: %s must be a positive whole number of milliseconds, got %q", key, get(key))
	}
	return time.Duration(n) * time.Millisecond, nil
}

func count(get Getenv, key string, d int) (int, error) {
	v := get(key)
	if v == "" {
		return d, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("config: %s must be a positive whole number, got %q", key, v)
	}
	return n, nil
}

func def(v, d string) string {
	if v == "" {
		return d
	}
	return v
}

func first(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

func list(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
