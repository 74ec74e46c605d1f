package outbound

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"time"
)

// NewHTTPClient is the client of every outbound request: it dials through
// the guard (so every address dialled is checked after DNS), uses no proxy,
// follows no redirect, gives up after timeout, and trusts the system roots plus
// caFile's PEM bundle when set (OUTBOUND_CA_FILE; tests and local runs only).
func NewHTTPClient(g *Guard, caFile string, timeout time.Duration) (*http.Client, error) {
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("outbound: OUTBOUND_CA_FILE: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("outbound: OUTBOUND_CA_FILE %s holds no certificate", caFile)
		}
		tlsCfg.RootCAs = pool
	}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           g.DialContext,
		TLSClientConfig:       tlsCfg,
		ForceAttemptHTTP2:     true,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
	}
	return &http.Client{
		Transport: checked{g: g, next: tr},
		Timeout:   timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}, nil
}

// checked holds every request to the URL rules (https, host name and literal
// address rules) before it is sent, whatever produced the URL (a webhook, an
// endpoint an identity provider's discovery document named); the dialer then
// checks the addresses.
type checked struct {
	g    *Guard
	next http.RoundTripper
}

func (c checked) RoundTrip(r *http.Request) (*http.Response, error) {
	if _, err := c.g.parse(r.URL.String()); err != nil {
		if r.Body != nil {
			_ = r.Body.Close()
		}
		return nil, &UnsafeError{Addr: r.URL.Redacted()}
	}
	return c.next.RoundTrip(r)
}
