// Package httpclient builds the HTTP client the sinks share: TLS 1.2+, verification on unless
// asked otherwise, extra certificate authorities from a PEM file, and a request timeout.
package httpclient

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

// New returns a client with a request timeout (0: the sink's defaultTimeout). caFile, when set,
// adds its certificates to the system pool.
func New(insecureSkipVerify bool, caFile string, timeout, defaultTimeout time.Duration) (*http.Client, error) {
	if timeout == 0 {
		timeout = defaultTimeout
	}
	tlsCfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: insecureSkipVerify} //nolint:gosec // opt-in flag
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, fmt.Errorf("CA file: %w", err)
		}
		pool, err := x509.SystemCertPool()
		if err != nil || pool == nil {
			pool = x509.NewCertPool()
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("CA file %s holds no PEM certificate", caFile)
		}
		tlsCfg.RootCAs = pool
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tlsCfg
	return &http.Client{Transport: tr, Timeout: timeout}, nil
}

// ClientFor is the client of a sink at base: it refuses to send credentials (hasCredentials)
// over plain http unless allowPlain (--allow-plain-http-credentials, CheckPlainHTTP), and has
// New's TLS settings and timeout.
func ClientFor(base *url.URL, hasCredentials, allowPlain, insecureSkipVerify bool, caFile string,
	timeout, defaultTimeout time.Duration) (*http.Client, error) {
	if err := CheckPlainHTTP(base, hasCredentials, allowPlain, "--allow-plain-http-credentials"); err != nil {
		return nil, err
	}
	return New(insecureSkipVerify, caFile, timeout, defaultTimeout)
}

// BaseURL is u without credentials, query, fragment and trailing slash: the base that request
// paths are joined to.
func BaseURL(u *url.URL) *url.URL {
	base := *u
	base.User, base.RawQuery, base.Fragment = nil, "", ""
	base.Path = strings.TrimSuffix(base.Path, "/")
	return &base
}
