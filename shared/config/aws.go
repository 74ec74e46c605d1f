package config

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// AWS returns the SDK configuration. Credentials come from the environment, as
// Lambda provides them (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN); the SDK's full default chain (SSO, STS, IMDS) is not
// linked, which keeps every function binary under its size budget. With an
// Endpoint (moto_server, LocalStack) static test credentials are used when the
// environment has none.
func (c Config) AWS(ctx context.Context) (aws.Config, error) {
	id, secret, token := os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")
	if id == "" || secret == "" {
		if c.Endpoint == "" {
			return aws.Config{}, errors.New("config: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set")
		}
		id, secret, token = "testing", "testing", ""
	}
	cfg := aws.Config{
		Region:      c.Region,
		Credentials: aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider(id, secret, token)),
	}
	if c.Endpoint != "" {
		cfg.BaseEndpoint = aws.String(c.Endpoint)
	}
	c.bound(&cfg)
	traceSDK(&cfg, os.Getenv) // xray.go
	return cfg, nil
}

// bound gives every AWS call timeouts and bounded retries, so a stalled or
// unreachable dependency fails within the request's budget instead of holding
// it: a dial or TLS handshake longer than AWSConnectTimeout, or a wait for
// response headers longer than AWSResponseTimeout, fails the attempt (and
// closes its connection); the SDK retries it on a fresh connection up to
// AWSMaxAttempts in all, with a short backoff (AWSMaxBackoff). The request's own deadline
// (httpapi.Deadline) ends retrying when the budget is spent. Retries are not
// rationed by the SDK's client-side token bucket: attempts are already bounded.
func (c Config) bound(cfg *aws.Config) {
	connect, resp, attempts, backoff := c.AWSConnectTimeout, c.AWSResponseTimeout, c.AWSMaxAttempts, c.AWSMaxBackoff
	if connect <= 0 {
		connect = time.Second
	}
	if resp <= 0 {
		resp = 2 * time.Second
	}
	if attempts <= 0 {
		attempts = 3
	}
	if backoff <= 0 {
		backoff = 200 * time.Millisecond
	}
	cfg.HTTPClient = awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = connect }).
		WithTransportOptions(func(t *http.Transport) {
			t.TLSHandshakeTimeout = connect
			t.ResponseHeaderTimeout = resp
		})
	logRetries := os.Getenv("GALE_AWS_LOG_RETRIES") != ""
	cfg.Retryer = func() aws.Retryer {
		r := retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = attempts
			o.MaxBackoff = backoff
			o.RateLimiter = ratelimit.None
		})
		if logRetries {
			return loggedRetryer{r}
		}
		return r
	}
}

// loggedRetryer writes each error the SDK will retry to stderr. It is a
// diagnostic for test runs (GALE_AWS_LOG_RETRIES=1, set by make test): go test
// shows it with a failing package's output, where a retried write explains an
// unexpected conflict.
type loggedRetryer struct{ aws.Retryer }

func (r loggedRetryer) IsErrorRetryable(err error) bool {
	ok := r.Retryer.IsErrorRetryable(err)
	if ok {
		fmt.Fprintf(os.Stderr, "aws sdk: retrying after: %v\n", err)
	}
	return ok
}
