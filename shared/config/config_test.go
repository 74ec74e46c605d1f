package config

import (
	"context"
	"strings"
	"testing"
	"time"
)

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	return Load(context.Background(), func(k string) string { return env[k] })
}

func TestDefaults(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Env != "development" || c.Table != "gale" || c.EnrollmentKeyTTL != 60*time.Minute || c.PAMPendingTTL != 30*time.Minute ||
		!c.Enable2FA || c.EnableRegistration || c.WebAuthnRPID != "localhost" || c.WebAuthnOrigins[0] != c.AppURL {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestProductionRefusesMissingSecrets(t *testing.T) {
	_, err := load(t, map[string]string{"APP_ENV": "production", "ENROLLMENT_KEY_PEPPER": "p"})
	if err == nil || !strings.Contains(err.Error(), "APP_ENCRYPTION_KEY") {
		t.Fatalf("err = %v", err)
	}
	_, err = load(t, map[string]string{"APP_ENV": "production", "APP_ENCRYPTION_KEY": "short"})
	if err == nil {
		t.Fatal("short encryption key accepted in production")
	}
	_, err = load(t, map[string]string{"APP_ENV": "production", "APP_ENCRYPTION_KEY": strings.Repeat("k", 40),
		"TOKEN_SIGNING_KEY": DevelopmentTokenKey()})
	if err == nil || !strings.Contains(err.Error(), "development token-signing key") {
		t.Fatalf("development token key in production: err = %v", err)
	}
	_, err = load(t, map[string]string{"TOKEN_SIGNING_KEY": "abcd"})
	if err == nil || !strings.Contains(err.Error(), "TOKEN_SIGNING_KEY") {
		t.Fatalf("short token key: err = %v", err)
	}
}

func TestEnrollmentPepperOrder(t *testing.T) {
	long := strings.Repeat("j", 40)
	cases := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"JWT_SECRET": long}, long},
		{map[string]string{"JWT_SECRET": long, "SECRET_ENCRYPTION_KEY": "sek"}, "sek"},
		{map[string]string{"JWT_SECRET": long, "SECRET_ENCRYPTION_KEY": "sek", "APP_ENCRYPTION_KEY": "aek"}, "aek"},
		{map[string]string{"JWT_SECRET": long, "APP_ENCRYPTION_KEY": "aek", "ENROLLMENT_KEY_PEPPER": "pep"}, "pep"},
	}
	for _, c := range cases {
		got, err := load(t, c.env)
		if err != nil {
			t.Fatal(err)
		}
		if string(got.EnrollPepper) != c.want {
			t.Errorf("%v: pepper %q, want %q", c.env, got.EnrollPepper, c.want)
		}
	}
}

func TestNoPepperInProductionFailsWithSpecMessage(t *testing.T) {
	_, err := load(t, map[string]string{"APP_ENV": "production"})
	if err == nil || err.Error() != "No enrollment key pepper configured" {
		t.Fatalf("err = %v", err)
	}
}

// TestRequestRetentionDays: elevation requests are kept 400 days once final
// unless PAM_REQUEST_RETENTION_DAYS says otherwise (whole days, at least 1).
func TestRequestRetentionDays(t *testing.T) {
	c, err := load(t, nil)
	if err != nil || c.PAMRequestRetention != 400*24*time.Hour {
		t.Fatalf("default %v %v", c.PAMRequestRetention, err)
	}
	if c, err = load(t, map[string]string{"PAM_REQUEST_RETENTION_DAYS": "30"}); err != nil || c.PAMRequestRetention != 30*24*time.Hour {
		t.Fatalf("30 days: %v %v", c.PAMRequestRetention, err)
	}
	for _, v := range []string{"0", "-1", "1.5", "ten"} {
		if _, err := load(t, map[string]string{"PAM_REQUEST_RETENTION_DAYS": v}); err == nil || !strings.Contains(err.Error(), "PAM_REQUEST_RETENTION_DAYS") {
			t.Errorf("%q: %v", v, err)
		}
	}
}

func TestBadMinutesAreRefused(t *testing.T) {
	for _, v := range []string{"0", "-5", "ten"} {
		if _, err := load(t, map[string]string{"ENROLLMENT_KEY_DEFAULT_TTL_MINUTES": v}); err == nil {
			t.Errorf("%q accepted", v)
		}
	}
}

func TestListsAreTrimmed(t *testing.T) {
	c, err := load(t, map[string]string{"WEBAUTHN_ORIGINS": " https://a.test , ,https://b.test", "WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32"})
	if err != nil {
		t.Fatal(err)
	}
	if len(c.WebAuthnOrigins) != 2 || c.WebAuthnOrigins[1] != "https://b.test" || len(c.OutboundAllowCIDRs) != 1 {
		t.Fatalf("%v %v", c.WebAuthnOrigins, c.OutboundAllowCIDRs)
	}
}

func TestTimeoutsParseStrictly(t *testing.T) {
	c, err := load(t, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	if c.RequestTimeout != 10*time.Second || c.AWSResponseTimeout != 2*time.Second || c.AWSMaxAttempts != 3 || c.AWSConnectTimeout != time.Second || c.AWSMaxBackoff != 200*time.Millisecond {
		t.Fatalf("defaults: %v %v %v %v %v", c.RequestTimeout, c.AWSResponseTimeout, c.AWSMaxAttempts, c.AWSConnectTimeout, c.AWSMaxBackoff)
	}
	c, err = load(t, map[string]string{"AWS_ENDPOINT_URL": "http://127.0.0.1:5000", "REQUEST_TIMEOUT_MS": "1500"})
	if err != nil || c.AWSResponseTimeout != 30*time.Second || c.RequestTimeout != 1500*time.Millisecond {
		t.Fatalf("emulator: %v %v, %v", c.AWSResponseTimeout, c.RequestTimeout, err)
	}
	for _, k := range []string{"REQUEST_TIMEOUT_MS", "AWS_CONNECT_TIMEOUT_MS", "AWS_RESPONSE_TIMEOUT_MS", "AWS_MAX_ATTEMPTS", "AWS_MAX_BACKOFF_MS"} {
		for _, v := range []string{"10s", "0", "-1", "1.5"} {
			if _, err := load(t, map[string]string{k: v}); err == nil || !strings.Contains(err.Error(), k) {
				t.Fatalf("%s=%q: err = %v, want an error naming the setting", k, v, err)
			}
		}
	}
}

func TestBooleansParseStrictly(t *testing.T) {
	c, err := load(t, map[string]string{"ENABLE_REGISTRATION": "1", "ENABLE_2FA": "FALSE", "PAM_ACTUATOR_ENABLED": "t"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.EnableRegistration || c.Enable2FA || !c.PAMActuatorEnabled {
		t.Fatalf("parsed %v %v %v", c.EnableRegistration, c.Enable2FA, c.PAMActuatorEnabled)
	}
	for _, key := range []string{"ENABLE_REGISTRATION", "ENABLE_2FA", "PAM_ACTUATOR_ENABLED"} {
		_, err := load(t, map[string]string{key: "yes"})
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("%s=yes: err %v, want a refusal naming the setting", key, err)
		}
	}
}

func TestOutboundSettingsAndAliases(t *testing.T) {
	c, err := load(t, map[string]string{"WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32,::1/128", "WEBHOOK_CA_FILE": "/tmp/a.pem"})
	if err != nil || len(c.OutboundAllowCIDRs) != 2 || c.OutboundCAFile != "/tmp/a.pem" {
		t.Fatalf("aliases: %v %q %v", c.OutboundAllowCIDRs, c.OutboundCAFile, err)
	}
	c, err = load(t, map[string]string{"OUTBOUND_ALLOW_CIDRS": "10.0.0.0/8", "WEBHOOK_ALLOW_CIDRS": "127.0.0.1/32",
		"OUTBOUND_CA_FILE": "/tmp/b.pem", "WEBHOOK_CA_FILE": "/tmp/a.pem"})
	if err != nil || len(c.OutboundAllowCIDRs) != 1 || c.OutboundAllowCIDRs[0] != "10.0.0.0/8" || c.OutboundCAFile != "/tmp/b.pem" {
		t.Fatalf("OUTBOUND_ wins: %v %q %v", c.OutboundAllowCIDRs, c.OutboundCAFile, err)
	}
	c, err = load(t, map[string]string{"APP_URL": "https://app.test/"})
	if err != nil || c.APIURL != "https://app.test" {
		t.Fatalf("API_URL default: %q %v", c.APIURL, err)
	}
	c, err = load(t, map[string]string{"APP_URL": "https://app.test", "API_URL": "https://api.test/"})
	if err != nil || c.APIURL != "https://api.test" {
		t.Fatalf("API_URL: %q %v", c.APIURL, err)
	}
}

func TestRetentionDays(t *testing.T) {
	c, err := load(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.AuditRetention != 400*24*time.Hour || c.WebhookDeliveryRetention != 30*24*time.Hour {
		t.Fatalf("retention defaults: audit %v, deliveries %v", c.AuditRetention, c.WebhookDeliveryRetention)
	}
	c, err = load(t, map[string]string{"AUDIT_RETENTION_DAYS": "2555", "WEBHOOK_DELIVERY_RETENTION_DAYS": "7"})
	if err != nil || c.AuditRetention != 2555*24*time.Hour || c.WebhookDeliveryRetention != 7*24*time.Hour {
		t.Fatalf("retention overrides: %v, %v (%v)", c.AuditRetention, c.WebhookDeliveryRetention, err)
	}
	for _, key := range []string{"AUDIT_RETENTION_DAYS", "WEBHOOK_DELIVERY_RETENTION_DAYS"} {
		for _, v := range []string{"0", "-1", "a year", "1.5"} {
			_, err := load(t, map[string]string{key: v})
			if err == nil || !strings.Contains(err.Error(), key+" must be a positive whole number of days") {
				t.Errorf("%s=%q: %v", key, v, err)
			}
		}
	}
}

// The webhook failure policy defaults to 50 failed deliveries over 24 hours;
// a value that is not a positive whole number stops the start.
func TestWebhookFailurePolicy(t *testing.T) {
	c, err := load(t, nil)
	if err != nil || c.WebhookFailureThreshold != 50 || c.WebhookFailureWindow != 24*time.Hour {
		t.Fatalf("defaults: %d, %v (%v)", c.WebhookFailureThreshold, c.WebhookFailureWindow, err)
	}
	c, err = load(t, map[string]string{"WEBHOOK_FAILURE_THRESHOLD": "3", "WEBHOOK_FAILURE_WINDOW_HOURS": "72"})
	if err != nil || c.WebhookFailureThreshold != 3 || c.WebhookFailureWindow != 72*time.Hour {
		t.Fatalf("overrides: %d, %v (%v)", c.WebhookFailureThreshold, c.WebhookFailureWindow, err)
	}
	for key, want := range map[string]string{"WEBHOOK_FAILURE_THRESHOLD": "must be a positive whole number,",
		"WEBHOOK_FAILURE_WINDOW_HOURS": "must be a positive whole number of hours"} {
		for _, v := range []string{"0", "-5", "ten", "1.5", "24h"} {
			if _, err := load(t, map[string]string{key: v}); err == nil || !strings.Contains(err.Error(), key+" "+want) {
				t.Errorf("%s=%q: %v", key, v, err)
			}
		}
	}
}
